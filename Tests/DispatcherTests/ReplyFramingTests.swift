import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// Replies whose framing libcurl 7.88 would pass on, or misname, and what `CurlDispatcher`
/// makes of them; and the total timeout of a request that waits for a free connection.
extension DispatcherSuite {
    @Test("a header section over libcurl's total limit is .responseTooLarge, which a retry does not send again")
    func oversizedHeadIsTooLarge() async throws {
        // 40,000 fields of 12 bytes: 480 KB in all, each field far under the 100 KB limit of one.
        let head = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 1\r\n", count: 40_000) + "Content-Length: 2\r\n\r\nok"
        let responder = try ScriptedResponder { _ in .replyAndClose(Array(head.utf8)) }
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        let error = await runwayError { try await pipeline.send(makeRequest(responder.url("/x"))) }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
        #expect(responder.exchanges.count == 1)
    }

    @Test("bytes a server writes on an idle kept-alive connection never become the next request's response")
    func unaskedBytesOnAnIdleConnection() async throws {
        let unasked = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL".utf8)
        let responder = try ScriptedResponder { exchange in
            let body = String(exchange.target.split(separator: "=").last ?? "")
            let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
            // The first answer on each connection is followed, on the idle connection, by a
            // response nobody asked for.
            return exchange.index == 0 ? .replyThenUnasked(reply, after: .milliseconds(100), unasked: unasked) : .reply(reply)
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        for streams in [false, true] {
            for number in 0..<3 {
                var request = makeRequest(responder.url("/x?body=\(streams)\(number)"))
                request.streamsResponseBody = streams
                let response = try await dispatcher.dispatch(request, context: RequestContext())
                var body = response.body
                if let stream = response.bodyStream {
                    for try await chunk in stream { body.append(chunk) }
                }
                #expect(String(decoding: body, as: UTF8.self) == "\(streams)\(number)", "streamed: \(streams), call \(number)")
                // The unasked bytes are on the wire before the next call starts.
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        // Each connection answered one request: the one the bytes came on was not used again.
        #expect(responder.connectionCount == 6, "\(responder.connectionCount) connections")
    }

    @Test(
        "bytes past a response's Content-Length never become the next response: it is answered, or .responseInvalid",
        arguments: DispatcherUnderTest.all)
    func bytesPastTheContentLength(_ dut: DispatcherUnderTest) async throws {
        let responder = try ScriptedResponder { exchange in
            guard exchange.target != "/long" else {
                // The bytes past the end come a moment after the response, once it has been read.
                return .replyThenUnasked(
                    Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), after: .milliseconds(100),
                    unasked: Array("and 44 bytes more, which are not a response".utf8))
            }
            return .reply(Self.replyWithItsQuery(exchange))
        }
        defer { responder.stop() }
        let dispatcher = dut.make()
        #expect(try await dut.send(dispatcher, makeRequest(responder.url("/long"))).body == Data("ok".utf8))
        try await Task.sleep(for: .milliseconds(300))
        do {
            let next = try await dut.send(dispatcher, makeRequest(responder.url("/x?body=next")))
            #expect(next.body == Data("next".utf8))
        } catch {
            // FoundationNetworking reads the bytes as the next request's reply: not HTTP.
            #expect(dut.name == "URLSession" && (error as? RunwayError)?.code == .responseInvalid, "\(error)")
        }
    }

    @Test(
        "a 204 that announces a body does not keep its connection: bytes after it never become the next response",
        arguments: DispatcherUnderTest.all(supporting: .closesUntrustedConnections), ["Content-Length: 42", "Transfer-Encoding: chunked"])
    func noContentAnnouncingABody(_ dut: DispatcherUnderTest, _ field: String) async throws {
        let responder = try ScriptedResponder { exchange in
            guard exchange.target != "/204" else {
                // The body the 204 announces comes late, once the client may have sent its next request.
                return .replyThenUnasked(
                    Array("HTTP/1.1 204 No Content\r\n\(field)\r\n\r\n".utf8), after: .milliseconds(250), unasked: Self.evilReply)
            }
            return .reply(Self.replyWithItsQuery(exchange))
        }
        defer { responder.stop() }
        let dispatcher = dut.make()
        func call(_ method: HTTPMethod, _ word: String) async throws -> String {
            let request = makeRequest(method, responder.url("/x?body=\(word)"), body: method == .post ? Data("sent".utf8) : nil)
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200, "\(method) \(word)")
            return String(decoding: response.body, as: UTF8.self)
        }
        // Each call goes at once after the 204, before the bytes that follow it arrive.
        for (method, word, streams) in [(HTTPMethod.get, "a", false), (.post, "b", true)] {
            var request = makeRequest(responder.url("/204"))
            request.streamsResponseBody = streams
            let noContent = try await dut.send(dispatcher, request)
            #expect(noContent.status == 204)
            var body = noContent.body
            if let stream = noContent.bodyStream {
                for try await chunk in stream { body.append(chunk) }
            }
            #expect(body.isEmpty, "streamed: \(streams)")
            // A POST goes on a new connection: not refused as if a reused one had died under it.
            #expect(try await call(method, word) == word, "\(method) after a 204 with \(field)")
        }
        #expect(try await call(.get, "c") == "c")
        // Each 204's connection carried nothing after it.
        let exchanges = responder.exchanges
        for noContent in exchanges where noContent.target == "/204" {
            let after = exchanges.filter { $0.connection == noContent.connection && $0.index > noContent.index }
            #expect(after.isEmpty, "\(after.map(\.target)) after a 204 on its connection")
        }
        #expect(exchanges.filter { $0.target == "/204" }.count == 2)
    }

    @Test(
        "a request waiting for the one connection a 204 announcing a body had gets a new connection",
        arguments: [SocketWatch.Backend.epoll, .poll])
    func waitingForANoContentConnection(_ backend: SocketWatch.Backend) async throws {
        let responder = try ScriptedResponder { exchange in
            guard exchange.target != "/204" else {
                // Late enough that the next request is waiting for this connection.
                usleep(200_000)
                return .replyThenUnasked(
                    Array("HTTP/1.1 204 No Content\r\nContent-Length: 42\r\n\r\n".utf8), after: .milliseconds(100),
                    unasked: Self.evilReply)
            }
            return .reply(Self.replyWithItsQuery(exchange))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 1), socketBackend: backend)
        let noContent = Task { try await dispatcher.dispatch(makeRequest(responder.url("/204")), context: RequestContext()) }
        #expect(await eventually { responder.exchanges.count == 1 })
        let waiting = try await dispatcher.dispatch(makeRequest(responder.url("/x?body=a")), context: RequestContext())
        #expect(String(decoding: waiting.body, as: UTF8.self) == "a")
        #expect(try await noContent.value.status == 204)
        #expect(responder.connectionCount == 2)
    }

    @Test(
        "a response with both Content-Length and Transfer-Encoding is .responseInvalid; what its length framed is never a response",
        arguments: DispatcherUnderTest.all(supporting: .closesUntrustedConnections), [false, true])
    func lengthAndTransferEncoding(_ dut: DispatcherUnderTest, streams: Bool) async throws {
        let responder = try ScriptedResponder { exchange in
            guard exchange.target != "/both" else {
                // Chunked, "hello"; by its length, the body runs on into a second response that
                // comes late, once the client may have sent its next request.
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
                guard exchange.method != "HEAD" else { return .reply(Array(head.utf8)) }
                return .replyThenUnasked(Array((head + "5\r\nhello\r\n0\r\n\r\n").utf8), after: .milliseconds(250), unasked: Self.evilReply)
            }
            return .reply(Self.replyWithItsQuery(exchange))
        }
        defer { responder.stop() }
        let dispatcher = dut.make()
        var request = makeRequest(responder.url("/both"))
        request.streamsResponseBody = streams
        let error = await runwayError { try await sendReadingTheBody(dispatcher, request) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("both Content-Length (100) and Transfer-Encoding") == true, "\(String(describing: error))")
        // At once, before the late bytes arrive.
        let next = try await dut.send(dispatcher, makeRequest(responder.url("/x?body=next")))
        #expect(String(decoding: next.body, as: UTF8.self) == "next")
        let exchanges = responder.exchanges
        let both = try #require(exchanges.first { $0.target == "/both" })
        let after = exchanges.filter { $0.connection == both.connection && $0.index > both.index }
        #expect(after.isEmpty, "\(after.map(\.target)) after the response with both on its connection")
        // A HEAD's answer has no body to frame: both fields are read as they are.
        let head = try await dut.send(dispatcher, makeRequest(.head, responder.url("/both")))
        #expect(head.status == 200)
    }

    /// A whole response, for a server to send where none was asked for.
    private static let evilReply = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL".utf8)

    /// A 200 whose body is what follows the last `=` of the request's target.
    private static func replyWithItsQuery(_ exchange: ScriptedResponder.Exchange) -> [UInt8] {
        let body = String(exchange.target.split(separator: "=").last ?? "")
        return Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    @Test("a Transfer-Encoding other than chunked is .responseInvalid, not its coded bytes as the body")
    func transferCodingNotAskedFor() async throws {
        // "hello" gzip-coded then chunked: libcurl undoes the chunking and would pass the gzip on.
        var gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]
        gzip += [0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x86, 0xA6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00]
        let chunk = Array(String(gzip.count, radix: 16).utf8) + [0x0D, 0x0A] + gzip + Array("\r\n0\r\n\r\n".utf8)
        for value in ["gzip, chunked", "GZIP,Chunked", "deflate"] {
            let responder = try ScriptedResponder { _ in
                .replyAndClose(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: \(value)\r\n\r\n".utf8) + chunk)
            }
            defer { responder.stop() }
            for streams in [false, true] {
                var request = makeRequest(responder.url("/x"))
                request.streamsResponseBody = streams
                let error = await runwayError { try await sendReadingTheBody(CurlDispatcher(), request) }
                #expect(error?.code == .responseInvalid, "\(value), streamed: \(streams): \(String(describing: error))")
                #expect(error?.message.contains("Transfer-Encoding") == true, "\(String(describing: error))")
            }
        }
        // Chunked alone, in any case, is the framing it always was.
        let responder = try ScriptedResponder { _ in
            .replyAndClose(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n".utf8))
        }
        defer { responder.stop() }
        let response = try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext())
        #expect(response.body == Data("ok".utf8))
    }

    @Test("chunked applied twice, in one Transfer-Encoding field or two, is .responseInvalid, not a body still framed")
    func chunkedTwice() async throws {
        // "ok" chunked, then chunked again: libcurl undoes one and would pass the inner framing on.
        let inner = "2\r\nok\r\n0\r\n\r\n"
        let outer = String(inner.utf8.count, radix: 16) + "\r\n" + inner + "\r\n0\r\n\r\n"
        for fields in ["Transfer-Encoding: chunked, chunked", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"] {
            let responder = try ScriptedResponder { _ in .replyAndClose(Array("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n\(outer)".utf8)) }
            defer { responder.stop() }
            for streams in [false, true] {
                var request = makeRequest(responder.url("/x"))
                request.streamsResponseBody = streams
                let error = await runwayError { try await sendReadingTheBody(CurlDispatcher(), request) }
                #expect(error?.code == .responseInvalid, "\(fields), streamed: \(streams): \(String(describing: error))")
                #expect(error?.message.contains("chunked more than once") == true, "\(String(describing: error))")
            }
        }
    }

    @Test(
        "a 101 Switching Protocols the request did not ask for is .responseInvalid, not a response",
        arguments: DispatcherUnderTest.all)
    func unaskedProtocolSwitch(_ dut: DispatcherUnderTest) async throws {
        let switched = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\n"
        let reply = switched + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let responder = try ScriptedResponder { _ in .replyAndClose(Array(reply.utf8)) }
        defer { responder.stop() }
        let error = await runwayError { try await dut.send(dut.make(), makeRequest(responder.url("/x"))) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("switched protocols") == true, "\(String(describing: error))")
    }

    @Test("a streamed body's failure names the dispatcher's stage, as a buffered one's does")
    func streamedFailureHasItsStage() async throws {
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        defer { responder.stop() }
        var request = makeRequest(responder.url("/x"))
        request.streamsResponseBody = true
        let response = try await Pipeline(interceptors: [], dispatcher: CurlDispatcher()).send(request)
        let stream = try #require(response.bodyStream)
        var failure: RunwayError?
        do {
            for try await _ in stream {}
        } catch {
            failure = error
        }
        #expect(failure?.code == .connectionLost, "\(String(describing: failure))")
        #expect(failure?.stage == .dispatcher("curl"))
    }

    @Test("the total timeout ends a request waiting for a free connection, and says nothing was sent")
    func totalTimeoutWhileQueued() async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 1))
        try await withTestServer { server in
            // The one connection this host may have is held by a request the server answers in
            // five minutes.
            let holder = Task { try await dispatcher.dispatch(makeRequest(server.url("/delay?ms=300000")), context: RequestContext()) }
            defer { holder.cancel() }
            #expect(await eventually { server.stats.requests(path: "/delay") == 1 })
            let queued = makeRequest(server.url("/json")) { $0.timeout = .milliseconds(500) }
            let start = ContinuousClock.now
            let error = await runwayError { try await dispatcher.dispatch(queued, context: RequestContext()) }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            #expect(error?.neverSent == true)
            #expect(ContinuousClock.now - start < Self.timeoutBound)
            #expect(server.stats.requests(path: "/json") == 0)
        }
    }

    /// libcurl's timer starts when a waiting request gets its connection: it is given what is
    /// left of the timeout, so the request ends at the timeout, in libcurl's words. With the whole
    /// timeout, the loop would end it only 250 ms after (its grace for libcurl, in words of its own).
    @Test("a request that waited for a connection gets what is left of its timeout, not all of it again")
    func waitedRequestKeepsItsDeadline() async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 1))
        try await withTestServer { server in
            // The one connection is busy for half a second, then free.
            let holder = Task { try await dispatcher.dispatch(makeRequest(server.url("/delay?ms=500")), context: RequestContext()) }
            defer { holder.cancel() }
            #expect(await eventually { server.stats.requests(path: "/delay") == 1 })
            let queued = makeRequest(server.url("/slow?ms=60000")) { $0.timeout = .seconds(1) }
            let error = await runwayError { try await dispatcher.dispatch(queued, context: RequestContext()) }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            #expect(error?.message.contains("took longer than its timeout") == false, "\(String(describing: error))")
            #expect(server.stats.requests(path: "/slow") == 1)
        }
    }

    @Test("a request waiting for a free connection, cancelled, ends at once and is never sent")
    func cancelledWhileQueued() async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 1))
        try await withTestServer { server in
            let holder = Task { try await dispatcher.dispatch(makeRequest(server.url("/delay?ms=300000")), context: RequestContext()) }
            defer { holder.cancel() }
            #expect(await eventually { server.stats.requests(path: "/delay") == 1 })
            let queued = Task { try await dispatcher.dispatch(makeRequest(server.url("/json")), context: RequestContext()) }
            // Cancelled whether it has reached the loop yet or not: it ends either way.
            try await Task.sleep(for: .milliseconds(50))
            queued.cancel()
            let error = await runwayError { try await queued.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
            #expect(error?.neverSent == true)
            #expect(server.stats.requests(path: "/json") == 0)
            // The connection, once free, serves the next request.
            holder.cancel()
            #expect(try await dispatcher.dispatch(makeRequest(server.url("/json")), context: RequestContext()).status == 200)
        }
    }
}
