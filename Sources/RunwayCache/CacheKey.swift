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
        var url = request.url.absoluteString
        // The URL up to its query (or fragment), and the query, read from the string itself:
        // cheaper than URL's component accessors, and the same for the same request.
        let (queryMark, queryEnd) = url.withUTF8 { bytes -> (Int, Int) in
            var mark = 0
            while mark < bytes.count, bytes[mark] != UInt8(ascii: "?"), bytes[mark] != UInt8(ascii: "#") { mark += 1 }
            guard mark < bytes.count, bytes[mark] == UInt8(ascii: "?") else { return (mark, mark) }
            var end = mark + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "#") { end += 1 }
            return (mark, end)
        }
        let utf8 = url.utf8
        let base = url[..<utf8.index(utf8.startIndex, offsetBy: queryMark)]
        let query =
            queryEnd > queryMark
            ? url[utf8.index(utf8.startIndex, offsetBy: queryMark + 1)..<utf8.index(utf8.startIndex, offsetBy: queryEnd)] : ""
        let body = request.body.flatMap { $0.isEmpty ? nil : $0 }
        let isForm = body != nil && (request.headers["Content-Type"].map(Self.isFormContentType) ?? false)
        // A canonical query is used as it is (API managers build them so); others are decoded.
        let canonical: Substring =
            !isForm && RequestParameters.isCanonical(query)
            ? query : Substring(isForm ? RequestParameters(request).canonicalForm : RequestParameters.canonicalForm(percentEncodedQuery: query))

        let service = context.serviceID ?? "", api = context.apiName ?? "", method = request.method.rawValue
        var text = ""
        // One allocation: the fields, five separators and a body digest's 64 hex digits.
        text.reserveCapacity(
            service.utf8.count + environment.utf8.count + api.utf8.count + method.utf8.count + base.utf8.count
                + canonical.utf8.count + 70)
        text += service
        text += "\u{0}"
        text += environment
        text += "\u{0}"
        text += api
        text += "\u{0}"
        text += method
        text += "\u{0}"
        text += base
        text += "\u{0}"
        text += canonical
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
