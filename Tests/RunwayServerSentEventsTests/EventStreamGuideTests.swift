import Foundation
import Runway
import RunwayCurl
import RunwayServerSentEvents
import RunwayTestServer
import Testing

// The code the "Receive Server-Sent Events" guide
// (Sources/RunwayServerSentEvents/RunwayServerSentEvents.docc/ReceivingEvents.md) quotes, compiled
// and run here.

// BEGIN guide: Receive Server-Sent Events
/// Prints a chat's messages as the server sends them, until it says there are no more (204).
func followChat(at url: URL, pipeline: Pipeline) async throws -> [String] {
    var lines: [String] = []
    // Each connection, the first and every reconnection, passes the pipeline's interceptors.
    let events = pipeline.events(for: Request(url: url), context: RequestContext(apiName: "chat.stream"))
    for try await event in events {
        switch event.type {
        case "message": lines.append(event.data)
        case "typing": continue
        default: lines.append("[\(event.type)] \(event.data)")
        }
    }
    return lines
}
// END guide: Receive Server-Sent Events

// BEGIN guide: Resume from a stored ID
/// The chat's request, resuming after the event whose ID the app stored.
func resumingRequest(from storedID: String) throws -> Request {
    try Request("https://example.com/chat", headers: ["Last-Event-ID": storedID])
}
// END guide: Resume from a stored ID

@Suite struct EventStreamGuideTests {
    @Test func followsAChat() async throws {
        let connections = Counter()
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 2)], dispatcher: CurlDispatcher())
        try await withTestServer(routes: EventStreamTests.chatRoutes(connections: connections)) { server in
            let lines = try await followChat(at: server.url("/chat"), pipeline: pipeline)
            #expect(lines == ["hi", "[joined] carol", "bye"])
            #expect(connections.value == 2)
        }
        #expect(try resumingRequest(from: "42").headers["Last-Event-ID"] == "42")
    }
}
