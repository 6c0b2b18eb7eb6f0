import CSlowResolver
import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Calls that end while their host name is still being resolved, against a resolver that takes
/// minutes (`CSlowResolver`, Linux): libcurl resolves on a thread of its own, and, unless told
/// otherwise, waits for that thread when such a call is cancelled or times out, holding up the
/// loop, and so every other call, until the name server answers.
#if os(Linux)
@Suite("libcurl: a slow name server")
struct SlowResolveTests {
    /// `host` of `url` replaced with a name the slow resolver answers after five minutes.
    static func slowName(_ url: URL) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.host = "300000.slow.test"
        return try #require(components.url)
    }

    @Test("a call cancelled or timed out while its name resolves ends at once, and holds up no other call")
    func endsWhileResolving() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let healthy = makeRequest(server.url("/json"))
            let slow = try Self.slowName(server.url("/json"))
            // Each resolve takes five minutes: none of this test's ends while it runs, however
            // loaded the machine. Counted, not timed.
            let finished = runway_slow_resolves_finished()

            // Cancelled. No timeout may end it first: a loaded machine can hold this task up
            // for longer than the 10-s connect timeout, which covers resolving.
            var started = runway_slow_resolves_started()
            let unbounded = makeRequest(slow) {
                $0.connectTimeout = .seconds(300)
                $0.timeout = nil
            }
            let cancelled = Task { await runwayError { try await dispatcher.dispatch(unbounded, context: RequestContext()) } }
            #expect(await eventually { runway_slow_resolves_started() > started }, "the slow resolver was never asked")
            #expect(try await dispatcher.dispatch(healthy, context: RequestContext()).status == 200)
            cancelled.cancel()
            let error = await cancelled.value
            #expect(error?.code == .cancelled)
            #expect(runway_slow_resolves_finished() == finished, "the cancelled call waited for its name")
            #expect(try await dispatcher.dispatch(healthy, context: RequestContext()).status == 200)
            #expect(runway_slow_resolves_finished() == finished, "the next call waited for the cancelled call's name")

            // Timed out.
            started = runway_slow_resolves_started()
            let timedOut = await runwayError {
                try await dispatcher.dispatch(makeRequest(slow) { $0.timeout = .milliseconds(300) }, context: RequestContext())
            }
            #expect(runway_slow_resolves_started() > started)
            #expect(timedOut?.code == .timeout)
            #expect(timedOut?.neverSent == true)
            #expect(runway_slow_resolves_finished() == finished, "the call timed out when its name came, not at its timeout")
            #expect(try await dispatcher.dispatch(healthy, context: RequestContext()).status == 200)
            #expect(runway_slow_resolves_finished() == finished, "the next call waited for the timed-out call's name")
            #expect(server.stats.requests(path: "/json") == 3)
        }
    }
}
#endif
