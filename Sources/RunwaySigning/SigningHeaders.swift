#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

/// The header names a signature travels in.
///
/// The defaults are `X-Runway-Signature`, `X-Runway-Timestamp`, `X-Runway-Nonce`,
/// `X-Runway-Key-ID` and `X-Runway-Caller-Key`; a server with its own names sets them here, on
/// both the ``SigningInterceptor`` and the ``SignatureVerifier``.
public struct SigningHeaders: Sendable, Equatable {
    /// The signature, lower-case hex.
    public var signature: String
    /// Unix seconds when the request was signed.
    public var timestamp: String
    /// A random one-time value.
    public var nonce: String
    /// Which secret signed the request (key rotation); only sent when a key ID is configured.
    public var keyID: String
    /// The third-party caller's key, sealed with AES-GCM.
    public var callerKey: String

    /// Creates header names; every parameter has the default.
    public init(
        signature: String = "X-Runway-Signature", timestamp: String = "X-Runway-Timestamp",
        nonce: String = "X-Runway-Nonce", keyID: String = "X-Runway-Key-ID", callerKey: String = "X-Runway-Caller-Key"
    ) {
        self.signature = signature
        self.timestamp = timestamp
        self.nonce = nonce
        self.keyID = keyID
        self.callerKey = callerKey
    }

    /// Every name, for checking and for redaction by a logging interceptor.
    public var all: [String] { [signature, timestamp, nonce, keyID, callerKey] }
}

#endif
