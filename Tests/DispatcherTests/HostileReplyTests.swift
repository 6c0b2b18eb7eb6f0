import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// What a server can do to a dispatcher that FoundationNetworking lets through on its own and
/// `CurlDispatcher` refuses: every dispatcher must end these the same way (found by probing
/// `URLSessionDispatcher` from outside).
extension DispatcherSuite {
    @Test("credentials do not follow a redirect to another origin", arguments: DispatcherUnderTest.all)
    func credentialsStayWithTheirOrigin(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let secrets: HTTPHeaders = ["Authorization": "Bearer SECRET", "Cookie": "sid=SECRET", "X-Keep": "kept"]
            func echoed(to target: URL) async throws -> [String: String] {
                let url = server.url("/redirect-to?url=" + target.absoluteString)
                let request = makeRequest(url, headers: secrets) { $0.redirects = .follow(max: 2) }
                let response = try await dut.send(dispatcher, request)
                #expect(response.status == 200)
                return try JSONDecoder().decode(EchoResponse.self, from: response.body).headers
            }
            let same = try await echoed(to: server.url("/echo"))
            #expect(same["authorization"] == "Bearer SECRET")
            #expect(same["cookie"] == "sid=SECRET")
            var other = try #require(URLComponents(url: server.url("/echo"), resolvingAgainstBaseURL: false))
            other.host = "localhost"
            let elsewhere = try await echoed(to: try #require(other.url))
            #expect(elsewhere["authorization"] == nil)
            #expect(elsewhere["cookie"] == nil)
            #expect(elsewhere["x-keep"] == "kept")
        }
    }

    @Test("a Proxy-Authorization header does not follow a redirect to another origin", arguments: DispatcherUnderTest.all)
    func proxyCredentialsStayWithTheirOrigin(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let secrets: HTTPHeaders = ["Proxy-Authorization": "Basic U0VDUkVU"]
            func send(to target: URL) async throws -> Response {
                let url = server.url("/redirect-to?url=" + target.absoluteString)
                return try await dut.send(dispatcher, makeRequest(url, headers: secrets) { $0.redirects = .follow(max: 2) })
            }
            // To its own origin, the redirect is followed.
            #expect(try await send(to: server.url("/echo")).status == 200)
            var other = try #require(URLComponents(url: server.url("/echo"), resolvingAgainstBaseURL: false))
            other.host = "localhost"
            let elsewhere = try #require(other.url)
            let response = try await send(to: elsewhere)
            if response.status == 200 {
                // Followed without the header (URLSessionDispatcher).
                let headers = try JSONDecoder().decode(EchoResponse.self, from: response.body).headers
                #expect(headers["proxy-authorization"] == nil)
            } else {
                // Not followed: the redirect is the response (CurlDispatcher).
                #expect(response.status == 302)
                #expect(response.headers["Location"] == elsewhere.absoluteString)
                #expect(server.stats.requests(path: "/echo") == 1)
            }
        }
    }

    @Test(
        "a redirect to another scheme is refused, not rewritten into a path on the same host",
        arguments: DispatcherUnderTest.all, ["file:///echo/etc/passwd", "mailto:echo@example.com", "ftp://127.0.0.1/echo"])
    func redirectToAnotherScheme(_ dut: DispatcherUnderTest, _ location: String) async throws {
        try await withTestServer { server in
            let request = makeRequest(server.url("/redirect-to?url=" + location)) { $0.redirects = .follow(max: 2) }
            let error = await runwayError { try await dut.send(dut.make(), request) }
            #expect(error?.code == .unsupportedScheme)
            #expect(server.stats.requests(path: "/echo/etc/passwd") == 0)
        }
    }

    @Test("a 307 or 308 sends the body again; a 303 turns the POST into a GET", arguments: DispatcherUnderTest.all)
    func redirectKeepsTheBody(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for status in [307, 308, 303] {
                let url = server.url("/redirect-to?status=\(status)&url=/echo")
                let request = makeRequest(
                    .post, url, headers: ["Content-Type": "text/plain"], body: Data("payload".utf8)
                ) { $0.redirects = .follow(max: 2) }
                guard status == 303 || dut.capabilities.contains(.bodyOnRedirect) else {
                    // Refused, never sent empty.
                    let error = await runwayError { try await dut.send(dispatcher, request) }
                    #expect(error?.code == .configuration && error?.field == "redirects", "\(String(describing: error))")
                    continue
                }
                let response = try await dut.send(dispatcher, request)
                let echo = try JSONDecoder().decode(EchoResponse.self, from: response.body)
                #expect(echo.method == (status == 303 ? "GET" : "POST"), "\(status)")
                #expect(echo.bodyLength == (status == 303 ? 0 : 7), "\(status)")
            }
            #expect(server.stats.requests(path: "/echo") == (dut.capabilities.contains(.bodyOnRedirect) ? 3 : 1))
        }
    }

    /// Where the body cannot go again (`redirectOfOtherMethods` below checks the dispatchers that
    /// send it).
    @Test(
        "a 301 or 302 of a PUT, PATCH or DELETE with a body is refused where the body cannot go again: never sent empty",
        arguments: DispatcherUnderTest.all(lacking: .bodyOnRedirect))
    func redirectOfOtherMethodsWithABodyIsRefused(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for status in [301, 302] {
                for method in [HTTPMethod.put, .patch, .delete] {
                    let request = makeRequest(
                        method, server.url("/redirect-to?status=\(status)&url=/echo"), headers: ["Content-Type": "text/plain"],
                        body: Data("payload".utf8)
                    ) { $0.redirects = .follow(max: 2) }
                    let error = await runwayError { try await dut.send(dispatcher, request) }
                    #expect(
                        error?.code == .configuration && error?.field == "redirects", "\(status) \(method): \(String(describing: error))")
                }
            }
            #expect(server.stats.requests(path: "/echo") == 0)
        }
    }

    @Test(
        "a 301 or 302 keeps a PUT, PATCH or DELETE with its body; a 303 to one is returned, never followed with that method",
        arguments: DispatcherUnderTest.all(supporting: .bodyOnRedirect))
    func redirectOfOtherMethods(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for status in [301, 302, 303, 307, 308] {
                for (method, body) in [(HTTPMethod.put, "payload"), (.patch, "payload"), (.delete, "payload"), (.delete, nil)] {
                    let label = "\(status) \(method) \(body ?? "without a body")"
                    let url = server.url("/redirect-to?status=\(status)&url=/echo")
                    let request = makeRequest(
                        method, url, headers: ["Content-Type": "text/plain"], body: body.map { Data($0.utf8) }
                    ) { $0.redirects = .follow(max: 2) }
                    let sentBefore = server.stats.requests(path: "/echo")
                    let response = try await dut.send(dispatcher, request)
                    guard status != 303 else {
                        // libcurl would send the same method, without its body, to the new address.
                        #expect(response.status == 303, "\(label)")
                        #expect(response.headers["Location"] == "/echo", "\(label)")
                        #expect(server.stats.requests(path: "/echo") == sentBefore, "\(label)")
                        continue
                    }
                    let echo = try decodeEcho(response)
                    #expect(echo.method == method.rawValue, "\(label)")
                    #expect(echo.bodyLength == body?.utf8.count ?? 0, "\(label)")
                    if let body { #expect(echo.body == body, "\(label)") }
                }
            }
            // A POST without a body becomes a GET on a 301, 302 or 303, as one with a body does.
            for status in [301, 302, 303, 307, 308] {
                let request = makeRequest(.post, server.url("/redirect-to?status=\(status)&url=/echo")) { $0.redirects = .follow(max: 2) }
                let echo = try decodeEcho(try await dut.send(dispatcher, request))
                #expect(echo.method == (status < 307 ? "GET" : "POST"), "\(status)")
            }
        }
    }

    @Test("a timeout or a cancellation in the middle of a redirect chain ends the call, nothing else", arguments: DispatcherUnderTest.all)
    func abortDuringRedirects(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for round in 0..<40 {
                let timeout = Duration.milliseconds(1 + round % 8)
                let request = makeRequest(server.url("/redirect/20")) {
                    $0.redirects = .follow(max: 30)
                    $0.timeout = timeout
                }
                // Either the chain or the timeout wins; either way the call ends as one or the other.
                let error = await runwayErrorUnlessItSucceeds { try await dut.send(dispatcher, request) }
                #expect(error == nil || error?.code == .timeout, "\(String(describing: error))")
                let call = Task {
                    try await dut.send(dispatcher, makeRequest(server.url("/redirect/20")) { $0.redirects = .follow(max: 30) })
                }
                try await Task.sleep(for: .microseconds(500 * (round % 10)))
                call.cancel()
                let outcome = await runwayErrorUnlessItSucceeds { try await call.value }
                #expect(outcome == nil || outcome?.code == .cancelled, "\(String(describing: outcome))")
            }
            // Still serving.
            #expect(try await dut.send(dispatcher, makeRequest(server.url("/json"))).status == 200)
        }
    }

    @Test(
        "a Content-Length that is not one number, or a status outside 100-599, is .responseInvalid",
        arguments: DispatcherUnderTest.all,
        [
            "HTTP/1.1 200 OK\r\nContent-Length: 5 6\r\n\r\nhello", "HTTP/1.1 200 OK\r\nContent-Length: 5, 11\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello",
            "HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 99 Odd\r\nContent-Length: 2\r\n\r\nok",
        ])
    func badFraming(_ dut: DispatcherUnderTest, _ reply: String) async throws {
        let error = try await error(of: dut, answered: reply)
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
    }

    @Test(
        "a reply the dispatcher cannot read is .responseInvalid, never a transport failure",
        arguments: DispatcherUnderTest.all,
        [
            "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
            "HTTP/1.1 200 OK\r\nX-Name: caf\u{E9}\r\nContent-Length: 2\r\n\r\nok",
        ])
    func unreadableOrRead(_ dut: DispatcherUnderTest, _ reply: String) async throws {
        // libcurl reads all three; FoundationNetworking refuses them.
        let responder = try RawResponder(reply: Array(reply.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }))
        defer { responder.stop() }
        do {
            let response = try await dut.send(dut.make(), makeRequest(responder.url("/x")))
            #expect(response.body == Data("ok".utf8))
        } catch {
            #expect((error as? RunwayError)?.code == .responseInvalid, "\(error)")
        }
    }

    /// How a GET through `dut` ends when a raw socket answers it with `reply`.
    private func error(of dut: DispatcherUnderTest, answered reply: String) async throws -> RunwayError? {
        let responder = try RawResponder(reply)
        defer { responder.stop() }
        return await runwayError { try await dut.send(dut.make(), makeRequest(responder.url("/x"))) }
    }

    @Test(
        "a redirect status without a Location is the response, its body whole, or .responseInvalid; never a shorter body",
        arguments: DispatcherUnderTest.all)
    func redirectStatusWithoutLocation(_ dut: DispatcherUnderTest) async throws {
        for status in [301, 302, 303, 307, 308] {
            let responder = try RawResponder("HTTP/1.1 \(status) Moved\r\nContent-Length: 10\r\n\r\nhello-body")
            defer { responder.stop() }
            for follows in [false, true] {
                let request = makeRequest(responder.url("/x")) { $0.redirects = follows ? .follow(max: 2) : .none }
                do {
                    let response = try await dut.send(dut.make(), request)
                    #expect(response.status == status && response.body == Data("hello-body".utf8), "\(status), follows: \(follows)")
                } catch {
                    // FoundationNetworking holds such a body back.
                    #expect(dut.name == "URLSession" && (error as? RunwayError)?.code == .responseInvalid, "\(status): \(error)")
                }
            }
        }
    }

    @Test("a body-less answer is not held to the size limit by the length it announces", arguments: DispatcherUnderTest.all)
    func bodylessAnswersAnnounceFreely(_ dut: DispatcherUnderTest) async throws {
        let head = try RawResponder("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n")
        defer { head.stop() }
        let headRequest = makeRequest(.head, head.url("/x")) { $0.maxResponseSize = 1000 }
        #expect(try await dut.send(dut.make(), headRequest).status == 200)
        let notModified = try RawResponder("HTTP/1.1 304 Not Modified\r\nContent-Length: 1000000000\r\n\r\n")
        defer { notModified.stop() }
        let response = try await dut.send(dut.make(), makeRequest(notModified.url("/x")) { $0.maxResponseSize = 1000 })
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
    }

    @Test("a body in a coding that was not asked for is .responseInvalid, never decoded to nothing", arguments: DispatcherUnderTest.all)
    func codingNotAskedFor(_ dispatcher: DispatcherUnderTest) async throws {
        for coding in ["br", "zstd", "x-custom"] {
            let responder = try ScriptedResponder { _ in
                .replyAndClose(Array("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: 5\r\n\r\nabcde".utf8))
            }
            defer { responder.stop() }
            let error = await runwayError {
                try await dispatcher.make().dispatch(makeRequest(responder.url("/x")), context: RequestContext())
            }
            #expect(error?.code == .responseInvalid, "\(coding): \(String(describing: error))")
            // What was asked for is what the dispatcher can check.
            let head = responder.exchanges.first?.head.lowercased() ?? ""
            let asked = head.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("accept-encoding:") }
            #expect(asked == ["accept-encoding: gzip, deflate"], "\(head)")
        }
    }

    @Test("a gzip body that cannot be decoded (corrupt, or bytes after its end) is .responseInvalid", arguments: DispatcherUnderTest.all)
    func undecodableBody(_ dut: DispatcherUnderTest) async throws {
        // "hello", gzip-coded.
        let hello: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x86, 0xA6, 0x10, 0x36,
            0x05, 0x00, 0x00, 0x00,
        ]
        let corrupt = Array(hello.prefix(10)) + Array(repeating: 0x41, count: 15)
        for body in [corrupt, hello + Array("trail".utf8)] {
            let head = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            let responder = try RawResponder(reply: head + body)
            defer { responder.stop() }
            let error = await runwayError { try await dut.send(dut.make(), makeRequest(responder.url("/x"))) }
            #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        }
    }

    @Test("a body cut short is .connectionLost, which a retry policy reads as such", arguments: DispatcherUnderTest.all)
    func cutBodyIsConnectionLost(_ dut: DispatcherUnderTest) async throws {
        for reply in [
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        ] {
            let error = try await error(of: dut, answered: reply)
            #expect(error?.code == .connectionLost, "\(reply): \(String(describing: error))")
        }
    }

    @Test("a download never replaces a folder that stands in its place", arguments: DispatcherUnderTest.all)
    func downloadOntoAFolder(_ dut: DispatcherUnderTest) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-folder-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("file.bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: folder.appendingPathComponent("inside.txt"))
        try await withTestServer { server in
            var request = makeRequest(server.url("/download/1000"))
            request.download = DownloadTarget(file: folder)
            let error = await runwayError { try await dut.send(dut.make(), request) }
            #expect(error?.code == .fileIO, "\(String(describing: error))")
            let kept = try Data(contentsOf: folder.appendingPathComponent("inside.txt"))
            #expect(kept == Data("keep me".utf8))
        }
    }
}

/// Error messages reach logs, HAR files and spans: they never repeat what a URL's user name,
/// password, query or fragment held.
extension DispatcherSuite {
    @Test(
        "a failure's message names the URL without its credentials, path parameters, query and fragment",
        arguments: DispatcherUnderTest.all)
    func failureMessagesHideURLSecrets(_ dut: DispatcherUnderTest) async throws {
        let refused = try #require(URL(string: "http://SECRET-USER:SECRET-PASS@127.0.0.1:1/x?token=SECRET-TOKEN#SECRET-FRAG"))
        let error = await runwayError { try await dut.send(dut.make(), makeRequest(refused)) }
        let cut = try RawResponder("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
        defer { cut.stop() }
        let lost = await runwayError {
            try await dut.send(dut.make(), makeRequest(cut.url("/x;jsessionid=SECRET-SESSION/y?access_token=SECRET-TOKEN")))
        }
        for error in [error, lost] {
            let text = "\(String(describing: error)) \(error?.message ?? "")"
            #expect(error != nil)
            #expect(!text.contains("SECRET"), "\(text)")
        }
    }
}
