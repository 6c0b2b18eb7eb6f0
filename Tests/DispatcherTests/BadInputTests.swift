import Foundation
import Runway
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
        for text in ["http://127.0.0.1:99999/x", "http://127.0.0.1:65536/x", "https://localhost:123456/"] {
            let request = makeRequest(try #require(URL(string: text)))
            // The request's own check, which every dispatcher runs before it does anything.
            var invalid: RunwayError?
            do { try request.validate() } catch { invalid = error }
            #expect(invalid?.code == .invalidURL, "\(text)")
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .invalidURL, "\(text): \(String(describing: error))")
            #expect(error?.message.contains("outside 0–65535") == true, "\(text): \(String(describing: error))")
        }
        // The highest port is a port.
        let highest = makeRequest(try #require(URL(string: "http://127.0.0.1:65535/x")))
        #expect(throws: Never.self) { try highest.validate() }
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
