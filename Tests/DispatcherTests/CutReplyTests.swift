import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// Replies cut off where libcurl 7.88 itself reports success: each must be a typed error.
extension DispatcherSuite {
    static let cutHeads = [
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Partial: yes\r\n",
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.1 200 OK\r\nX-Partial: y",
        "HTTP/1.1 200 OK",
        // With a Content-Length, libcurl fails itself, but as a body cut short.
        "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A: b", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n",
    ]

    @Test("a header section that never ends (no blank line) is .connectionLost, and says so", arguments: cutHeads)
    func cutHeaderSection(_ head: String) async throws {
        // libcurl only: FoundationNetworking traps on this reply ("Transfer completed, but
        // there's no response"), taking the process down; the README warns of it.
        for dut in DispatcherUnderTest.all where dut.name.hasPrefix("libcurl") {
            let dispatcher = dut.make()
            let responder = try RawResponder(head)
            defer { responder.stop() }
            let error = await runwayError { try await dispatcher.dispatch(makeRequest(responder.url("/x")), context: RequestContext()) }
            #expect(error?.code == .connectionLost, "\(dut.name): \(String(describing: error))")
            // A status line that never ended is no header section yet.
            if head.contains("\r\n") {
                #expect(
                    error?.message.contains("inside the response's header section") == true, "\(dut.name): \(String(describing: error))")
            }
        }
    }

    @Test("a header section cut on a reused connection is .connectionLost too")
    func cutHeaderSectionOnReusedConnection() async throws {
        let responder = try ScriptedResponder { exchange in
            exchange.index == 0
                ? .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
                : .replyAndClose(Array("HTTP/1.1 200 OK\r\nX-Partial: yes\r\n".utf8))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        let first = try await dispatcher.dispatch(makeRequest(responder.url("/a")), context: RequestContext())
        #expect(first.body == Data("ok".utf8))
        let error = await runwayError { try await dispatcher.dispatch(makeRequest(responder.url("/b")), context: RequestContext()) }
        #expect(error?.code == .connectionLost)
        #expect(responder.connectionCount == 1)
    }

    @Test("a download whose header section is cut leaves no file")
    func cutHeaderSectionDownload() async throws {
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n")
        defer { responder.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-cut-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("file.bin")
        var request = makeRequest(responder.url("/file"))
        request.download = DownloadTarget(file: file)
        let error = await runwayError { try await CurlDispatcher().dispatch(request, context: RequestContext()) }
        #expect(error?.code == .connectionLost)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a complete head with no body and no Content-Length, closed by the server, is still a success")
    func completeHeadThenClose() async throws {
        // The other side of the rule: a blank line ends the header section, and a body read to
        // the close is a complete HTTP/1.1 message.
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nX-Whole: yes\r\n\r\nuntil close")
        defer { responder.stop() }
        let response = try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext())
        #expect(response.status == 200)
        #expect(response.headers["X-Whole"] == "yes")
        #expect(response.body == Data("until close".utf8))
    }
}
