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

/// How requests are signed: HMAC-SHA256 over a canonical form (the default), a legacy salted
/// hash, or HMAC with a third-party caller's key that travels sealed with AES-GCM.
///
/// Each factory checks its configuration and throws `RunwayError` `.configuration` at
/// registration (an empty secret, a transport key of the wrong size), never on a request.
public struct SigningScheme: Sendable {
    enum Kind: Sendable {
        // Keys are kept as bytes: `SymmetricKey` is not `Sendable`; one is made per use.
        case hmac(key: Data, keyID: String)
        case saltedHash(secret: String, salt: String, hash: SaltedHashFunction)
        case thirdParty(callerKey: Data, transportKey: Data)
    }

    let kind: Kind

    /// HMAC-SHA256 over ``CanonicalRequest`` (method, path, sorted parameters, body hash,
    /// timestamp, nonce), sent in the ``SigningHeaders``. Servers check it with
    /// ``SignatureVerifier``, which also rejects stale timestamps and replayed nonces.
    /// - Parameters:
    ///   - secret: The secret shared with the server; must not be empty.
    ///   - keyID: Names the secret, so the server can rotate keys; sent when given.
    public static func hmacSHA256(secret: String, keyID: String? = nil) throws(RunwayError) -> SigningScheme {
        try hmacSHA256(secret: Data(secret.utf8), keyID: keyID)
    }

    /// HMAC-SHA256 with a binary secret; see ``hmacSHA256(secret:keyID:)-(String,_)``. Servers
    /// check it with ``SignatureVerifier`` made from the same bytes (`hmacSHA256(secret:)` with
    /// `Data`, or `hmacSHA256(keys:)`).
    public static func hmacSHA256(secret: Data, keyID: String? = nil) throws(RunwayError) -> SigningScheme {
        guard !secret.isEmpty else { throw RunwayError(.configuration, "the signing secret is empty") }
        if let keyID, keyID.isEmpty || !keyID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw RunwayError(.configuration, "key ID \"\(keyID)\" must be non-empty printable ASCII without spaces")
        }
        return SigningScheme(kind: .hmac(key: secret, keyID: keyID ?? ""))
    }

    /// A salted-hash scheme, for servers that speak it:
    /// `hash(hash(parameters + apiName + secret) + salt)`, lower-case hex, in the signature
    /// header. `parameters` is `RequestParameters.canonicalForm` (sorted `k=v` joined by `&`)
    /// and `apiName` is `RequestContext.apiName`.
    ///
    /// It has no timestamp or nonce, so it cannot stop replays; prefer ``hmacSHA256(secret:keyID:)-(String,_)``.
    /// - Throws: `.configuration` for an empty secret.
    public static func saltedHash(secret: String, salt: String = "", hash: SaltedHashFunction = .md5) throws(RunwayError) -> SigningScheme {
        guard !secret.isEmpty else { throw RunwayError(.configuration, "the signing secret is empty") }
        return SigningScheme(kind: .saltedHash(secret: secret, salt: salt, hash: hash))
    }

    /// For platforms with several registered callers: the request is
    /// signed like ``hmacSHA256(secret:keyID:)-(String,_)`` with the caller's own key, and that
    /// key travels next to the signature sealed with AES-GCM under `transportKey` (built into the
    /// SDK and known to the server), bound to the request's timestamp and nonce.
    /// - Parameters:
    ///   - callerKey: This caller's registered key; must not be empty.
    ///   - transportKey: 16, 24 or 32 bytes (AES-128/192/256).
    public static func thirdParty(callerKey: String, transportKey: Data) throws(RunwayError) -> SigningScheme {
        guard !callerKey.isEmpty else { throw RunwayError(.configuration, "the caller key is empty") }
        guard [16, 24, 32].contains(transportKey.count) else {
            throw RunwayError(.configuration, "the transport key is \(transportKey.count) bytes; AES-GCM needs 16, 24 or 32")
        }
        return SigningScheme(kind: .thirdParty(callerKey: Data(callerKey.utf8), transportKey: transportKey))
    }
}

/// The hash function of the salted-hash scheme.
public struct SaltedHashFunction: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Sendable {
        case md5, sha1, sha256
    }

    private let base: Base

    /// MD5 (insecure; for servers that require it).
    public static let md5 = SaltedHashFunction(base: .md5)
    /// SHA-1 (insecure; for servers that require it).
    public static let sha1 = SaltedHashFunction(base: .sha1)
    /// SHA-256.
    public static let sha256 = SaltedHashFunction(base: .sha256)

    public var description: String { base.rawValue }

    /// The lower-case hex digest of `text`.
    func hex(_ text: String) -> String {
        let data = Data(text.utf8)
        return switch base {
        case .md5: Insecure.MD5.hash(data: data).hexString
        case .sha1: Insecure.SHA1.hash(data: data).hexString
        case .sha256: SHA256.hash(data: data).hexString
        }
    }

    /// `hash(hash(parameters + apiName + secret) + salt)`.
    func saltedSignature(parameters: String, apiName: String, secret: String, salt: String) -> String {
        hex(hex(parameters + apiName + secret) + salt)
    }
}

#endif
