import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Bad input and broken peers give typed errors, never a crash.
extension DispatcherSuite {
    @Test("malformed URLs are .invalidURL", arguments: DispatcherUnderTest.all)
    func malformedURL(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        for text in ["http:///no-host", "/relative/path", "http://exa mple.com/"] {
            guard let url = URL(string: text) else { continue }
            let error = await runwayError { try await dut.send(dispatcher, makeRequest(url)) }
            #expect(error?.code == .invalidURL, "\(text)")
        }
    }

    @Test("a port outside 0–65535 is .invalidURL, found before any I/O", arguments: DispatcherUnderTest.all)
    func portOutOfRange(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // The last is too large for an `Int`: Foundation reads it as no port at all.
        for text in [
            "http://127.0.0.1:99999/x", "http://127.0.0.1:65536/x", "https://localhost:123456/", "http://127.0.0.1:99999999999999999999/x",
        ] {
            let request = makeRequest(try #require(URL(string: text)))
            // The request's own check, which every dispatcher runs before it does anything.
            var invalid: RunwayError?
            do { try request.validate() } catch { invalid = error }
            #expect(invalid?.code == .invalidURL, "\(text)")
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .invalidURL, "\(text): \(String(describing: error))")
            #expect(error?.message.contains("is not a number from 0 to 65535") == true, "\(text): \(String(describing: error))")
            #expect(error?.neverSent == true)
        }
        // The highest port is a port.
        let highest = makeRequest(try #require(URL(string: "http://127.0.0.1:65535/x")))
        #expect(throws: Never.self) { try highest.validate() }
    }

    /// Foundation's parser takes these, and the dispatcher failed on them after the request
    /// counted as sent (libcurl's "URL using bad/illegal format", without `neverSent`).
    @Test(
        "a host that is no host name, or brackets around what is not IPv6, is .invalidURL before any I/O",
        arguments: DispatcherUnderTest.all)
    func hostThatIsNoHostName(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for text in [
                "http://127.0.0.1%2F.evil:\(server.port)/x", "http://%00:\(server.port)/", "http://a%40b:\(server.port)/",
                "http://[::g]:\(server.port)/x", "http://[127.0.0.1]:\(server.port)/x",
            ] {
                let request = makeRequest(try #require(URL(string: text)))
                #expect(throws: RunwayError.self, "\(text)") { try request.validate() }
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .invalidURL, "\(text): \(String(describing: error))")
                #expect(error?.neverSent == true, "\(text)")
            }
            #expect(server.stats.totalRequests == 0)
            // An internationalized name is percent-encoded in a URL, and an IPv6 address with its zone is one.
            for text in [
                "http://b%C3%BCcher.example/x", "http://[fe80::1%25eth0]:8080/x", "http://[::1]/x", "http://u%5Cv:p@host.example:/x",
            ] {
                let request = makeRequest(try #require(URL(string: text)))
                #expect(throws: Never.self, "\(text)") { try request.validate() }
            }
        }
    }

    /// URLs allow these in a host name (RFC 3986's sub-delimiters); libcurl refuses them. The
    /// request was failed by libcurl on the loop thread, as if it might have been sent.
    @Test("a host name libcurl refuses is .invalidURL before any I/O, in libcurl's words")
    func hostLibcurlRefuses() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            for host in ["a$b", "a!b", "a'b", "a*b", "a,b", "a+b", "a=b", "a&b", "a(b)"] {
                let text = "http://\(host):\(server.port)/x"
                let request = makeRequest(try #require(URL(string: text)))
                #expect(throws: Never.self, "\(text)") { try request.validate() }
                let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
                #expect(error?.code == .invalidURL, "\(text): \(String(describing: error))")
                #expect(error?.neverSent == true, "\(text)")
                #expect(error?.message.contains("Bad hostname") == true, "\(text): \(String(describing: error))")
            }
            #expect(server.stats.totalRequests == 0)
            // The same dispatcher goes on sending what it can read.
            let response = try await dispatcher.dispatch(makeRequest(server.url("/json")), context: RequestContext())
            #expect(response.status == 200)
        }
    }

    @Test("a character a URL's authority never holds raw is .invalidURL, not encoded into credentials")
    func authorityCharacters() throws {
        // A browser reads the first as a request to evil.example; Foundation would send it to
        // 127.0.0.1 with the credentials "evil.example\".
        for text in [
            "http://evil.example\\@127.0.0.1:8080/x", "http://a<b>@127.0.0.1/x", "http://a|b@127.0.0.1/x", "http://a{b}@127.0.0.1/",
        ] {
            #expect(throws: RunwayError.self, "\(text)") { try Request(text) }
            do throws(RunwayError) {
                _ = try Request(text)
            } catch {
                #expect(error.code == .invalidURL)
                #expect(error.message.contains("authority"), "\(error.message)")
            }
        }
        // In the path and query they are percent-encoded, as before.
        #expect(try Request("http://127.0.0.1/a|b?c={d}").url.absoluteString == "http://127.0.0.1/a%7Cb?c=%7Bd%7D")
    }

    @Test("a non-HTTP scheme is .unsupportedScheme", arguments: DispatcherUnderTest.all)
    func unsupportedScheme(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        for text in ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://127.0.0.1/"] {
            let url = try #require(URL(string: text))
            let error = await runwayError { try await dut.send(dispatcher, makeRequest(url)) }
            #expect(error?.code == .unsupportedScheme, "\(text)")
        }
    }

    @Test("CR or LF in a header value is .invalidHeader and nothing is sent", arguments: DispatcherUnderTest.all)
    func headerInjection(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for value in ["a\r\nX-Injected: 1", "a\nX-Injected: 1", "a\rb"] {
                let request = makeRequest(server.url("/echo"), headers: ["X-Evil": value])
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .invalidHeader)
                // Refused before any I/O: the error says so.
                #expect(error?.neverSent == true)
            }
            let badName = makeRequest(server.url("/echo"), headers: ["Bad Name": "x"])
            #expect(await runwayError { try await dut.send(dispatcher, badName) }?.code == .invalidHeader)
            // Two Host fields: libcurl sent the first alone, FoundationNetworking both joined by a comma.
            let twoHosts = makeRequest(server.url("/echo"), headers: HTTPHeaders([("Host", "a.example"), ("host", "b.example")]))
            let hostError = await runwayError { try await dut.send(dispatcher, twoHosts) }
            #expect(hostError?.code == .invalidHeader && hostError?.neverSent == true, "\(String(describing: hostError))")
            // Nor does the error's message carry the line break on into a log.
            let breakingName = makeRequest(server.url("/echo"), headers: ["X-A\r\nX-Forged": "x"])
            let message = await runwayError { try await dut.send(dispatcher, breakingName) }?.message ?? ""
            #expect(message.contains("\\r\\n") && !message.utf8.contains(0x0D) && !message.utf8.contains(0x0A), "\(message)")
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test(
        "a hand-set Content-Length that disagrees with the body, or Transfer-Encoding, is .invalidHeader",
        arguments: DispatcherUnderTest.all)
    func handSetFraming(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let body = Data("abc".utf8)
            // A sign is not a length, even where the number would match ("+3" is 3 to `Int`).
            let framings: [HTTPHeaders] = [
                ["Content-Length": "5"], ["content-length": "x"], ["Content-Length": "+3"], ["Content-Length": "3 3"],
                ["Transfer-Encoding": "chunked"],
            ]
            for headers in framings {
                let request = makeRequest(.post, server.url("/echo"), headers: headers, body: body)
                #expect(await runwayError { try await dut.send(dispatcher, request) }?.code == .invalidHeader, "\(headers)")
            }
            #expect(server.stats.totalRequests == 0)
            // The right length is harmless.
            let right = makeRequest(.post, server.url("/echo"), headers: ["Content-Length": "3"], body: body)
            let response = try await dut.send(dispatcher, right)
            #expect(response.status == 200)
        }
    }

    @Test("a header value of only spaces is sent, empty", arguments: DispatcherUnderTest.all)
    func blankHeaderValue(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let response = try await dut.send(dispatcher, makeRequest(server.url("/echo"), headers: ["X-Blank": "  ", "X-Empty": ""]))
            let echoed = try decodeEcho(response).headers
            #expect(echoed["x-blank"] == "")
            #expect(echoed["x-empty"] == "")
        }
    }

    @Test("a pin that is not sha256//<base64 of 32 bytes> is .configuration", arguments: DispatcherUnderTest.all(supporting: .pinning))
    func malformedPin(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let good = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
            for pin in [
                "p54iFiTOWeP4TWhYxPN4nXJ7Jw5pnXL2hSYzzNn0dPE=", "sha256//short", "sha256//" + Data(count: 20).base64EncodedString(),
            ] {
                let request = makeRequest(server.url("/json")) { $0.tls.pinnedPublicKeys = [good, pin] }
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .configuration, "\(pin)")
                #expect(error?.field == "tls.pinnedPublicKeys")
                #expect(error?.neverSent == true)
            }
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("a refused connection is .cannotConnect", arguments: DispatcherUnderTest.all)
    func connectionRefused(_ dut: DispatcherUnderTest) async throws {
        // Port 1 on loopback: nothing listens there, so the kernel refuses at once.
        let url = try #require(URL(string: "http://127.0.0.1:1/json"))
        let error = await runwayError { try await dut.send(dut.make(), makeRequest(url)) }
        #expect(error?.code == .cannotConnect)
        // Nothing left: a retry policy may send even a POST again.
        #expect(error?.neverSent == true)
    }

    @Test("a server gone after a response is .cannotConnect: its kept connection is not used", arguments: DispatcherUnderTest.all)
    func serverGone(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // An address of its own: the freed port may go to a server of another test, on 127.0.0.1.
        let server = try await TestServer.start(host: "127.0.0.41")
        let url = server.url("/json")
        #expect(try await dut.send(dispatcher, makeRequest(url)).status == 200)
        await server.shutdown()
        let error = await runwayError { try await dut.send(dispatcher, makeRequest(url)) }
        #expect(error?.code == .cannotConnect)
    }

    @Test("a connection reset mid-body is .connectionLost", arguments: DispatcherUnderTest.all)
    func resetMidBody(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let error = await runwayError { try await dut.send(dispatcher, makeRequest(server.url("/reset"))) }
            #expect(error?.code == .connectionLost)
            // The dispatcher is still usable afterwards.
            let after = try await dut.send(dispatcher, makeRequest(server.url("/json")))
            #expect(after.status == 200)
        }
    }

    @Test("an unknown host is .dnsFailure", arguments: DispatcherUnderTest.all)
    func unknownHost(_ dut: DispatcherUnderTest) async throws {
        let url = try #require(URL(string: "http://no-such-host.invalid/json"))
        let request = makeRequest(url) { $0.timeout = .seconds(20) }
        let error = await runwayError { try await dut.send(dut.make(), request) }
        #expect(error?.code == .dnsFailure)
    }
}
