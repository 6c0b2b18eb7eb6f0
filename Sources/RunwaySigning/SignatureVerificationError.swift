#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

/// Why ``SignatureVerifier`` rejected a request.
///
/// A struct with a ``Code`` over a private enum (new codes never break a `switch`), the header
/// at fault, and a message for logs. Servers normally answer `401` for every code and log the
/// message; never echo it to the client.
public struct SignatureVerificationError: Error, Sendable, CustomStringConvertible {
    /// What kind of rejection this is.
    public var code: Code
    /// The header at fault, if one is.
    public var header: String?
    /// What happened, for logs.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, header: String? = nil) {
        self.code = code
        self.message = message
        self.header = header
    }

    public var description: String {
        "SignatureVerificationError.\(code): \(message)" + (header.map { " [header \($0)]" } ?? "")
    }

    /// The kind of a ``SignatureVerificationError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case missingHeader, malformedHeader, staleTimestamp, replayedNonce, signatureMismatch
            case unknownKey, unknownCaller, missingAPIName, tooManyNonces
        }

        private let base: Base

        public var description: String { base.rawValue }

        /// A required signature header is absent.
        public static let missingHeader = Code(base: .missingHeader)
        /// A signature header cannot be parsed (bad hex, bad number, bad envelope).
        public static let malformedHeader = Code(base: .malformedHeader)
        /// The timestamp is outside the allowed clock skew.
        public static let staleTimestamp = Code(base: .staleTimestamp)
        /// The nonce was already used within the window.
        public static let replayedNonce = Code(base: .replayedNonce)
        /// The signature does not match the request as received (a value, the path, the
        /// method or the body was changed, or the wrong secret signed it).
        public static let signatureMismatch = Code(base: .signatureMismatch)
        /// The key ID names no known secret.
        public static let unknownKey = Code(base: .unknownKey)
        /// The sealed caller key opened, but is not a registered caller.
        public static let unknownCaller = Code(base: .unknownCaller)
        /// The salted-hash scheme was asked to verify without the API name.
        public static let missingAPIName = Code(base: .missingAPIName)
        /// The replay cache is full of live nonces; the request is refused rather than risk a replay.
        public static let tooManyNonces = Code(base: .tooManyNonces)
    }
}

#endif
