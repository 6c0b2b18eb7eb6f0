import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// A failure's message carries libcurl's own words on it (its error buffer), so a user can tell
/// an untrusted issuer from a wrong name, or a refused port from an unresolved host.
extension DispatcherSuite {
    @Test("a TLS failure says what is wrong with the certificate: an issuer not trusted, a name that does not match")
    func tlsFailureSaysWhy() async throws {
        let pki = try await TestPKI.load()
        let dispatcher = CurlDispatcher()
        try await withTestServer(tls: pki.server) { server in
            let untrusted = await runwayError { try await dispatcher.dispatch(makeRequest(server.url("/json")), context: RequestContext()) }
            #expect(untrusted?.code == .tls)
            #expect(untrusted?.message.contains("SSL certificate problem") == true, "\(String(describing: untrusted))")
        }
        try await withTestServer(tls: pki.otherName) { server in
            let request = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            let wrongName = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(wrongName?.code == .tls)
            #expect(wrongName?.message.contains("target host name '127.0.0.1'") == true, "\(String(describing: wrongName))")
        }
    }

    @Test("a refused connection names the address and port it could not reach")
    func refusedSaysWhere() async throws {
        let error = await runwayError {
            try await CurlDispatcher().dispatch(makeRequest(URL(string: "http://127.0.0.1:1/x")!), context: RequestContext())
        }
        #expect(error?.code == .cannotConnect)
        #expect(error?.message.contains("127.0.0.1 port 1") == true, "\(String(describing: error))")
        #expect(error?.neverSent == true)
    }

    @Test("a malformed chunked body is .responseInvalid, which a retry does not send again", arguments: DispatcherUnderTest.all)
    func malformedChunkIsInvalidNotLost(_ dut: DispatcherUnderTest) async throws {
        let responder = try ScriptedResponder { _ in
            .replyAndClose(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n".utf8))
        }
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: dut.make())
        let error = await runwayError { try await pipeline.send(makeRequest(responder.url("/x"))) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("chunked") == true, "\(String(describing: error))")
        #expect(responder.exchanges.count == 1)
    }

    @Test("a connection closed in the middle of a chunked body is still .connectionLost")
    func closeInChunkedBodyIsLost() async throws {
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
        defer { responder.stop() }
        let error = await runwayError { try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext()) }
        #expect(error?.code == .connectionLost)
    }

    @Test("libcurl's words are left out when they hold the URL's query, fragment or credentials, or the proxy's")
    func detailWithASecretIsLeftOut() throws {
        let request = makeRequest(URL(string: "http://app-user:hunter2@api.test/x?token=abc123#frag-secret")!)
        #expect(CurlError.safeDetail("Failed to connect to api.test port 80", request: request, proxy: nil) != nil)
        for leaky in ["rejected hunter2", "bad token=abc123", "bad abc123", "as app-user", "at frag-secret"] {
            #expect(CurlError.safeDetail(leaky, request: request, proxy: nil) == nil, "\(leaky)")
        }
        let proxy = try #require(Proxy.http(host: "proxy.test", port: 3128, credentials: .init(user: "px-user", password: "s3cret")).server)
        let plain = makeRequest(URL(string: "http://a.test/")!)
        #expect(CurlError.safeDetail("Could not resolve proxy: proxy.test", request: plain, proxy: proxy) != nil)
        #expect(CurlError.safeDetail("auth s3cret refused", request: plain, proxy: proxy) == nil)
        #expect(CurlError.isMalformedChunk("Illegal or missing hexadecimal sequence in chunked-encoding"))
        #expect(!CurlError.isMalformedChunk("Recv failure: Connection reset by peer"))
    }

    @Test("the words of a dead reused connection libcurl got past are not given for a failure of another kind")
    func staleConnectionWordsAreLeftOut() {
        // libcurl keeps the first words of a transfer: a reply that is not HTTP, on the fresh
        // connection after the reused one was reset, would otherwise read as the reset.
        #expect(CurlError.isStale("Recv failure: Connection reset by peer", lostConnection: false))
        #expect(CurlError.isStale("Send failure: Broken pipe", lostConnection: false))
        #expect(!CurlError.isStale("Recv failure: Connection reset by peer", lostConnection: true))
        #expect(!CurlError.isStale("Illegal or missing hexadecimal sequence in chunked-encoding", lostConnection: false))
    }
}
