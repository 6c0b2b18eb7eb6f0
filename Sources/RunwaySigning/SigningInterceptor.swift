#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Signing  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Signs every request so the server can tell it comes from an authorised app, unchanged.
///
/// Each pass through the interceptor signs afresh: a new timestamp and a new nonce, replacing
/// any signature headers already present.
///
/// ## Position
/// After validation and the cache (a cache hit needs no signature, and the per-request nonce
/// must not reach the cache key), **after retry** (each attempt is re-signed with a fresh nonce,
/// so the server's replay check does not reject the retry) and after compression (the body
/// hash covers the bytes sent); before the DNS bypass. Logging sits further out, so logs show
/// the request as the app built it; ``SigningHeaders/all`` are redacted should a logger see them.
/// ```swift
/// let signing = try SigningInterceptor.signing(secret: secret, keyID: "2026-11")
/// let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
///     signing
/// }
/// ```
public struct SigningInterceptor: PerAttemptInterceptor {
    /// How requests are signed.
    public let scheme: SigningScheme
    /// Where the signature travels.
    public let headers: SigningHeaders

    /// The HMAC schemes' key (the caller's own, for a third party), keyed once.
    private let mac: KeyedMAC?
    /// `headers.all`, made once.
    private let names: [String]

    /// Creates a signing interceptor.
    public init(_ scheme: SigningScheme, headers: SigningHeaders = SigningHeaders()) {
        self.scheme = scheme
        self.headers = headers
        names = headers.all
        switch scheme.kind {
        case .hmac(let key, _): mac = KeyedMAC(key: key)
        case .thirdParty(let callerKey, _): mac = KeyedMAC(key: callerKey)
        case .saltedHash: mac = nil
        }
    }

    public var name: String { "signing" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await next(try sign(request, apiName: context.apiName), context)
    }

    /// Returns `request` with signature headers, as the interceptor sends it.
    /// - Parameters:
    ///   - request: The request to sign; signature headers it already carries are replaced.
    ///   - apiName: The API name (required by the salted-hash scheme).
    ///   - now: The signing time.
    /// - Throws: `RunwayError` `.invalidRequest` when the salted-hash scheme has no API name;
    ///   `.configuration` for a streamed body (`Request.bodyStream`) the scheme cannot sign
    ///   without reading it: a form, or, under an HMAC scheme, one without a declared
    ///   `RequestBodyStream.sha256`.
    public func sign(_ request: Request, apiName: String?, now: Date = Date()) throws(RunwayError) -> Request {
        try checkSignable(request)
        var signed = request
        // Signature fields already there go in one pass; the new ones are appended after the rest.
        signed.headers.removeAll { field in names.contains { field.name.caseInsensitiveEquals($0) } }
        signed.headers.reserveCapacity(signed.headers.count + 4)
        switch scheme.kind {
        case .hmac(let key, let keyID):
            let (timestamp, nonce) = (Self.timestamp(now), Self.makeNonce())
            let canonical = CanonicalRequest(signed, timestamp: timestamp, nonce: nonce, keyID: keyID)
            signed.headers.add(name: headers.timestamp, value: timestamp)
            signed.headers.add(name: headers.nonce, value: nonce)
            if !keyID.isEmpty { signed.headers.add(name: headers.keyID, value: keyID) }
            signed.headers.add(name: headers.signature, value: code(for: canonical, key: key))
        case .saltedHash(let secret, let salt, let hash):
            guard let apiName, !apiName.isEmpty else {
                throw RunwayError(.invalidRequest, "the salted-hash signing scheme needs the call's API name")
            }
            let parameters = CanonicalRequest.signedParameters(
                percentEncodedQuery: signed.url.query(percentEncoded: true), contentType: CanonicalRequest.contentTypeAsSent(signed),
                body: signed.body)
            signed.headers.add(
                name: headers.signature, value: hash.saltedSignature(parameters: parameters, apiName: apiName, secret: secret, salt: salt))
        case .thirdParty(let callerKey, let transportKey):
            let (timestamp, nonce) = (Self.timestamp(now), Self.makeNonce())
            let canonical = CanonicalRequest(signed, timestamp: timestamp, nonce: nonce)
            let envelope: String
            do {
                envelope = try CallerKeyEnvelope.seal(
                    callerKey, transportKey: SymmetricKey(data: transportKey), timestamp: timestamp, nonce: nonce)
            } catch {
                throw RunwayError(.interceptorFailed, "sealing the caller key failed", underlying: error)
            }
            signed.headers.add(name: headers.timestamp, value: timestamp)
            signed.headers.add(name: headers.nonce, value: nonce)
            signed.headers.add(name: headers.callerKey, value: envelope)
            signed.headers.add(name: headers.signature, value: code(for: canonical, key: callerKey))
        }
        return signed
    }

    /// A streamed body is signed without being read: the HMAC schemes sign its declared
    /// `RequestBodyStream.sha256` as the body hash, the salted-hash scheme does not cover the
    /// body. A form body's fields are signed parameters, so a streamed form is refused, and so
    /// is a streamed body without a declared digest under an HMAC scheme: reading it here would
    /// read it twice (and a sequence can be read once).
    func checkSignable(_ request: Request) throws(RunwayError) {
        guard let stream = request.bodyStream else { return }
        // The verifier's rule for "a form" (``RequestParameters/isForm(_:)``), so that what it
        // reads as form fields is never signed as a streamed body.
        if let type = request.headers["Content-Type"], RequestParameters.isForm(type) {
            throw RunwayError(
                .configuration, "a streamed form body cannot be signed: its fields are signed parameters (send it as Request.body)",
                field: "bodyStream")
        }
        if case .saltedHash = scheme.kind { return }
        guard stream.sha256 != nil else {
            throw RunwayError(
                .configuration,
                "a streamed request body is signed by its declared SHA-256: set RequestBodyStream.sha256 (the signer does not read "
                    + "the body)",
                field: "bodyStream")
        }
    }

    static func timestamp(_ date: Date) -> String {
        String(Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The HMAC of the canonical text under `key`, with the MAC keyed at `init` (which is `key`'s).
    private func code(for canonical: CanonicalRequest, key: Data) -> String {
        (mac ?? KeyedMAC(key: key)).code(forMessage: canonical.utf8Text)
    }

    /// 128 random bits, lower-case hex, from the system's generator.
    static func makeNonce() -> String {
        let (high, low) = randomBits()
        return String(unsafeUninitializedCapacity: 32) { digits in
            for index in 0..<16 {
                let shift = UInt64(60 - 4 * index)
                digits[index] = hexDigit(UInt8(truncatingIfNeeded: high >> shift) & 0xF)
                digits[16 + index] = hexDigit(UInt8(truncatingIfNeeded: low >> shift) & 0xF)
            }
            return 32
        }
    }

    /// 128 bits from the system's random source, for a nonce. On Linux they come from
    /// ``NonceBits``, which draws 256 bytes per `getentropy` call (one call per 16 nonces).
    /// Elsewhere, and should the call fail, the standard generator (on Apple platforms it draws
    /// from `arc4random_buf`, with no call).
    static func randomBits() -> (UInt64, UInt64) {
        #if canImport(Glibc) || canImport(Musl)
        if let bits = NonceBits.shared.next() { return bits }
        #endif
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }
}

#if canImport(Glibc) || canImport(Musl)
/// Random bits for nonces, drawn from the kernel 256 bytes at a time and handed out 16 at a time,
/// each byte once.
///
/// A `getrandom` system call costs about 0.6 µs here whatever it draws up to 256 bytes, and
/// `SystemRandomNumberGenerator` makes one per 64 bits: one call per 16 nonces instead of one or
/// two per nonce. A nonce need only never repeat and not be guessed; these bits are as random
/// as the kernel's, only drawn ahead. (A process that forks without `exec` and signs in both
/// halves could send a nonce twice from bits drawn before the fork; the server's replay check
/// refuses the second, it is never accepted twice.)
final class NonceBits: Sendable {
    static let shared = NonceBits()

    private let pool = Locked(Pool())

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 256)
        /// The first byte not handed out; `bytes.count` when all are.
        var next = 256
    }

    /// The next 128 bits, or `nil` when the kernel gives none.
    func next() -> (UInt64, UInt64)? {
        pool.withLock { pool -> (UInt64, UInt64)? in
            if pool.next + 16 > pool.bytes.count {
                guard pool.bytes.withUnsafeMutableBytes({ getentropy($0.baseAddress, $0.count) }) == 0 else { return nil }
                pool.next = 0
            }
            var high: UInt64 = 0
            var low: UInt64 = 0
            for index in 0..<8 {
                high = high << 8 | UInt64(pool.bytes[pool.next + index])
                low = low << 8 | UInt64(pool.bytes[pool.next + 8 + index])
                // Handed out once: a later reader of the buffer never sees them.
                pool.bytes[pool.next + index] = 0
                pool.bytes[pool.next + 8 + index] = 0
            }
            pool.next += 16
            return (high, low)
        }
    }
}
#endif

extension Interceptor where Self == SigningInterceptor {
    /// Signs requests with `scheme`; see ``SigningInterceptor``.
    public static func signing(_ scheme: SigningScheme, headers: SigningHeaders = SigningHeaders()) -> SigningInterceptor {
        SigningInterceptor(scheme, headers: headers)
    }

    /// Signs requests with HMAC-SHA256 and `secret`.
    /// - Throws: `RunwayError` `.configuration` for an empty secret.
    public static func signing(secret: String, keyID: String? = nil) throws(RunwayError) -> SigningInterceptor {
        SigningInterceptor(try .hmacSHA256(secret: secret, keyID: keyID))
    }
}

#endif
