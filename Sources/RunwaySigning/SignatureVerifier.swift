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

/// Checks signed requests on the server: the counterpart of ``SigningInterceptor``.
///
/// Framework-neutral: hand it the method, the raw path and query, a header lookup and the
/// body. It rejects a missing or malformed signature, a timestamp outside the allowed clock
/// skew, a nonce seen before within the window, and any difference between what was signed and
/// what arrived; signatures are compared in constant time. The order of query parameters of
/// different names does not matter (the canonical form sorts them by name); the order of the
/// values of one name does.
/// ```swift
/// let verifier = try SignatureVerifier.hmacSHA256(secret: secret)
/// router.get("/v1/listings") { request, context in
///     try verifier.verify(
///         method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
///         headers: { request.headers[values: HTTPField.Name($0)!].first }, body: body)
///     ...
/// }
/// ```
public struct SignatureVerifier: Sendable {
    enum Kind: Sendable {
        // Keys are kept as bytes: `SymmetricKey` is not `Sendable`; one is made per use.
        case hmac(keys: [String: Data])
        case saltedHash(secret: String, salt: String, hash: SaltedHashFunction)
        case thirdParty(transportKey: Data, callerKeyHashes: Set<Data>)
    }

    let kind: Kind
    /// How far a timestamp may be from the server's clock, either way.
    public let maxClockSkew: Duration
    /// The header names, as configured on the clients.
    public let headers: SigningHeaders
    /// The nonces seen within the window.
    public let nonces: NonceCache

    private init(kind: Kind, maxClockSkew: Duration, headers: SigningHeaders, nonces: NonceCache) throws(RunwayError) {
        // Timestamps are whole seconds: a skew under one second would reject every request.
        guard maxClockSkew >= .seconds(1) else {
            throw RunwayError(
                .configuration, "the allowed clock skew must be at least one second (timestamps are whole seconds)", field: "maxClockSkew")
        }
        self.kind = kind
        self.maxClockSkew = maxClockSkew
        self.headers = headers
        self.nonces = nonces
    }

    /// Verifies ``SigningScheme/hmacSHA256(secret:keyID:)-(String,_)`` signatures made without a key ID.
    /// - Throws: `RunwayError` `.configuration` for an empty secret or a non-positive skew.
    public static func hmacSHA256(
        secret: String, maxClockSkew: Duration = .seconds(300), headers: SigningHeaders = SigningHeaders(),
        nonces: NonceCache = NonceCache()
    ) throws(RunwayError) -> SignatureVerifier {
        try hmacSHA256(secrets: ["": secret], maxClockSkew: maxClockSkew, headers: headers, nonces: nonces)
    }

    /// Verifies HMAC-SHA256 signatures with one secret per key ID (`""` for requests without a
    /// key ID), for key rotation.
    /// - Throws: `RunwayError` `.configuration` for no secrets, an empty secret, or a
    ///   non-positive skew.
    public static func hmacSHA256(
        secrets: [String: String], maxClockSkew: Duration = .seconds(300), headers: SigningHeaders = SigningHeaders(),
        nonces: NonceCache = NonceCache()
    ) throws(RunwayError) -> SignatureVerifier {
        return try hmacSHA256(keys: secrets.mapValues { Data($0.utf8) }, maxClockSkew: maxClockSkew, headers: headers, nonces: nonces)
    }

    /// Verifies ``SigningScheme/hmacSHA256(secret:keyID:)-(Data,_)`` signatures (a binary
    /// secret) made without a key ID.
    /// - Throws: `RunwayError` `.configuration` for an empty secret or a non-positive skew.
    public static func hmacSHA256(
        secret: Data, maxClockSkew: Duration = .seconds(300), headers: SigningHeaders = SigningHeaders(),
        nonces: NonceCache = NonceCache()
    ) throws(RunwayError) -> SignatureVerifier {
        try hmacSHA256(keys: ["": secret], maxClockSkew: maxClockSkew, headers: headers, nonces: nonces)
    }

    /// Verifies HMAC-SHA256 signatures with one binary secret per key ID (`""` for requests
    /// without a key ID), for key rotation.
    /// - Throws: `RunwayError` `.configuration` for no secrets, an empty secret, or a
    ///   non-positive skew.
    public static func hmacSHA256(
        keys: [String: Data], maxClockSkew: Duration = .seconds(300), headers: SigningHeaders = SigningHeaders(),
        nonces: NonceCache = NonceCache()
    ) throws(RunwayError) -> SignatureVerifier {
        guard !keys.isEmpty, !keys.values.contains(where: \.isEmpty) else {
            throw RunwayError(.configuration, "the verifier needs non-empty secrets")
        }
        return try SignatureVerifier(kind: .hmac(keys: keys), maxClockSkew: maxClockSkew, headers: headers, nonces: nonces)
    }

    /// Verifies the salted-hash scheme (``SigningScheme/saltedHash(secret:salt:hash:)``); the server passes
    /// the API name of the route to ``verify(method:path:query:headers:body:apiName:now:)``.
    /// This scheme has no timestamp or nonce: replays cannot be detected.
    public static func saltedHash(
        secret: String, salt: String = "", hash: SaltedHashFunction = .md5, headers: SigningHeaders = SigningHeaders()
    ) throws(RunwayError) -> SignatureVerifier {
        guard !secret.isEmpty else { throw RunwayError(.configuration, "the signing secret is empty") }
        return try SignatureVerifier(
            kind: .saltedHash(secret: secret, salt: salt, hash: hash), maxClockSkew: .seconds(300), headers: headers,
            nonces: NonceCache(capacity: 1))
    }

    /// Verifies ``SigningScheme/thirdParty(callerKey:transportKey:)`` signatures: opens the
    /// sealed caller key, checks it is registered, and checks the HMAC made with it.
    /// - Throws: `RunwayError` `.configuration` for a transport key of the wrong size, no
    ///   registered callers, or an empty caller key.
    public static func thirdParty(
        transportKey: Data, callerKeys: [String], maxClockSkew: Duration = .seconds(300),
        headers: SigningHeaders = SigningHeaders(), nonces: NonceCache = NonceCache()
    ) throws(RunwayError) -> SignatureVerifier {
        guard [16, 24, 32].contains(transportKey.count) else {
            throw RunwayError(.configuration, "the transport key is \(transportKey.count) bytes; AES-GCM needs 16, 24 or 32")
        }
        guard !callerKeys.isEmpty, !callerKeys.contains(where: \.isEmpty) else {
            throw RunwayError(.configuration, "the verifier needs non-empty registered caller keys")
        }
        let hashes = Set(callerKeys.map { Data(SHA256.hash(data: Data($0.utf8))) })
        return try SignatureVerifier(
            kind: .thirdParty(transportKey: transportKey, callerKeyHashes: hashes),
            maxClockSkew: maxClockSkew, headers: headers, nonces: nonces)
    }

    /// Verifies one request as received.
    /// - Parameters:
    ///   - method: The method token.
    ///   - path: The path as on the wire, percent-encoded, without the query.
    ///   - query: The query as on the wire, without `?`.
    ///   - lookup: The `headers:` argument: looks up a header's first value by name
    ///     (case-insensitive).
    ///   - body: The body bytes as received.
    ///   - apiName: The API name, for the salted-hash scheme.
    ///   - now: The server's clock.
    /// - Throws: ``SignatureVerificationError``.
    public func verify(
        method: String, path: String, query: String?, headers lookup: (String) -> String?, body: Data?,
        apiName: String? = nil, now: Date = Date()
    ) throws(SignatureVerificationError) {
        try verify(method: method, path: path, query: query, headers: lookup, body: body, bodyHash: nil, apiName: apiName, now: now)
    }

    /// ``verify(method:path:query:headers:body:apiName:now:)``, with the body's hash given for a
    /// body not at hand (a streamed one's declared SHA-256, as the signer used it).
    private func verify(
        method: String, path: String, query: String?, headers lookup: (String) -> String?, body: Data?, bodyHash: String?,
        apiName: String?, now: Date
    ) throws(SignatureVerificationError) {
        let signatureHex = try required(headers.signature, lookup)
        guard let signature = Self.bytes(hex: signatureHex) else {
            throw SignatureVerificationError(.malformedHeader, "the signature is not hex", header: headers.signature)
        }
        // Without the spaces and tabs around the value, as the signer reads it (and HTTP: RFC 9110 §5.5).
        let contentType = lookup("Content-Type")?.trimmingSpacesAndTabs()
        switch kind {
        case .saltedHash(let secret, let salt, let hash):
            guard let apiName, !apiName.isEmpty else {
                throw SignatureVerificationError(.missingAPIName, "the salted-hash scheme needs the API name")
            }
            let parameters = CanonicalRequest.signedParameters(percentEncodedQuery: query, contentType: contentType, body: body)
            let expected = hash.saltedSignature(parameters: parameters, apiName: apiName, secret: secret, salt: salt)
            guard ConstantTime.equals(Array(expected.utf8), Array(signatureHex.lowercased().utf8)) else {
                throw SignatureVerificationError(.signatureMismatch, "the signature does not match the request")
            }
        case .hmac(let keys):
            let (timestamp, nonce, seconds) = try freshness(lookup, now: now)
            let keyID = lookup(headers.keyID) ?? ""
            guard let key = keys[keyID] else {
                throw SignatureVerificationError(.unknownKey, "no secret for key ID \"\(keyID)\"", header: headers.keyID)
            }
            var canonical = CanonicalRequest(
                method: method, percentEncodedPath: path, percentEncodedQuery: query, contentType: contentType, body: body,
                timestamp: timestamp, nonce: nonce, keyID: keyID)
            if let bodyHash { canonical.bodyHash = bodyHash }
            try check(signature, canonical: canonical, key: SymmetricKey(data: key))
            try remember(nonce, seconds: seconds, now: now)
        case .thirdParty(let transportKey, let callerKeyHashes):
            let (timestamp, nonce, seconds) = try freshness(lookup, now: now)
            let envelope = try required(headers.callerKey, lookup)
            guard
                let callerKey = CallerKeyEnvelope.open(
                    envelope, transportKey: SymmetricKey(data: transportKey), timestamp: timestamp, nonce: nonce)
            else {
                throw SignatureVerificationError(.malformedHeader, "the caller key envelope does not open", header: headers.callerKey)
            }
            guard callerKeyHashes.contains(Data(SHA256.hash(data: callerKey))) else {
                throw SignatureVerificationError(.unknownCaller, "the caller key is not registered", header: headers.callerKey)
            }
            var canonical = CanonicalRequest(
                method: method, percentEncodedPath: path, percentEncodedQuery: query, contentType: contentType, body: body,
                timestamp: timestamp, nonce: nonce)
            if let bodyHash { canonical.bodyHash = bodyHash }
            try check(signature, canonical: canonical, key: SymmetricKey(data: callerKey))
            try remember(nonce, seconds: seconds, now: now)
        }
    }

    /// Verifies a Runway `Request` as a client would send it (for tests and in-process servers).
    /// A streamed body (`Request.bodyStream`) is verified by its declared SHA-256, as it was signed.
    public func verify(_ request: Request, apiName: String? = nil, now: Date = Date()) throws(SignatureVerificationError) {
        try verify(
            method: request.method.rawValue, path: request.url.path(percentEncoded: true),
            query: request.url.query(percentEncoded: true), headers: { request.headers[$0] }, body: request.body,
            bodyHash: request.bodyStream?.sha256?.hexString, apiName: apiName, now: now)
    }

    private func required(_ name: String, _ lookup: (String) -> String?) throws(SignatureVerificationError) -> String {
        guard let value = lookup(name), !value.isEmpty else {
            throw SignatureVerificationError(.missingHeader, "\(name) is missing", header: name)
        }
        return value
    }

    /// The timestamp and nonce, checked for form and freshness.
    private func freshness(_ lookup: (String) -> String?, now: Date) throws(SignatureVerificationError) -> (String, String, Int64) {
        let timestamp = try required(headers.timestamp, lookup)
        guard let seconds = Int64(timestamp), timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw SignatureVerificationError(.malformedHeader, "the timestamp is not Unix seconds", header: headers.timestamp)
        }
        let skew = maxClockSkew.components.seconds
        let current = Int64(now.timeIntervalSince1970.rounded(.down))
        guard abs(current - seconds) <= skew else {
            throw SignatureVerificationError(
                .staleTimestamp, "the timestamp is \(current - seconds) s from the server's clock", header: headers.timestamp)
        }
        let nonce = try required(headers.nonce, lookup)
        guard (16...128).contains(nonce.utf8.count),
            nonce.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw SignatureVerificationError(.malformedHeader, "the nonce must be 16 to 128 printable characters", header: headers.nonce)
        }
        return (timestamp, nonce, seconds)
    }

    private func check(_ signature: [UInt8], canonical: CanonicalRequest, key: SymmetricKey) throws(SignatureVerificationError) {
        // `isValidAuthenticationCode` compares in constant time.
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(canonical.text.utf8), using: key) else {
            throw SignatureVerificationError(.signatureMismatch, "the signature does not match the request")
        }
    }

    /// Records the nonce; only after the signature checked out, so forged requests cannot fill
    /// the cache.
    private func remember(_ nonce: String, seconds: Int64, now: Date) throws(SignatureVerificationError) {
        let current = Int64(now.timeIntervalSince1970.rounded(.down))
        // Clamped: a skew of `.seconds(.max)` ("any") with a timestamp near Int64.max would
        // overflow, and a trap here is a request that stops the server.
        let (sum, overflow) = max(seconds, current).addingReportingOverflow(maxClockSkew.components.seconds)
        let expiry = overflow || sum == .max ? Int64.max : sum + 1
        guard try nonces.insert(nonce, expiry: expiry, now: current) else {
            throw SignatureVerificationError(.replayedNonce, "the nonce was already used", header: headers.nonce)
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0, !utf8.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}

#endif
