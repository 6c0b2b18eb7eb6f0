import Crypto
import Foundation
import Runway
import RunwayCurl
import RunwaySigning
import RunwayTestServer
import Testing

/// Signing against a real in-process server that verifies every request with `SignatureVerifier`.
@Suite struct SigningServerTests {
    static let secret = "server-shared-secret"

    /// Rewrites the URL after signing, as a man in the middle would.
    struct Rewrite: Interceptor {
        let transform: @Sendable (URL) -> URL
        func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
            var request = request
            request.url = transform(request.url)
            return try await next(request, context)
        }
    }

    /// Sends the same (already signed) request twice: a replay.
    struct Replay: Interceptor {
        func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
            _ = try await next(request, context)
            return try await next(request, context)
        }
    }

    func withServer<T>(_ verifier: SignatureVerifier, apiName: String? = nil, _ body: (TestServer) async throws -> T) async throws -> T {
        try await withTestServer(routes: VerifyingRoutes.add(verifier, apiName: apiName), body)
    }

    func text(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func signedRequestsVerifyOnTheServer() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let pipeline = Pipeline(interceptors: [try SigningInterceptor.signing(secret: Self.secret)], dispatcher: CurlDispatcher())
            let get = try await pipeline.send(
                Request(url: server.url("/signed/listings/%E4%B8%8A%E6%B5%B7?city=%E4%B8%8A%E6%B5%B7&page=2&q=a+b")))
            #expect(get.status == 200, "\(text(get))")
            let post = try await pipeline.send(
                Request(
                    method: .post, url: server.url("/signed/orders?source=app"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data("item=42&note=%26%3D".utf8)))
            #expect(post.status == 200, "\(text(post))")
            let json = try await pipeline.send(
                Request(
                    method: .post, url: server.url("/signed/orders"), headers: ["Content-Type": "application/json"],
                    body: Data(#"{"item":42}"#.utf8)))
            #expect(json.status == 200, "\(text(json))")
            let unsigned = try await Pipeline(interceptors: [], dispatcher: CurlDispatcher())
                .send(Request(url: server.url("/signed/x")))
            #expect(unsigned.status == 401)
            #expect(text(unsigned) == "missingHeader")
        }
    }

    @Test("a binary secret, no UTF-8 text, verifies on a server given the same bytes, with or without a key ID")
    func binarySecretVerifiesOnTheServer() async throws {
        let key = Data([0xFF, 0xFE, 0x00, 0x80, 0xC3, 0x28, 0x01, 0x7F])
        for keyID in [nil, "2026-12"] {
            let verifier = try keyID.map { try SignatureVerifier.hmacSHA256(keys: [$0: key]) } ?? .hmacSHA256(secret: key)
            try await withServer(verifier) { server in
                let signing = SigningInterceptor.signing(try .hmacSHA256(secret: key, keyID: keyID))
                let pipeline = Pipeline(interceptors: [signing], dispatcher: CurlDispatcher())
                let response = try await pipeline.send(
                    Request(
                        method: .post, url: server.url("/signed/orders?a=1"), headers: ["Content-Type": "application/json"],
                        body: Data("{}".utf8)))
                #expect(response.status == 200, "\(keyID ?? "no key ID"): \(text(response))")
                // Another key of the same length is refused.
                let other = SigningInterceptor.signing(try .hmacSHA256(secret: Data(key.reversed()), keyID: keyID))
                let refused = try await Pipeline(interceptors: [other], dispatcher: CurlDispatcher()).send(
                    Request(url: server.url("/signed/x")))
                #expect(refused.status == 401, "\(text(refused))")
            }
        }
        #expect(throws: RunwayError.self) { try SignatureVerifier.hmacSHA256(keys: ["": Data()]) }
    }

    @Test func tamperedValueIsRejectedReorderedParametersAreNot() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let signing = try SigningInterceptor.signing(secret: Self.secret)
            let tampered = Pipeline(dispatcher: CurlDispatcher()) {
                signing
                Rewrite { URL(string: $0.absoluteString.replacingOccurrences(of: "amount=1", with: "amount=100")) ?? $0 }
            }
            let rejected = try await tampered.send(Request(url: server.url("/signed/pay?amount=1&to=alice")))
            #expect(rejected.status == 401)
            #expect(text(rejected) == "signatureMismatch")

            let reordered = Pipeline(dispatcher: CurlDispatcher()) {
                signing
                Rewrite { URL(string: $0.absoluteString.replacingOccurrences(of: "amount=1&to=alice", with: "to=alice&amount=1")) ?? $0 }
            }
            let accepted = try await reordered.send(Request(url: server.url("/signed/pay?amount=1&to=alice")))
            #expect(accepted.status == 200, "\(text(accepted))")
        }
    }

    @Test func replayedRequestIsRejectedButRetriesBeforeSigningAreFresh() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let signing = try SigningInterceptor.signing(secret: Self.secret)
            // Replay after signing: the same nonce twice.
            let replaying = Pipeline(dispatcher: CurlDispatcher()) {
                signing
                Replay()
            }
            let second = try await replaying.send(Request(url: server.url("/signed/pay?amount=1")))
            #expect(second.status == 401)
            #expect(text(second) == "replayedNonce")
            // Retrying before signing: each attempt is signed afresh and accepted.
            let retrying = Pipeline(dispatcher: CurlDispatcher()) {
                Replay()
                signing
            }
            let retried = try await retrying.send(Request(url: server.url("/signed/pay?amount=1")))
            #expect(retried.status == 200, "\(text(retried))")
            #expect(server.stats.totalRequests == 4)
        }
    }

    /// A redirect followed in the chain sends the next request through signing again: signed for
    /// its own path, query and body with a fresh nonce. Followed by the dispatcher, it carries
    /// the first request's signature, which the server refuses.
    @Test func aRedirectFollowedInTheChainIsSignedForWhereItLeads() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let signing = try SigningInterceptor.signing(secret: Self.secret)
            let pipeline = Pipeline(interceptors: [try .redirects(), signing], dispatcher: CurlDispatcher())
            let target = "/signed/orders%3Fsource%3Dapp"
            for (status, method) in [(307, "POST"), (303, "GET")] {
                let request = Request(
                    method: .post, url: server.url("/redirect-to?status=\(status)&url=\(target)"),
                    headers: ["Content-Type": "application/json"], body: Data(#"{"item":42}"#.utf8))
                let response = try await pipeline.send(request)
                #expect(response.status == 200, "\(status) → \(method): \(text(response))")
                var follow = request
                follow.options.redirects = .follow(max: 1)
                let followed = try await Pipeline(interceptors: [signing], dispatcher: CurlDispatcher()).send(follow)
                #expect(followed.status == 401, "\(status) followed by libcurl")
            }
            #expect(server.stats.requests(path: "/signed/orders") == 4)
        }
    }

    /// A body sent without a `Content-Type` is signed as no form, and goes without one: libcurl's
    /// default (`application/x-www-form-urlencoded`) would make the server read the body as form
    /// fields, and the signature would not match.
    @Test func aBodyWithoutAContentTypeVerifiesOnTheServer() async throws {
        let verifying = VerifyingRoutes.add(try .hmacSHA256(secret: Self.secret))
        let routes: TestServer.Routes = { router in
            verifying(router)
            CapturingRoutes.add(router)
        }
        try await withTestServer(routes: routes) { server in
            let pipeline = Pipeline(interceptors: [try SigningInterceptor.signing(secret: Self.secret)], dispatcher: CurlDispatcher())
            let body = Data(#"{"item":42}"#.utf8)
            let received = try await PythonVerifierTests.capture(
                Request(method: .post, url: server.url("/capture/orders"), body: body), through: pipeline)
            #expect(received.headers["content-type"] == nil)
            #expect(received.body == body)
            let response = try await pipeline.send(Request(method: .post, url: server.url("/signed/orders"), body: body))
            #expect(response.status == 200, "\(text(response))")
        }
    }

    /// The server reads `Content-Type` without the spaces and tabs around it (HTTP does not count
    /// them), so the signer decides "form or not" on that value too: a form body that does not
    /// decode exactly, signed with the `?` parameters line, must not lose its body line to a
    /// leading space the server never sees.
    @Test func aContentTypeWithBlanksAroundItIsSignedAsTheServerReadsIt() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let pipeline = Pipeline(interceptors: [try SigningInterceptor.signing(secret: Self.secret)], dispatcher: CurlDispatcher())
            for (contentType, body) in [
                ("  application/x-www-form-urlencoded", "item=%zz"), ("\tapplication/x-www-form-urlencoded \t", "item=42&note=%FF"),
                (" application/x-www-form-urlencoded", "item=42"),
            ] {
                let response = try await pipeline.send(
                    Request(
                        method: .post, url: server.url("/signed/orders?source=app"), headers: ["Content-Type": contentType],
                        body: Data(body.utf8)))
                #expect(response.status == 200, "\(contentType.debugDescription) \(body): \(text(response))")
            }
            // A streamed form is refused whatever blanks surround its type.
            var streamed = Request(
                method: .post, url: server.url("/signed/uploads"), headers: ["Content-Type": " application/x-www-form-urlencoded"])
            streamed.bodyStream = .sequence(length: 3, sha256: Data(SHA256.hash(data: Data("a=1".utf8)))) {
                AsyncStream<Data> { continuation in
                    continuation.yield(Data("a=1".utf8))
                    continuation.finish()
                }
            }
            await #expect {
                try await pipeline.send(streamed)
            } throws: { error in
                (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.field == "bodyStream"
            }
        }
    }

    @Test func staleTimestampIsRejectedByTheServer() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret, maxClockSkew: .seconds(30))) { server in
            /// Signs with a clock 10 minutes slow.
            struct SlowClockSigning: Interceptor {
                let signing: SigningInterceptor
                func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
                    try await next(try signing.sign(request, apiName: nil, now: Date().addingTimeInterval(-600)), context)
                }
            }
            let pipeline = Pipeline(
                interceptors: [SlowClockSigning(signing: try .signing(secret: Self.secret))], dispatcher: CurlDispatcher())
            let response = try await pipeline.send(Request(url: server.url("/signed/x")))
            #expect(response.status == 401)
            #expect(text(response) == "staleTimestamp")
        }
    }

    @Test func saltedHashAndThirdPartySchemesVerifyOnTheServer() async throws {
        try await withServer(try .saltedHash(secret: "legacy", salt: "pepper"), apiName: "listing.rent") { server in
            let pipeline = Pipeline(
                interceptors: [SigningInterceptor(try .saltedHash(secret: "legacy", salt: "pepper"))], dispatcher: CurlDispatcher())
            let ok = try await pipeline.send(
                Request(url: server.url("/signed/rent?city=sh&page=1")), context: RequestContext(apiName: "listing.rent"))
            #expect(ok.status == 200, "\(text(ok))")
            let wrongAPI = try await pipeline.send(
                Request(url: server.url("/signed/rent?city=sh&page=1")), context: RequestContext(apiName: "listing.sale"))
            #expect(wrongAPI.status == 401)
        }
        let transport = Data((0..<16).map { UInt8($0 * 3) })
        try await withServer(try .thirdParty(transportKey: transport, callerKeys: ["partner-1", "partner-2"])) { server in
            let partner = Pipeline(
                interceptors: [SigningInterceptor(try .thirdParty(callerKey: "partner-2", transportKey: transport))],
                dispatcher: CurlDispatcher())
            let ok = try await partner.send(Request(url: server.url("/signed/open/listings?x=1")))
            #expect(ok.status == 200, "\(text(ok))")
            let stranger = Pipeline(
                interceptors: [SigningInterceptor(try .thirdParty(callerKey: "partner-9", transportKey: transport))],
                dispatcher: CurlDispatcher())
            let rejected = try await stranger.send(Request(url: server.url("/signed/open/listings?x=1")))
            #expect(rejected.status == 401)
            #expect(text(rejected) == "unknownCaller")
        }
    }

    @Test("a streamed body is signed by its declared SHA-256 and verifies on the server; without one it is refused")
    func streamedBodies() async throws {
        try await withServer(try .hmacSHA256(secret: Self.secret)) { server in
            let pipeline = Pipeline(interceptors: [try SigningInterceptor.signing(secret: Self.secret)], dispatcher: CurlDispatcher())
            let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            let digest = Data(SHA256.hash(data: body))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-signed-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            var fromFile = Request(method: .post, url: server.url("/signed/uploads"), headers: ["Content-Type": "application/octet-stream"])
            fromFile.bodyStream = try .file(file, sha256: digest)
            let accepted = try await pipeline.send(fromFile)
            #expect(accepted.status == 200, "\(text(accepted))")

            // Chunked, from a sequence: the same digest, the same verdict.
            var fromSequence = fromFile
            fromSequence.bodyStream = .sequence(length: nil, sha256: digest) {
                AsyncStream<Data> { continuation in
                    for start in stride(from: 0, to: body.count, by: 30_000) {
                        continuation.yield(body[start..<min(start + 30_000, body.count)])
                    }
                    continuation.finish()
                }
            }
            let chunked = try await pipeline.send(fromSequence)
            #expect(chunked.status == 200, "\(text(chunked))")

            // A wrong digest signs, and the server (which hashes what it received) rejects it.
            var wrong = fromFile
            wrong.bodyStream = try .file(file, sha256: Data(SHA256.hash(data: Data("other".utf8))))
            let rejected = try await pipeline.send(wrong)
            #expect(rejected.status == 401)
            #expect(text(rejected) == "signatureMismatch")

            var undeclared = fromFile
            undeclared.bodyStream = try .file(file)
            await #expect {
                try await pipeline.send(undeclared)
            } throws: { error in
                (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.field == "bodyStream"
            }
            var form = fromFile
            form.headers["Content-Type"] = "application/x-www-form-urlencoded"
            await #expect {
                try await pipeline.send(form)
            } throws: { error in
                (error as? RunwayError)?.code == .configuration
            }
        }
    }
}
