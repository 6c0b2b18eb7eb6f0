import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a response to an API must look like: status, content type, and JSON shape.
///
/// A response that breaks the rule fails with `RunwayError.Code.responseInvalid`; the error's
/// `RunwayError.response` keeps the raw response and `RunwayError.field` names the JSON path
/// at fault (`items[3].price`), `status` or `Content-Type`.
public struct ResponseRule: Sendable {
    /// The accepted status codes.
    public var statuses: [ClosedRange<Int>]
    /// The accepted media type (`application/json`, or `application/*`), ignoring parameters
    /// such as `charset`; `nil` accepts any.
    public var contentType: String?
    /// The shape the body must have as JSON; `nil` does not parse the body. Not checked for a
    /// streamed body (`Response.bodyStream`): status and content type are.
    public var json: JSONShape?

    /// Creates a rule accepting one range of statuses (2xx by default).
    public init(status: ClosedRange<Int> = 200...299, contentType: String? = nil, json: JSONShape? = nil) {
        self.init(statuses: [status], contentType: contentType, json: json)
    }

    /// Creates a rule accepting several ranges of statuses.
    public init(statuses: [ClosedRange<Int>], contentType: String? = nil, json: JSONShape? = nil) {
        self.statuses = statuses
        self.contentType = contentType
        self.json = json
    }

    /// Rejects configurations that could never pass.
    func check() throws(RunwayError) {
        if statuses.isEmpty || statuses.contains(where: { $0.lowerBound < 100 || $0.upperBound > 599 }) {
            throw RunwayError(.configuration, "response statuses must be non-empty ranges within 100...599")
        }
        if let contentType {
            let parts = contentType.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count != 2 || parts.contains(where: \.isEmpty) || parts[0] == "*" {
                throw RunwayError(.configuration, "content type \"\(contentType)\" is not type/subtype")
            }
        }
    }

    /// Throws `.responseInvalid` when `response` breaks the rule.
    func validate(_ response: Response) throws(RunwayError) {
        guard statuses.contains(where: { $0.contains(response.status) }) else {
            throw RunwayError(
                .responseInvalid, "status \(response.status) is not accepted", field: "status", response: response)
        }
        if let contentType, !Self.mediaType(of: response.headers["Content-Type"] ?? "", matches: contentType) {
            let received = String(Substring(Self.mediaType(of: response.headers["Content-Type"] ?? ""))).lowercased()
            throw RunwayError(
                .responseInvalid, "content type \"\(received)\" is not \(contentType)", field: "Content-Type", response: response)
        }
        // A streamed body is the reader's to read: its JSON shape cannot be checked here.
        if let json, response.bodyStream == nil {
            guard let value = JSONValue.parse(response.body) else {
                throw RunwayError(.responseInvalid, "body is not JSON", field: "$", response: response)
            }
            if let (path, reason) = json.mismatch(in: value, path: "") {
                throw RunwayError(.responseInvalid, "\(path) \(reason)", field: path, response: response)
            }
        }
    }

    /// The media type of a `Content-Type` value: what comes before any parameter, without the
    /// spaces around it.
    static func mediaType(of value: String) -> Substring.UTF8View {
        let utf8 = value.utf8
        var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
        var start = utf8.startIndex
        while start < end, utf8[start] == UInt8(ascii: " ") || utf8[start] == UInt8(ascii: "\t") { start = utf8.index(after: start) }
        while end > start {
            let last = utf8.index(before: end)
            guard utf8[last] == UInt8(ascii: " ") || utf8[last] == UInt8(ascii: "\t") else { break }
            end = last
        }
        return value[start..<end].utf8
    }

    /// Whether a received media type is `expected`, or of its type when `expected` is `type/*`,
    /// ignoring ASCII case; byte by byte, as this runs for every response.
    static func mediaType(of received: String, matches expected: String) -> Bool {
        let received = mediaType(of: received)
        var expected = Substring(expected).utf8
        let wildcard = expected.count >= 2 && expected.last == UInt8(ascii: "*")
        if wildcard { expected = expected.dropLast() }  // `type/`: a prefix
        guard wildcard ? received.count >= expected.count : received.count == expected.count else { return false }
        return zip(received, expected).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
        }
    }
}
