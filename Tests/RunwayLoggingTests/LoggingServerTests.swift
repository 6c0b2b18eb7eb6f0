import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayCurl
import RunwayLogging
import RunwayTestServer
import Testing

/// Logging of a real transfer through libcurl.
@Suite struct LoggingServerTests {
    @Test func aRealTransferIsLoggedWithItsTimings() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        let logger = Logger(label: "runway.test") { [handler] _ in handler }
        let request = Runway.Request(url: server.url("/json?access_token=qwerty"), headers: ["Authorization": "Bearer s3cret"])
        let response = try await Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher()).send(request)
        #expect(response.status == 200)
        let summary = "\(try #require(handler.entries.first { $0.level == .info }).message)"
        #expect(summary.contains("→ 200 in "))
        #expect(summary.contains("[network]"))
        #expect(summary.contains("HTTP/1.1"))
        #expect(!summary.contains("total 0.000ms"))
        let all = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        #expect(all.contains(#""login":"runway""#))
        #expect(!all.contains("qwerty") && !all.contains("s3cret"))
    }
}
