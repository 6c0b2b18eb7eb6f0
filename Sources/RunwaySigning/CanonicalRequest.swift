#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Signing  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif

/// The text a request's HMAC signature covers, built the same way by the signing client and by
/// ``SignatureVerifier`` on the server.
///
/// Eight lines, joined by `\n` (no line feed at the end):
/// ```
/// RUNWAY-HMAC-SHA256
/// GET                                  method, upper-case
/// /v1/listings/rent                    path, each segment re-encoded per RFC 3986
/// city=Shanghai&page=2                 query and form parameters, sorted, RFC 3986-encoded
/// e3b0c442...b855                      SHA-256 of the body, lower-case hex
/// 1763772000                           timestamp, Unix seconds
/// 9f1c...                              nonce
/// 2026-11                              key ID, empty when none
/// ```
/// (A parameter line that does not decode exactly is `?` and the query as sent, followed for a
/// form body by the body in base64 on a line of its own.) Reordering query parameters does not
/// change it; changing any value, the method, the path, the body, the timestamp or the nonce does.
/// <doc:SignedRequestFormat> specifies it exactly, for servers in other languages.
public struct CanonicalRequest: Sendable, Equatable {
    /// The first line, naming the algorithm.
    public static let algorithm = "RUNWAY-HMAC-SHA256"

    /// The upper-case method.
    public var method: String
    /// The path, normalised.
    public var path: String
    /// `RequestParameters.canonicalForm` of the query and form parameters.
    public var parameters: String
    /// The SHA-256 of the body, lower-case hex.
    public var bodyHash: String
    /// Unix seconds.
    public var timestamp: String
    /// The one-time nonce.
    public var nonce: String
    /// The key ID, or empty.
    public var keyID: String

    /// Builds the canonical form from the raw parts of a request, as a server receives them.
    /// - Parameters:
    ///   - method: The method token.
    ///   - percentEncodedPath: The path as on the wire (no query).
    ///   - percentEncodedQuery: The query as on the wire, without `?`.
    ///   - contentType: The `Content-Type` header (form bodies contribute parameters).
    ///   - body: The body bytes as received.
    ///   - timestamp: The timestamp header's value (Unix seconds).
    ///   - nonce: The nonce header's value.
    ///   - keyID: The key ID header's value, or empty when none was sent.
    public init(
        method: String, percentEncodedPath: String, percentEncodedQuery: String?, contentType: String?,
        body: Data?, timestamp: String, nonce: String, keyID: String = ""
    ) {
        // Methods are upper-case tokens as a rule: only a lower-case one is copied.
        self.method = method.utf8.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") } ? method.uppercased() : method
        self.path = Self.normalise(path: percentEncodedPath)
        self.parameters = Self.signedParameters(percentEncodedQuery: percentEncodedQuery, contentType: contentType, body: body)
        self.bodyHash = body.map { $0.isEmpty ? Self.emptyBodyHash : Self.hexSHA256($0) } ?? Self.emptyBodyHash
        self.timestamp = timestamp
        self.nonce = nonce
        self.keyID = keyID
    }

    /// Builds the canonical form of a client request. A streamed body (`Request.bodyStream`)
    /// contributes its declared `RequestBodyStream.sha256` as the body hash (the signer checks
    /// it is there, see ``SigningInterceptor``).
    public init(_ request: Request, timestamp: String, nonce: String, keyID: String = "") {
        self.init(
            method: request.method.rawValue, percentEncodedPath: request.url.path(percentEncoded: true),
            percentEncodedQuery: request.url.query(percentEncoded: true), contentType: Self.contentTypeAsSent(request),
            body: request.body, timestamp: timestamp, nonce: nonce, keyID: keyID)
        if let digest = request.bodyStream?.sha256 { bodyHash = digest.hexString }
    }

    /// The request's `Content-Type` as the server receives it: without the spaces and tabs around
    /// the value, which HTTP does not count as part of it (RFC 9110 §5.5) and servers strip, so the
    /// signer decides "form or not" on the value the verifier sees.
    static func contentTypeAsSent(_ request: Request) -> String? {
        request.headers["Content-Type"]?.trimmingSpacesAndTabs()
    }

    /// The text that is signed.
    public var text: String {
        String(decoding: utf8Text, as: UTF8.self)
    }

    /// ``text`` as UTF-8, written straight into one buffer: what the signer hashes.
    var utf8Text: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            Self.algorithm.utf8.count + method.utf8.count + path.utf8.count + parameters.utf8.count + bodyHash.utf8.count
                + timestamp.utf8.count + nonce.utf8.count + keyID.utf8.count + 7)
        func line(_ text: String) {
            bytes.append(UInt8(ascii: "\n"))
            bytes += text.utf8
        }
        bytes += Self.algorithm.utf8
        line(method)
        line(path)
        line(parameters)
        line(bodyHash)
        line(timestamp)
        line(nonce)
        line(keyID)
        return bytes
    }

    /// The SHA-256 of no bytes, lower-case hex: the body hash of every request without a body.
    static let emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// What a signature covers of the parameters: their ``RequestParameters/canonicalForm``, or,
    /// when they do not decode exactly (a malformed escape, bytes that are not UTF-8: two
    /// different queries could share a canonical form), `?`, the query as sent, and a form
    /// body's base64 — never a canonical form (which holds no `?`), and one per request.
    static func signedParameters(percentEncodedQuery: String?, contentType: String?, body: Data?) -> String {
        // Without form fields (the rule `RequestParameters` reads them by), a query that already
        // is canonical (none, or sorted unreserved `name=value` pieces, as API managers build
        // them) is its own canonical form.
        if body?.isEmpty ?? true || !(contentType.map(RequestParameters.isForm) ?? false) {
            guard let percentEncodedQuery else { return "" }
            if RequestParameters.isCanonical(Substring(percentEncodedQuery)) { return percentEncodedQuery }
        }
        let parameters = RequestParameters(percentEncodedQuery: percentEncodedQuery, contentType: contentType, body: body)
        if parameters.isExactlyDecoded { return parameters.canonicalForm }
        let form = contentType.map { $0.lowercased().hasPrefix("application/x-www-form-urlencoded") } == true
        return "?" + (percentEncodedQuery ?? "") + (form ? "\n" + (body ?? Data()).base64EncodedString() : "")
    }

    /// Removes `.` and `..` segments (RFC 3986 §5.2.4, as libcurl does before sending, so the
    /// signer and the server see the same path), then decodes each segment and re-encodes it per
    /// RFC 3986, so `/a%7eb` and `/a~b` agree; a segment that does not decode exactly (a
    /// malformed escape, bytes that are not UTF-8) stays as sent, which no re-encoded segment
    /// can equal. An empty path is `/`.
    static func normalise(path: String) -> String {
        guard !path.isEmpty else { return "/" }
        if isNormal(path) { return path }
        // At every `/` byte: a split by `Character` would keep a `/` joined to a combining mark
        // next to it (`/\u{301}`) in its segment, where it would be signed as `%2F`.
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
        var kept: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if segment == "." || segment == ".." {
                if segment == "..", kept.count > 1 { kept.removeLast() }
                if isLast { kept.append("") }
                continue
            }
            kept.append(segment)
        }
        return kept.map { segment in exactlyDecoded(segment).map(RequestParameters.encode) ?? String(segment) }
            .joined(separator: "/")
    }

    /// Whether `path` is its own normal form: only unreserved characters (RFC 3986) and `/`, and
    /// no `.` or `..` segment — what most paths are, checked without building any string.
    static func isNormal(_ path: String) -> Bool {
        var dots = 0  // dots since the last `/`, -1 once the segment has another character
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "/"):
                if dots == 1 || dots == 2 { return false }
                dots = 0
            case UInt8(ascii: "."):
                if dots >= 0 { dots += 1 }
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                dots = -1
            default:
                return false
            }
        }
        return dots != 1 && dots != 2
    }

    /// `%XX` escapes decoded, when every `%` starts one and the bytes are UTF-8; else `nil`.
    private static func exactlyDecoded(_ segment: Substring) -> String? {
        var exact = true
        let decoded = RequestParameters.percentDecode(segment, plusIsSpace: false, exact: &exact)
        return exact ? decoded : nil
    }

    static func hexSHA256(_ data: Data) -> String {
        SHA256.hash(data: data).hexString
    }
}

extension ContiguousBytes {
    /// Lower-case hexadecimal.
    var hexString: String {
        // The bytes in place (iterating a digest as a sequence copies it first), written straight
        // into the string's storage: one allocation, no intermediate array.
        withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { digits in
                for (index, byte) in bytes.enumerated() {
                    digits[2 * index] = hexDigit(byte >> 4)
                    digits[2 * index + 1] = hexDigit(byte & 0x0F)
                }
                return bytes.count * 2
            }
        }
    }
}

/// The lower-case hexadecimal digit of a value 0–15, as ASCII.
func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
}

#endif
