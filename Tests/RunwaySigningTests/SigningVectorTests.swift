import Crypto
import Foundation
import Runway
import RunwaySigning
import Testing

/// Runway against the frozen test vectors server teams implement the signature from: the
/// server's view (``CanonicalRequest`` from the raw parts, ``SignatureVerifier``), the client's
/// view (``SigningInterceptor``), and the article's example.
@Suite struct SigningVectorTests {
    /// The vectors the file must hold at least, one per case the article describes.
    static let requiredCases: Set<String> = [
        "plain-get", "query-reordered", "repeated-keys", "encoded-and-unicode", "plus-and-percent-20", "form-body-post",
        "json-body-post", "dot-segments-and-tilde", "empty-path", "key-id", "malformed-escape", "gzip-json-body",
    ]

    /// HMAC-SHA256 of `text` under `secret`, lower-case hex, computed here with swift-crypto.
    static func hmac(_ text: String, secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: Data(secret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
    }

    /// `hex` with its last digit changed: one byte of the signature differs.
    static func altered(_ hex: String) -> String {
        String(hex.dropLast()) + (hex.hasSuffix("0") ? "1" : "0")
    }

    @Test func theFileHoldsEveryCase() throws {
        let names = try SigningVector.all().map(\.name)
        #expect(Self.requiredCases.subtracting(names).isEmpty, "missing: \(Self.requiredCases.subtracting(names))")
        #expect(Set(names).count == names.count, "names repeat")
    }

    /// A server's ``CanonicalRequest`` of each input is the vector's text, byte for byte.
    @Test func canonicalRequestsMatch() throws {
        for vector in try SigningVector.all() {
            #expect(try vector.canonicalRequest().text == vector.expected.canonicalRequest, "\(vector)")
        }
    }

    /// Each signature is HMAC-SHA256 of the canonical text under the secret's UTF-8 bytes.
    @Test func signaturesAreTheHMACOfTheCanonicalText() throws {
        for vector in try SigningVector.all() {
            #expect(Self.hmac(vector.expected.canonicalRequest, secret: vector.input.secret) == vector.expected.signature, "\(vector)")
        }
    }

    /// ``SignatureVerifier`` accepts each vector's request at its own timestamp, and rejects it
    /// when one byte of the signature differs.
    @Test func theVerifierAcceptsEveryVectorButNotAnAlteredSignature() throws {
        for vector in try SigningVector.all() {
            let (body, now) = (try vector.body, try vector.signingTime)
            let verifier = try SignatureVerifier.hmacSHA256(secrets: [vector.input.keyID: vector.input.secret])
            func verify(signature: String) -> SignatureVerificationError.Code? {
                let headers = Dictionary(uniqueKeysWithValues: vector.headers(signature: signature).map { ($0.key.lowercased(), $0.value) })
                do {
                    try verifier.verify(
                        method: vector.input.method, path: vector.input.path, query: vector.input.query,
                        headers: { headers[$0.lowercased()] }, body: body, now: now)
                    return nil
                } catch {
                    return error.code
                }
            }
            #expect(verify(signature: vector.expected.signature) == nil, "\(vector)")
            #expect(verify(signature: Self.altered(vector.expected.signature)) == .signatureMismatch, "\(vector)")
        }
    }

    /// ``SigningInterceptor`` signing the vector's request at its timestamp signs the vector's
    /// canonical text with its own random nonce in place of the vector's. Only a request a client
    /// can send is checked: `URL` sends a malformed escape as `%25`, so that vector is the
    /// server's alone.
    @Test func theSigningInterceptorSignsTheCanonicalText() throws {
        var serverOnly: [String] = []
        for vector in try SigningVector.all() {
            let input = vector.input
            guard let url = URL(string: "https://api.test" + input.path + (input.query.map { "?" + $0 } ?? "")),
                url.path(percentEncoded: true) == input.path, url.query(percentEncoded: true) == input.query
            else {
                serverOnly.append(vector.name)
                continue
            }
            var headers: HTTPHeaders = [:]
            if let contentType = input.contentType { headers["Content-Type"] = contentType }
            let body = try vector.body
            let request = Request(method: HTTPMethod(rawValue: input.method), url: url, headers: headers, body: body.isEmpty ? nil : body)
            let scheme = try SigningScheme.hmacSHA256(secret: input.secret, keyID: input.keyID.isEmpty ? nil : input.keyID)
            let signed = try SigningInterceptor(scheme).sign(request, apiName: nil, now: try vector.signingTime)

            let nonce = try #require(signed.headers["X-Runway-Nonce"])
            #expect(signed.headers["X-Runway-Timestamp"] == input.timestamp, "\(vector)")
            #expect(signed.headers["X-Runway-Key-ID"] == (input.keyID.isEmpty ? nil : input.keyID), "\(vector)")
            let text = vector.expected.canonicalRequest.replacingOccurrences(of: "\n\(input.nonce)\n", with: "\n\(nonce)\n")
            #expect(text.contains("\n\(nonce)\n"), "\(vector)")
            #expect(signed.headers["X-Runway-Signature"] == Self.hmac(text, secret: input.secret), "\(vector)")
        }
        #expect(serverOnly == ["malformed-escape"])
    }

    /// The article's example is the `plain-get` vector, quoted exactly.
    @Test func theArticlesExampleIsAVector() throws {
        let article = try String(
            contentsOf: SigningVector.directory.appending(path: "../../Sources/RunwaySigning/RunwaySigning.docc/SignedRequestFormat.md"),
            encoding: .utf8)
        let vector = try #require(try SigningVector.all().first { $0.name == "plain-get" })
        #expect(article.contains("```\n\(vector.expected.canonicalRequest)\n```"))
        #expect(article.contains("signature `\(vector.expected.signature)`"))
        #expect(article.contains("nonce `\(vector.input.nonce)`"))
        #expect(article.contains("`\(vector.input.secret)`"))
    }
}
