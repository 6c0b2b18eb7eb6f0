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
    /// such as `charset`; `nil` accepts any. Given with a parameter or a blank of its own
    /// (`application/json; charset=utf-8`), which no response could match, the rule is refused
    /// when it is made.
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
            // A response's media type is compared without its parameters and blanks: a rule
            // holding either would refuse every response.
            if !parts.allSatisfy({ $0.utf8.allSatisfy(HTTPHeaders.isTokenByte) }) {
                throw RunwayError(
                    .configuration,
                    "content type \"\(contentType)\" is not a bare type/subtype: a response's media type is compared "
                        + "without parameters (such as charset) or blanks, so give the rule none")
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
            let received = Self.mediaType(of: response.headers["Content-Type"] ?? "").lowercased()
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
    package static func mediaType(of value: String) -> String {
        value.withUTF8Bytes { bytes in
            String(decoding: mediaTypeRange(in: bytes).map { bytes[$0] }, as: UTF8.self)
        }
    }

    /// Where the media type is in a `Content-Type` value's bytes (see ``mediaType(of:)``).
    private static func mediaTypeRange(in bytes: Span<UInt8>) -> Range<Int> {
        var end = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: ";") { end += 1 }
        var start = 0
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// Whether a received media type is `expected`, or of its type when `expected` is `type/*`,
    /// ignoring ASCII case; byte by byte over spans, as this runs for every response.
    package static func mediaType(of received: String, matches expected: String) -> Bool {
        received.withUTF8Bytes { bytes in
            let range = mediaTypeRange(in: bytes)
            return expected.withUTF8Bytes { wanted in
                var count = wanted.count
                // `type/*`: the received type starts with `type/`.
                let wildcard = count >= 2 && wanted[count - 1] == UInt8(ascii: "*")
                if wildcard { count -= 1 }
                guard wildcard ? range.count >= count : range.count == count else { return false }
                for offset in 0..<count {
                    let (a, b) = (bytes[range.lowerBound + offset], wanted[offset])
                    guard a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z")) else {
                        return false
                    }
                }
                return true
            }
        }
    }
}
