#if Cache  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif
import Foundation
import Runway

/// Identifies one cached response: service, environment, API, method, URL and canonical
/// parameters; on disk, their SHA-256.
///
/// Parameters are in canonical order (`RequestParameters.canonicalForm`), so `?a=1&b=2` and
/// `?b=2&a=1` share an entry; a non-form body contributes its SHA-256. Headers (and so any
/// signature or nonce) are not part of the key, except the caller's credentials.
///
/// The memory cache compares and hashes the key's bytes directly; the digest is computed only
/// when the disk is used, so a memory hit costs no SHA-256.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The fields' UTF-8, NUL-separated (none of them can contain an unescaped NUL). Bytes, not
    /// a `String`: built with one allocation and hashed in one piece.
    private let material: [UInt8]
    /// Digest bytes given as they are (keys made from bytes); `nil` for keys of requests.
    private let given: Data?
    /// The hash of `material` and `given`, computed once (a key is looked up more than once
    /// when ``KeyMemo`` hands it out again).
    private let hash: Int

    /// The 32 digest bytes: the SHA-256 of the key's fields.
    public var bytes: Data {
        given ?? Data(SHA256.hash(data: material))
    }

    init(bytes: Data) {
        material = []
        given = bytes
        hash = Self.hash(material: [], given: bytes)
    }

    private static func hash(material: [UInt8], given: Data?) -> Int {
        var hasher = Hasher()
        material.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(given)
        return hasher.finalize()
    }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.hash == rhs.hash && lhs.given == rhs.given
            && lhs.material.withUnsafeBytes { a in rhs.material.withUnsafeBytes { b in ByteEquality.equal(a, b) } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// The key of `request` in `environment`, for the API and service named in `context`, and
    /// for the caller `credentials` says (see ``ResponseCache``, "Whose response").
    public init(_ request: Request, context: RequestContext, environment: String, credentials: String? = nil) {
        var url = request.url.absoluteString
        let body = request.body.flatMap { $0.isEmpty ? nil : $0 }
        let isForm = body != nil && (request.headers["Content-Type"].map(Self.isFormContentType) ?? false)
        // The URL up to its query (or fragment), and the query, read from its bytes: cheaper
        // than URL's component accessors, and the same for the same request.
        let (queryMark, queryEnd) = url.withUTF8 { bytes -> (Int, Int) in
            var mark = 0
            while mark < bytes.count, bytes[mark] != UInt8(ascii: "?"), bytes[mark] != UInt8(ascii: "#") { mark += 1 }
            guard mark < bytes.count, bytes[mark] == UInt8(ascii: "?") else { return (mark, mark) }
            var end = mark + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "#") { end += 1 }
            return (mark, end)
        }
        var text: [UInt8] = []
        Self.writeMaterial(
            to: &text, service: context.serviceID?.rawValue ?? "", environment: environment, api: context.apiName ?? "",
            method: request.method.rawValue, url: &url, queryMark: queryMark, queryEnd: queryEnd
        ) { query in
            // A canonical query is used as it is (API managers build them so, and say so);
            // others are decoded.
            if isForm { return RequestParameters(request).canonicalForm }
            if request.hasCanonicalQuery || RequestParameters.isCanonical(utf8: query) { return nil }
            return RequestParameters.canonicalForm(percentEncodedQuery: Substring(String(decoding: query, as: UTF8.self)))
        }
        if let credentials {
            // Marked apart from the body's digest: a caller's key never equals an anonymous one.
            text.append(0)
            text.append(1)
            var credentials = credentials
            credentials.withUTF8 { text.append(contentsOf: $0) }
        }
        if let body, !isForm {
            text.append(0)
            for byte in SHA256.hash(data: body) {
                text.append(Self.hex[Int(byte >> 4)])
                text.append(Self.hex[Int(byte & 0x0F)])
            }
        }
        material = text
        given = nil
        hash = Self.hash(material: text, given: nil)
    }

    /// Writes the NUL-separated fields into `text` (one allocation: the fields, the separators
    /// and room for a body digest). `decoded` gives the canonical query when the URL's own
    /// (passed to it) is not. Copies come from contiguous UTF-8 (a view's `append(contentsOf:)`
    /// goes byte by byte), into an `inout` buffer (a captured one is checked at run time).
    private static func writeMaterial(
        to text: inout [UInt8], service: String, environment: String, api: String, method: String, url: inout String,
        queryMark: Int, queryEnd: Int, decoded: (UnsafeBufferPointer<UInt8>) -> String?
    ) {
        url.withUTF8 { bytes in
            let base = UnsafeBufferPointer(rebasing: bytes[..<queryMark])
            let query = UnsafeBufferPointer(rebasing: bytes[(queryEnd > queryMark ? queryMark + 1 : queryMark)..<queryEnd])
            var canonical = decoded(query)
            text.reserveCapacity(
                service.utf8.count + environment.utf8.count + api.utf8.count + method.utf8.count + base.count
                    + (canonical?.utf8.count ?? query.count) + 70)
            appendUTF8(service, to: &text)
            text.append(0)
            appendUTF8(environment, to: &text)
            text.append(0)
            appendUTF8(api, to: &text)
            text.append(0)
            appendUTF8(method, to: &text)
            text.append(0)
            text.append(contentsOf: base)
            text.append(0)
            if canonical != nil {
                canonical!.withUTF8 { text.append(contentsOf: $0) }
            } else {
                text.append(contentsOf: query)
            }
        }
    }

    private static func appendUTF8(_ field: String, to text: inout [UInt8]) {
        var field = field
        field.withUTF8 { text.append(contentsOf: $0) }
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
