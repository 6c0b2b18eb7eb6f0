import Foundation
import RunwaySigning
import Testing

/// What `print`, interpolation and `dump` show of the signing types never holds a secret, a
/// caller or transport key, or a keyed HMAC state.
@Suite struct SecretFreeDescriptionTests {
    @Test func noSecretInDescriptionsOrDumps() throws {
        let transportKey = Data(repeating: 0x5A, count: 32)
        let schemes = [
            try SigningScheme.hmacSHA256(secret: "SECRET-SIGN", keyID: "k1"),
            try SigningScheme.saltedHash(secret: "SECRET-SALTED", salt: "SECRET-PEPPER"),
            try SigningScheme.thirdParty(callerKey: "SECRET-CALLER", transportKey: transportKey),
        ]
        let verifiers = [
            try SignatureVerifier.hmacSHA256(secrets: ["k1": "SECRET-SIGN"]),
            try SignatureVerifier.saltedHash(secret: "SECRET-SALTED", salt: "SECRET-PEPPER"),
        ]
        var shown: [String] = []
        for scheme in schemes {
            let interceptor = SigningInterceptor(scheme)
            var dumped = ""
            dump(interceptor, to: &dumped)
            dump(scheme, to: &dumped)
            shown += ["\(scheme)", String(reflecting: scheme), "\(interceptor)", String(reflecting: interceptor), dumped]
        }
        for verifier in verifiers {
            var dumped = ""
            dump(verifier, to: &dumped)
            shown += ["\(verifier)", dumped]
        }
        for text in shown {
            #expect(!text.contains("SECRET"), "\(text)")
            // The transport key's bytes (0x5A, "Z"), in any form a dump prints them.
            #expect(!text.contains("90") && !text.contains("ZZZZ"), "\(text)")
        }
        #expect("\(schemes[0])".contains("k1"))
    }
}
