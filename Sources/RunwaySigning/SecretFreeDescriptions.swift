#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

// What `print`, string interpolation and `dump` show of the signing types: the scheme and its
// public parts, never a secret, a caller key, a transport key or a keyed HMAC state (from which
// signatures could be forged). Logs and crash reports see these.

extension SigningScheme: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        switch kind {
        case .hmac(_, let keyID): keyID.isEmpty ? "HMAC-SHA256 (secret hidden)" : "HMAC-SHA256, key ID \(keyID) (secret hidden)"
        case .saltedHash(_, _, let hash): "salted \(hash) (secret and salt hidden)"
        case .thirdParty: "third-party HMAC-SHA256 (caller and transport keys hidden)"
        }
    }

    public var debugDescription: String { "SigningScheme(\(description))" }

    public var customMirror: Mirror { Mirror(self, children: ["scheme": description]) }
}

extension SigningInterceptor: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SigningInterceptor(\(scheme.description))" }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["scheme": scheme.description, "headers": headers]) }
}

extension SignatureVerifier: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        switch kind {
        case .hmac(let keys): "SignatureVerifier(HMAC-SHA256, key IDs \(keys.keys.sorted()), secrets hidden)"
        case .saltedHash(_, _, let hash): "SignatureVerifier(salted \(hash), secret and salt hidden)"
        case .thirdParty(_, let hashes): "SignatureVerifier(third-party, \(hashes.count) caller keys, keys hidden)"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["verifier": description, "maxClockSkew": maxClockSkew, "headers": headers])
    }
}

#endif
