import Crypto
import Foundation
import Runway

/// Identifies one cached response: service, environment, API, method, URL and canonical
/// parameters; on disk, their SHA-256.
///
/// Parameters are in canonical order (``RequestParameters/canonicalForm``), so `?a=1&b=2` and
/// `?b=2&a=1` share an entry; a non-form body contributes its SHA-256. Headers (and so any
/// signature or nonce) are not part of the key.
///
/// The memory cache compares and hashes the key's text directly; the digest is computed only
/// when the disk is used, so a memory hit costs no SHA-256.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The fields, NUL-separated (none of them can contain an unescaped NUL).
    private let material: String
    /// Digest bytes given as they are (keys made from bytes); `nil` for keys of requests.
    private let given: Data?

    /// The 32 digest bytes: the SHA-256 of the key's fields.
    public var bytes: Data {
        given ?? Data(SHA256.hash(data: Array(material.utf8)))
    }

    init(bytes: Data) {
        material = ""
        given = bytes
    }

    /// The key of `request` in `environment`, for the API and service named in `context`.
    public init(_ request: Request, context: RequestContext, environment: String) {
        let url = request.url.absoluteString
        // The URL up to its query (or fragment), and the query, read from the string itself:
        // cheaper than URL's component accessors, and the same for the same request.
        let utf8 = url.utf8
        let queryMark = utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? utf8.endIndex
        let base = url[..<queryMark]
        var query: Substring = ""
        if queryMark < utf8.endIndex, utf8[queryMark] == UInt8(ascii: "?") {
            let start = utf8.index(after: queryMark)
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
            query = url[start..<end]
        }
        let body = request.body.flatMap { $0.isEmpty ? nil : $0 }
        let isForm = body != nil && (request.headers["Content-Type"].map(Self.isFormContentType) ?? false)
        let canonical = isForm ? RequestParameters(request).canonicalForm : RequestParameters.canonicalForm(percentEncodedQuery: query)

        var text = context.serviceID ?? ""
        for part in [environment, context.apiName ?? "", request.method.rawValue, String(base), canonical] {
            text += "\u{0}"
            text += part
        }
        if let body, !isForm {
            text += "\u{0}"
            for byte in SHA256.hash(data: body) {
                text.unicodeScalars.append(Unicode.Scalar(Self.hex[Int(byte >> 4)]))
                text.unicodeScalars.append(Unicode.Scalar(Self.hex[Int(byte & 0x0F)]))
            }
        }
        material = text
        given = nil
    }

    /// Lower-case hex of ``bytes``.
    public var description: String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func isFormContentType(_ value: String) -> Bool {
        value.lowercased().hasPrefix("application/x-www-form-urlencoded")
    }
}
