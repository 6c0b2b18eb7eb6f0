#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Cache  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif

/// Identifies one cached response: service, environment, API, method, URL and canonical
/// parameters; on disk, their SHA-256.
///
/// Parameters are in canonical order (`RequestParameters.canonicalForm`), so `?a=1&b=2` and
/// `?b=2&a=1` share an entry (not `?a=1&a=2` and `?a=2&a=1`: a name's values keep their
/// order); a form body's fields are keyed apart from the query's, and any
/// other body (or a form that does not decode exactly) contributes its SHA-256. Headers (and so any
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
    /// The hash of `material` and `given`, computed once (a key is hashed more than once: a
    /// lookup, then a store or a refresh claim).
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
            && lhs.material == rhs.material
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// The key of `request` in `environment`, for the API and service named in `context`, and
    /// for the caller `credentials` says (see ``ResponseCache``, "Whose response").
    public init(_ request: Request, context: RequestContext, environment: String, credentials: String? = nil) {
        let url = request.url.absoluteString
        let body = request.body.flatMap { $0.isEmpty ? nil : $0 }
        let isForm = body != nil && (request.headers["Content-Type"].map(Self.isFormContentType) ?? false)
        // The URL up to its query (or fragment), and the query, read from its text: cheaper
        // than URL's component accessors, and the same for the same request.
        let (mark, queryEnd) = url.withUTF8Bytes { bytes -> (Int, Int) in
            var mark = 0
            while mark < bytes.count, bytes[mark] != UInt8(ascii: "?"), bytes[mark] != UInt8(ascii: "#") { mark += 1 }
            guard mark < bytes.count, bytes[mark] == UInt8(ascii: "?") else { return (mark, mark) }
            var end = mark + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "#") { end += 1 }
            return (mark, end)
        }
        let utf8 = url.utf8
        let query: Substring =
            queryEnd > mark ? url[utf8.index(utf8.startIndex, offsetBy: mark + 1)..<utf8.index(utf8.startIndex, offsetBy: queryEnd)] : ""
        // A canonical query is used as it is (API managers build them so); others are decoded.
        let canonical: String? = RequestParameters.isCanonical(query) ? nil : RequestParameters.canonicalForm(percentEncodedQuery: query)
        // A form's fields in canonical order, apart from the query's (a server reads them apart:
        // `?a=1` with `b=2` is not `?b=2` with `a=1`). A form that does not decode exactly
        // (`%FF` and `%FE` both become U+FFFD), or has no fields, is keyed by its bytes, as any
        // other body.
        var form: String?
        if let body, isForm {
            let fields = RequestParameters(percentEncodedQuery: nil, contentType: request.headers["Content-Type"], body: body)
            // No fields: not a form by RequestParameters' reading of the type (or an empty one).
            form = fields.isExactlyDecoded && !fields.isEmpty ? fields.canonicalForm : nil
        }
        // The NUL-separated fields, in one allocation with room for the credentials' mark and a
        // body digest.
        let service = context.serviceID?.rawValue ?? ""
        let api = context.apiName ?? ""
        let method = request.method.rawValue
        var text: [UInt8] = []
        text.reserveCapacity(
            service.utf8.count + environment.utf8.count + api.utf8.count + method.utf8.count + url.utf8.count
                + (canonical?.utf8.count ?? 0) + (form?.utf8.count ?? 0) + 72)
        Self.appendField(service, to: &text)
        Self.appendField(environment, to: &text)
        Self.appendField(api, to: &text)
        Self.appendField(method, to: &text)
        url.withUTF8Bytes { bytes in
            text.append(bytes, 0..<mark)
            text.append(0)
            if canonical == nil, queryEnd > mark { text.append(bytes, mark + 1..<queryEnd) }
        }
        if let canonical { text += canonical.utf8 }
        if let credentials {
            // Marked apart from the body's digest: a caller's key never equals an anonymous one.
            text.append(0)
            text.append(1)
            text += credentials.utf8
        }
        if let form {
            // Marked apart from a body's digest, which is hex only.
            text.append(0)
            text.append(2)
            text += form.utf8
        } else if let body {
            text.append(0)
            Self.appendHex(SHA256.hash(data: body), to: &text)
        }
        material = text
        given = nil
        hash = Self.hash(material: text, given: nil)
    }

    /// Appends a field's UTF-8 and its NUL separator.
    private static func appendField(_ field: String, to text: inout [UInt8]) {
        text += field.utf8
        text.append(0)
    }

    /// Lower-case hex of ``bytes``.
    public var description: String {
        var text: [UInt8] = []
        Self.appendHex(bytes, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the lower-case hex of `bytes`.
    private static func appendHex(_ bytes: some Sequence<UInt8>, to text: inout [UInt8]) {
        for byte in bytes {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func isFormContentType(_ value: String) -> Bool {
        value.lowercased().hasPrefix("application/x-www-form-urlencoded")
    }
}

#endif
