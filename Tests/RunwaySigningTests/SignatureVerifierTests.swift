import Crypto
import Foundation
import Runway
import RunwaySigning
import RunwayTesting
import Testing

@Suite struct SignatureVerifierTests {
    static let secret = "s3cr3t-shared-with-the-server"

    /// Signs `request` through a pipeline and returns it as the dispatcher received it.
    func signed(_ request: Request, with interceptor: SigningInterceptor, apiName: String? = "listing.rent") async throws -> Request {
        let stub = StubDispatcher(status: 200)
        let pipeline = Pipeline(interceptors: [interceptor], dispatcher: stub)
        _ = try await pipeline.send(request, context: RequestContext(apiName: apiName))
        return try #require(stub.requests.first)
    }

    func code(_ body: () throws -> Void) -> SignatureVerificationError.Code? {
        do {
            try body()
            return nil
        } catch { return (error as? SignatureVerificationError)?.code }
    }

    @Test func hmacSignatureVerifies() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let request = try await signed(
            try Request(
                method: .post, "https://api.test/v1/rent?city=上海&page=2",
                headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data("sort=price".utf8)),
            with: try .signing(secret: Self.secret))
        #expect(request.headers["X-Runway-Signature"]?.count == 64)
        #expect(code { try verifier.verify(request) } == nil)
    }

    @Test("a request with a streamed body verifies by the SHA-256 it declared, as it was signed")
    func streamedBodyVerifiesByItsDeclaredDigest() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let bytes = Data("a streamed upload".utf8)
        let digest = Data(SHA256.hash(data: bytes))
        var request = try Request(method: .put, "https://api.test/v1/files/7")
        request.bodyStream = .sequence(length: bytes.count, sha256: digest) {
            AsyncStream {
                $0.yield(bytes)
                $0.finish()
            }
        }
        let signedRequest = try await signed(request, with: try .signing(secret: Self.secret))
        #expect(code { try verifier.verify(signedRequest) } == nil)
        // Another declared digest is another body.
        var other = signedRequest
        other.bodyStream = .sequence(length: bytes.count, sha256: Data(SHA256.hash(data: Data("other".utf8)))) {
            AsyncStream {
                $0.yield(bytes)
                $0.finish()
            }
        }
        #expect(code { try verifier.verify(other) } == .signatureMismatch)
    }

    /// The signer and the verifier read "a form" alike (the media type before the first `;`,
    /// spaces and tabs around it removed), so a streamed body the signer signs verifies, and the
    /// verifier reads the `Content-Type` without the blanks around it, as the signer does.
    @Test func signerAndVerifierReadTheContentTypeAlike() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        let bytes = Data("a=1&b=2".utf8)
        for type in [";application/x-www-form-urlencoded", "\u{A0}application/x-www-form-urlencoded", "application/json"] {
            var request = try Request(method: .put, "https://api.test/v1/files/7", headers: ["Content-Type": type])
            request.bodyStream = .sequence(length: bytes.count, sha256: Data(SHA256.hash(data: bytes))) {
                AsyncStream {
                    $0.yield(bytes)
                    $0.finish()
                }
            }
            // As a server verifies it: the streamed bytes are the body it received.
            let signed = try interceptor.sign(request, apiName: nil)
            let received = code {
                try verifier.verify(
                    method: "PUT", path: "/v1/files/7", query: nil, headers: { signed.headers[$0] }, body: bytes)
            }
            #expect(received == nil, "\(type)")
            request.headers["Content-Type"] = " \tapplication/x-www-form-URLencoded ; charset=utf-8"
            #expect(throws: RunwayError.self) { try interceptor.sign(request, apiName: nil) }
        }
        let undecodable = try Request(
            method: .post, "https://api.test/v1/rent?x=%FF", headers: ["Content-Type": "  application/x-www-form-urlencoded"],
            body: Data("a=1".utf8))
        #expect(code { try verifier.verify(try interceptor.sign(undecodable, apiName: nil)) } == nil)
    }

    @Test func signatureFieldsAlreadyThereAreReplacedWhateverTheirCase() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let stale: HTTPHeaders = [
            "x-runway-signature": "stale", "Accept": "application/json", "X-RUNWAY-NONCE": "old", "X-Runway-Nonce": "older",
            "x-runway-timestamp": "1",
        ]
        let request = try await signed(
            try Request("https://api.test/v1/rent?page=2", headers: stale), with: try .signing(secret: Self.secret))
        let names = request.headers.map(\.name)
        #expect(names == ["Accept", "X-Runway-Timestamp", "X-Runway-Nonce", "X-Runway-Signature"])
        #expect(request.headers["X-Runway-Nonce"] != "old" && request.headers["X-Runway-Timestamp"] != "1")
        #expect(code { try verifier.verify(request) } == nil)
    }

    @Test func noncesAre128RandomBitsInLowerCaseHex() async throws {
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        var seen = Set<String>()
        // The digits seen at each of the 32 positions: every position varies, so all 128 bits
        // come from the random source (a half-filled buffer would leave 16 positions at `0`).
        var digitsAt = [Set<UInt8>](repeating: [], count: 32)
        for _ in 0..<1000 {
            let nonce = try #require(try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil).headers["X-Runway-Nonce"])
            #expect(nonce.utf8.count == 32 && nonce.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            seen.insert(nonce)
            for (position, digit) in nonce.utf8.prefix(32).enumerated() { digitsAt[position].insert(digit) }
        }
        #expect(seen.count == 1000)
        #expect(digitsAt.allSatisfy { $0.count > 8 })
    }

    @Test func noncesSignedAtOnceOnManyTasksNeverRepeat() async throws {
        // The random bits are drawn ahead and handed out from one buffer: tasks signing at once
        // must each get bits of their own, across many refills of it.
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        let nonces = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try (0..<500).map { _ in
                        try #require(try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil).headers["X-Runway-Nonce"])
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(nonces.count == 4000)
        #expect(Set(nonces).count == 4000)
    }

    @Test func tamperedValueIsRejected() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        var request = try await signed(
            try Request("https://api.test/v1/rent?city=Shanghai&page=2"), with: try .signing(secret: Self.secret))
        request.url = try #require(URL(string: "https://api.test/v1/rent?city=Shanghai&page=3"))
        #expect(code { try verifier.verify(request) } == .signatureMismatch)
    }

    @Test func tamperedBodyMethodAndPathAreRejected() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let original = try await signed(
            try Request(
                method: .post, "https://api.test/v1/pay", headers: ["Content-Type": "application/json"],
                body: Data(#"{"amount":1}"#.utf8)),
            with: try .signing(secret: Self.secret))
        var body = original
        body.body = Data(#"{"amount":100}"#.utf8)
        #expect(code { try verifier.verify(body) } == .signatureMismatch)
        var method = original
        method.method = .put
        #expect(code { try verifier.verify(method) } == .signatureMismatch)
        var path = original
        path.url = try #require(URL(string: "https://api.test/v1/refund"))
        #expect(code { try verifier.verify(path) } == .signatureMismatch)
    }

    @Test func reorderedParametersStillVerifyButMovedValuesDoNot() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let original = try await signed(try Request("https://api.test/v1/rent?a=1&b=2&c=3"), with: try .signing(secret: Self.secret))
        var reordered = original
        reordered.url = try #require(URL(string: "https://api.test/v1/rent?c=3&a=1&b=2"))
        #expect(code { try verifier.verify(reordered) } == nil)
        var swapped = original
        swapped.url = try #require(URL(string: "https://api.test/v1/rent?a=2&b=1&c=3"))
        #expect(code { try verifier.verify(swapped) } == .signatureMismatch)
        var smuggled = original
        smuggled.url = try #require(URL(string: "https://api.test/v1/rent?a=1%26b%3D2&c=3"))
        #expect(code { try verifier.verify(smuggled) } == .signatureMismatch)
        // The values of one name in another order: a server reading the first gets another one.
        let repeated = try await signed(try Request("https://api.test/v1/rent?a=1&a=2"), with: try .signing(secret: Self.secret))
        var turned = repeated
        turned.url = try #require(URL(string: "https://api.test/v1/rent?a=2&a=1"))
        #expect(code { try verifier.verify(turned) } == .signatureMismatch)
        #expect(code { try verifier.verify(repeated) } == nil)
    }

    /// Queries and paths whose escapes are not UTF-8 must not share a signature with another:
    /// `%FF` and `%FE` both decode to U+FFFD. (A malformed escape such as `%ZZ` never leaves the
    /// client: `URL` sends it as `%25ZZ`.)
    @Test(arguments: [
        ("https://api.test/v1/rent?q=%FF", "https://api.test/v1/rent?q=%FE"),
        ("https://api.test/v1/rent?amount=%C3", "https://api.test/v1/rent?amount=%FF"),
        ("https://api.test/v1/a%FF", "https://api.test/v1/a%25FF"),
    ])
    func undecodableQueriesAndPathsKeepTheirOwnSignature(signedURL: String, tamperedURL: String) async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let original = try await signed(Request(url: try #require(URL(string: signedURL))), with: try .signing(secret: Self.secret))
        #expect(code { try verifier.verify(original) } == nil)
        var tampered = original
        tampered.url = try #require(URL(string: tamperedURL))
        #expect(code { try verifier.verify(tampered) } == .signatureMismatch)
    }

    /// libcurl removes `.` and `..` segments before sending: the server sees `/v1/y` for a
    /// request signed as `/v1/x/../y`.
    @Test(arguments: [
        ("https://api.test/v1/x/../y", "https://api.test/v1/y"), ("https://api.test/v1/./a/b/..", "https://api.test/v1/a/"),
        ("https://api.test/../v1/z", "https://api.test/v1/z"),
    ])
    func dotSegmentsAreSignedAsTheyAreSent(signedURL: String, sentURL: String) async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        var request = try await signed(Request(url: try #require(URL(string: signedURL))), with: try .signing(secret: Self.secret))
        request.url = try #require(URL(string: sentURL))
        #expect(code { try verifier.verify(request) } == nil)
    }

    @Test func replayedNonceIsRejected() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let request = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: Self.secret))
        #expect(code { try verifier.verify(request) } == nil)
        #expect(code { try verifier.verify(request) } == .replayedNonce)
        // A fresh signature of the same request passes.
        let again = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: Self.secret))
        #expect(code { try verifier.verify(again) } == nil)
    }

    @Test func staleTimestampIsRejected() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret, maxClockSkew: .seconds(60))
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        let old = try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil, now: Date().addingTimeInterval(-61))
        #expect(code { try verifier.verify(old) } == .staleTimestamp)
        let future = try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil, now: Date().addingTimeInterval(120))
        #expect(code { try verifier.verify(future) } == .staleTimestamp)
        let recent = try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil, now: Date().addingTimeInterval(-30))
        #expect(code { try verifier.verify(recent) } == nil)
    }

    @Test("a skew of Int64.max seconds accepts any timestamp, a far one included, without overflowing")
    func endlessSkew() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret, maxClockSkew: .seconds(Int64.max))
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        let signed = try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil)
        #expect(code { try verifier.verify(signed) } == nil)
        #expect(code { try verifier.verify(signed) } == .replayedNonce)
        // A timestamp some 285 billion years ahead is fresh under that skew, and its nonce is
        // remembered until the end of time rather than overflowing.
        let far = try interceptor.sign(try Request("https://api.test/v1/rent"), apiName: nil, now: Date(timeIntervalSince1970: 9e18))
        #expect(code { try verifier.verify(far) } == nil)
        #expect(code { try verifier.verify(far) } == .replayedNonce)
    }

    @Test func wrongSecretMissingAndMalformedHeaders() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let wrong = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: "another secret"))
        #expect(code { try verifier.verify(wrong) } == .signatureMismatch)
        var missing = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: Self.secret))
        missing.headers["X-Runway-Nonce"] = nil
        #expect(code { try verifier.verify(missing) } == .missingHeader)
        var notHex = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: Self.secret))
        notHex.headers["X-Runway-Signature"] = "zz"
        #expect(code { try verifier.verify(notHex) } == .malformedHeader)
        var badTime = try await signed(try Request("https://api.test/v1/rent"), with: try .signing(secret: Self.secret))
        badTime.headers["X-Runway-Timestamp"] = "-5"
        #expect(code { try verifier.verify(badTime) } == .malformedHeader)
        #expect(code { try verifier.verify(try Request("https://api.test/v1/rent")) } == .missingHeader)
    }

    @Test func keyIDsSelectTheSecret() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secrets: ["2026-10": "old secret", "2026-11": "new secret"])
        let new = try await signed(try Request("https://api.test/x"), with: try .signing(secret: "new secret", keyID: "2026-11"))
        #expect(new.headers["X-Runway-Key-ID"] == "2026-11")
        #expect(code { try verifier.verify(new) } == nil)
        var relabelled = try await signed(try Request("https://api.test/x"), with: try .signing(secret: "new secret", keyID: "2026-11"))
        relabelled.headers["X-Runway-Key-ID"] = "2026-10"
        #expect(code { try verifier.verify(relabelled) } == .signatureMismatch)
        let unknown = try await signed(try Request("https://api.test/x"), with: try .signing(secret: "x", keyID: "1999"))
        #expect(code { try verifier.verify(unknown) } == .unknownKey)
    }

    @Test func saltedHashSchemeMatchesItsFormula() async throws {
        let interceptor = SigningInterceptor(try .saltedHash(secret: "key", salt: "salt"))
        let request = try await signed(try Request("https://api.test/search?q=a%20b&city=sh"), with: interceptor, apiName: "search")
        // md5(md5("city=sh&q=a%20b" + "search" + "key") + "salt"), computed independently with Python's hashlib.
        #expect(request.headers["X-Runway-Signature"] == "ad97d864071310898751c37e4cdc2cde")
        let verifier = try SignatureVerifier.saltedHash(secret: "key", salt: "salt")
        #expect(code { try verifier.verify(request, apiName: "search") } == nil)
        #expect(code { try verifier.verify(request, apiName: "other") } == .signatureMismatch)
        #expect(code { try verifier.verify(request) } == .missingAPIName)
        var tampered = request
        tampered.url = try #require(URL(string: "https://api.test/search?q=a%20c&city=sh"))
        #expect(code { try verifier.verify(tampered, apiName: "search") } == .signatureMismatch)

        let sha = try await signed(
            try Request("https://api.test/search?q=1"), with: SigningInterceptor(try .saltedHash(secret: "key", hash: .sha256)),
            apiName: "search")
        #expect(sha.headers["X-Runway-Signature"]?.count == 64)
        #expect(code { try SignatureVerifier.saltedHash(secret: "key", hash: .sha256).verify(sha, apiName: "search") } == nil)
    }

    @Test func saltedHashSchemeNeedsAnAPIName() async throws {
        let pipeline = Pipeline(interceptors: [SigningInterceptor(try .saltedHash(secret: "key"))], dispatcher: StubDispatcher(status: 200))
        await #expect(throws: RunwayError.self) {
            try await pipeline.send(try Request("https://api.test/x"))
        }
    }

    @Test func thirdPartyCallerKeyTravelsSealed() async throws {
        let transport = Data((0..<32).map { UInt8($0) })
        let verifier = try SignatureVerifier.thirdParty(transportKey: transport, callerKeys: ["caller-A", "caller-B"])
        let request = try await signed(
            try Request("https://api.test/open/listings?x=1"),
            with: .signing(try .thirdParty(callerKey: "caller-B", transportKey: transport)))
        let envelope = try #require(request.headers["X-Runway-Caller-Key"])
        #expect(!envelope.contains("caller-B"))
        #expect(Data(base64Encoded: envelope).map { !String(decoding: $0, as: UTF8.self).contains("caller-B") } == true)
        #expect(code { try verifier.verify(request) } == nil)
        #expect(code { try verifier.verify(request) } == .replayedNonce)

        let stranger = try await signed(
            try Request("https://api.test/open/listings?x=1"),
            with: .signing(try .thirdParty(callerKey: "caller-Z", transportKey: transport)))
        #expect(code { try verifier.verify(stranger) } == .unknownCaller)

        let otherSDK = try await signed(
            try Request("https://api.test/open/listings?x=1"),
            with: .signing(try .thirdParty(callerKey: "caller-A", transportKey: Data(repeating: 7, count: 32))))
        #expect(code { try verifier.verify(otherSDK) } == .malformedHeader)

        // The envelope is bound to its request's nonce: moved onto another request it does not open.
        var lifted = try await signed(
            try Request("https://api.test/open/listings?x=1"),
            with: .signing(try .thirdParty(callerKey: "caller-A", transportKey: transport)))
        lifted.headers["X-Runway-Caller-Key"] = envelope
        #expect(code { try verifier.verify(lifted) } == .malformedHeader)
    }

    @Test func retriedCallsAreSignedAfresh() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret)
        let stub = StubDispatcher(status: 200)
        /// Calls the rest of the chain twice, as a retry interceptor placed before signing does.
        struct Twice: Interceptor {
            func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
                _ = try await next(request, context)
                return try await next(request, context)
            }
        }
        let signing = try SigningInterceptor.signing(secret: Self.secret)
        let pipeline = Pipeline(dispatcher: stub) {
            Twice()
            signing
        }
        _ = try await pipeline.send(try Request("https://api.test/x"))
        #expect(stub.requests.count == 2)
        #expect(stub.requests[0].headers["X-Runway-Nonce"] != stub.requests[1].headers["X-Runway-Nonce"])
        for request in stub.requests { #expect(code { try verifier.verify(request) } == nil) }
    }

    @Test func badConfigurationIsRejectedAtRegistration() {
        func code(_ body: () throws -> Void) -> RunwayError.Code? {
            do {
                try body()
                return nil
            } catch { return (error as? RunwayError)?.code }
        }
        #expect(code { _ = try SigningInterceptor.signing(secret: "") } == .configuration)
        #expect(code { _ = try SigningScheme.hmacSHA256(secret: "x", keyID: "has space") } == .configuration)
        #expect(code { _ = try SigningScheme.saltedHash(secret: "") } == .configuration)
        #expect(code { _ = try SigningScheme.thirdParty(callerKey: "", transportKey: Data(count: 32)) } == .configuration)
        #expect(code { _ = try SigningScheme.thirdParty(callerKey: "a", transportKey: Data(count: 10)) } == .configuration)
        #expect(code { _ = try SignatureVerifier.hmacSHA256(secret: "") } == .configuration)
        #expect(code { _ = try SignatureVerifier.hmacSHA256(secret: "x", maxClockSkew: .zero) } == .configuration)
        // Timestamps are whole seconds: half a second would reject every request.
        #expect(code { _ = try SignatureVerifier.hmacSHA256(secret: "x", maxClockSkew: .milliseconds(500)) } == .configuration)
        #expect(code { _ = try SignatureVerifier.thirdParty(transportKey: Data(count: 32), callerKeys: []) } == .configuration)
    }

    @Test func nonceCacheIsBounded() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: Self.secret, nonces: NonceCache(capacity: 2))
        let interceptor = try SigningInterceptor.signing(secret: Self.secret)
        for _ in 0..<2 {
            #expect(code { try verifier.verify(try interceptor.sign(try Request("https://api.test/x"), apiName: nil)) } == nil)
        }
        let third = try interceptor.sign(try Request("https://api.test/x"), apiName: nil)
        #expect(code { try verifier.verify(third) } == .tooManyNonces)
        // Once the window has passed the old nonces are forgotten.
        let later = try interceptor.sign(try Request("https://api.test/x"), apiName: nil, now: Date().addingTimeInterval(700))
        #expect(code { try verifier.verify(later, now: Date().addingTimeInterval(700)) } == nil)
    }
}
