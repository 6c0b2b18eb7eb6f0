#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

#if Signing  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif

/// Seals and opens a third-party caller's key with AES-GCM, bound to one request's timestamp
/// and nonce so an envelope cannot be lifted onto another request.
enum CallerKeyEnvelope {
    static func seal(_ callerKey: Data, transportKey: SymmetricKey, timestamp: String, nonce: String) throws -> String {
        let box = try AES.GCM.seal(callerKey, using: transportKey, authenticating: binding(timestamp, nonce))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    static func open(_ envelope: String, transportKey: SymmetricKey, timestamp: String, nonce: String) -> Data? {
        guard let combined = Data(base64Encoded: envelope),
            let box = try? AES.GCM.SealedBox(combined: combined)
        else { return nil }
        return try? AES.GCM.open(box, using: transportKey, authenticating: binding(timestamp, nonce))
    }

    private static func binding(_ timestamp: String, _ nonce: String) -> Data {
        Data("runway-caller-key\n\(timestamp)\n\(nonce)".utf8)
    }
}

#endif
