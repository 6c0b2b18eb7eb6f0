import Foundation
import HTTPTypes
import Hummingbird
import InMemoryLogging
import Logging
import Runway
import RunwayActionLog
import RunwayCompression
import RunwayCurl
import RunwayLogging
import RunwaySigning
import RunwaySync
import RunwayTestServer
import RunwayTesting
import Testing

/// Uploads against the test server: failures, timeouts, backoff, leftovers, and the pipeline.
@Suite struct BatchUploaderTests {
    @Test func serverErrorsKeepTheActionsAndRetriesBackOffWithTheSameBatch() async throws {
        let sink = ActionSink(.init(failures: 3, failureStatus: 500))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let (actions, events) = try loggerWithOneBatch(
                folder, registry: try analyticsRegistry(server), initialBackoff: .milliseconds(100), maxBackoff: .seconds(2))
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 30 })
            let requests = sink.requests
            #expect(requests.map(\.status) == [500, 500, 500, 200])
            #expect(Set(requests.map(\.batchID)).count == 1)
            #expect(Set(requests.map(\.recordIDs)).count == 1)
            #expect(sink.duplicates == 0)
            // Exponential with half jitter: 50-100 ms, then 100-200 ms, then 200-400 ms.
            let delays = events.of(.uploadFailed).compactMap(\.retryDelay)
            try #require(delays.count == 3 && requests.count == 4)
            #expect(delays[0] <= .milliseconds(100) && delays[0] >= .milliseconds(50))
            #expect(delays[2] >= .milliseconds(200) && delays[2] <= .milliseconds(400))
            // The server saw each retry no sooner than the delay announced before it.
            for index in 1..<requests.count {
                #expect(requests[index].at - requests[index - 1].at >= delays[index - 1])
            }
            #expect(events.of(.uploadFailed).allSatisfy { $0.error?.code == .serverError })
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.pending == 0 })
            #expect(actions.statistics.uploadFailures == 3)
            await actions.shutdown()
        }
    }

    /// A server that answers 429 (or 503) with `Retry-After` asks for time: the next attempt
    /// waits that long (up to `maxBackoff`), not the much shorter backoff.
    @Test(arguments: [("2", Duration.seconds(2)), ("3600", Duration.seconds(30))])
    func aRetryAfterOnTheAnswerLengthensTheBackoff(retryAfter: String, expected: Duration) async throws {
        let arrivals = Locked<[ContinuousClock.Instant]>([])
        let folder = TestFolder()
        defer { folder.remove() }
        let routes: TestServer.Routes = { router in
            router.post("/v1/actions/batch") { request, _ in
                var request = request
                _ = try await request.collectBody(upTo: 1 << 20)
                let count = arrivals.withLock { arrivals in
                    arrivals.append(.now)
                    return arrivals.count
                }
                guard count == 1 else { return Response(status: .ok) }
                return Response(status: .tooManyRequests, headers: [HTTPField.Name("Retry-After")!: retryAfter])
            }
        }
        try await withTestServer(routes: routes) { server in
            let (actions, events) = try loggerWithOneBatch(
                folder, registry: try analyticsRegistry(server), initialBackoff: .milliseconds(20), maxBackoff: .seconds(30))
            #expect(await eventually { !events.of(.uploadFailed).isEmpty })
            let failed = try #require(events.of(.uploadFailed).first)
            #expect(failed.error?.response?.status == 429)
            // Without it, the backoff after a first failure is 10-20 ms.
            #expect(failed.retryDelay == expected, "\(failed)")
            if expected <= .seconds(2) {
                #expect(await eventually { arrivals.withLock { $0.count } == 2 })
                let times = arrivals.withLock { $0 }
                #expect(times[1] - times[0] >= expected)
            } else {
                try await actions.flush()  // a flush sends during the backoff
            }
            // The server has the batch; its answer may still be on the way back.
            #expect(await eventually { actions.statistics.uploaded == 30 })
            await actions.shutdown()
        }
    }

    @Test("a flush interval and a backoff of Int64.max seconds (\"never\") are long waits, not a crash")
    func endlessIntervalsAreLongWaits() async throws {
        let sink = ActionSink(.init(failures: 1, failureStatus: 503))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let source = ScriptedReachabilitySource(.reachable)
            // Polling "never" again after the first poll.
            let monitor = ReachabilityMonitor(source: source, interval: .seconds(Int64.max))
            monitor.start()
            defer { monitor.stop() }
            var builder = ServiceRegistry.Builder(
                environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()), reachability: monitor)
            builder.register(AnalyticsService(baseURLs: BaseURLs(server.url("/v1").absoluteString)))
            var configuration = testConfiguration(folder, registry: try builder.build())
            configuration.flushInterval = .seconds(Int64.max)
            configuration.initialBackoff = .seconds(Int64.max)
            configuration.maxBackoff = .seconds(Int64.max)
            let actions = try ActionLogger(configuration)
            for n in 0..<30 { actions.record("tap", attributes: ["n": String(n)]) }
            // The failed upload's retry waits "forever"; a flush sends the batch now.
            #expect(await eventually { actions.statistics.uploadFailures == 1 })
            try await actions.flush()
            #expect(sink.requests.map(\.status) == [503, 200])
            #expect(monitor.status == .reachable)
            await actions.shutdown()
        }
    }

    @Test func theNetworkComingBackCutsTheBackoffShort() async throws {
        let sink = ActionSink(.init(failures: 1, failureStatus: 503))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let source = ScriptedReachabilitySource(.reachable)
            let monitor = ReachabilityMonitor(source: source, interval: .seconds(3600))
            monitor.refresh()
            var builder = ServiceRegistry.Builder(
                environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()), reachability: monitor)
            builder.register(AnalyticsService(baseURLs: BaseURLs(server.url("/v1").absoluteString)))
            var configuration = testConfiguration(folder, registry: try builder.build())
            // A backoff far longer than the test waits: only the network coming back can end it.
            configuration.initialBackoff = .seconds(600)
            configuration.maxBackoff = .seconds(1200)
            let actions = try ActionLogger(configuration)
            for n in 0..<30 { actions.record("tap", attributes: ["n": String(n)]) }
            #expect(await eventually { actions.statistics.uploadFailures == 1 })
            source.set(.unreachable)
            monitor.refresh()
            source.set(.reachable)
            monitor.refresh()
            // Within the generous wait below, ten minutes before the backoff ends: the network
            // coming back sent the batch, and nothing else was tried (an upload while offline
            // would be a second failure, `.noNetwork` before the server).
            #expect(await eventually { sink.stored.count == 30 })
            #expect(sink.requests.map(\.status) == [503, 200])
            #expect(actions.statistics.uploadFailures == 1)
            await actions.shutdown()
        }
    }

    @Test func timeoutsResendTheSameBatchAndTheServerKeepsEachActionOnce() async throws {
        // The server stores the first two sendings but answers after the client gave up.
        let sink = ActionSink(.init(lateAnswers: 2, lateBy: .seconds(3)))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.requestOptions = RequestOptions(connectTimeout: .seconds(5), timeout: .milliseconds(500))
            let actions = try ActionLogger(configuration)
            for n in 0..<45 { actions.record("tap", attributes: ["n": String(n)]) }
            #expect(await eventually(timeout: .seconds(120)) { sink.requests.count >= 3 && actions.statistics.stored == 15 })
            // The last 15 go out with the same 500 ms timeout, which a loaded machine can miss
            // too: flush until one gets its answer in time (each try sends the same batch again).
            #expect(await eventually(timeout: .seconds(120), checking: { (try? await actions.flush()) != nil }))
            #expect(events.of(.uploadFailed).prefix(2).allSatisfy { $0.error?.code == .timeout })
            #expect(sink.stored.compactMap(\.n).sorted() == Array(0..<45))
            // The first batch arrived at least three times (more when the answer to a third
            // sending was late too, on a loaded machine); every sending after the first of each
            // batch was dropped whole.
            let sendings = Dictionary(grouping: sink.requests, by: \.batchID).values
            #expect(sendings.map(\.count).max() ?? 0 >= 3)
            #expect(sink.duplicates == sendings.reduce(0) { $0 + ($1.count - 1) * ($1.first?.recordIDs.count ?? 0) })
            #expect(sink.changedResendCount == 0)
            #expect(actions.statistics.uploaded == 45)
            await actions.shutdown()
        }
    }

    @Test func leftoversAreSentAtStartInTheirOwnBatchesAndAFailedBatchKeepsItsID() async throws {
        let sink = ActionSink(.init(failures: 1_000, failureStatus: 502))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let registry = try analyticsRegistry(server)
            do {
                let actions = try ActionLogger(testConfiguration(folder, registry: registry))
                for n in 0..<75 { actions.record("tap", attributes: ["n": String(n)]) }
                #expect(await eventually(timeout: .seconds(60)) { sink.requests.count >= 2 })
                await actions.shutdown()
                #expect(actions.statistics.stored == 75)
            }
            let failedBatch = try #require(sink.requests.first?.batchID)
            let failedIDs = try #require(sink.requests.first?.recordIDs)
            sink.setBehaviour { $0.failures = 0 }
            let events = EventRecorder()
            let next = try ActionLogger(testConfiguration(folder, registry: registry, events: events))
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 75 })
            let accepted = sink.acknowledgedBatches
            #expect(accepted.map(\.recordIDs.count) == [30, 30, 15])
            #expect(accepted.first?.batchID == failedBatch)
            #expect(accepted.first?.recordIDs == failedIDs)
            #expect(sink.stored.compactMap(\.n) == Array(0..<75))
            #expect(events.total(.leftoversFound) == 75)
            // This run's actions never join the previous run's batches.
            for n in 0..<30 { next.record("new", attributes: ["n": String(1_000 + n)]) }
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 105 })
            #expect(sink.acknowledgedBatches.last?.recordIDs.count == 30)
            await next.shutdown()
        }
    }

    @Test func partialBatchesLeftBySeveralRunsAllGoOutWithoutAFlush() async throws {
        let sink = ActionSink(.init(failures: 1_000, failureStatus: 503))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let registry = try analyticsRegistry(server)
            // Two failing runs: 45 actions (a batch of 30 sent and failed, 15 left), then 10 more.
            // Each start-up puts the leftovers into a batch of their own: 30, 15, 10.
            for (run, count) in [45, 10].enumerated() {
                let actions = try ActionLogger(testConfiguration(folder, registry: registry))
                for n in 0..<count { actions.record("tap", attributes: ["n": String(run * 100 + n)]) }
                try await actions.persist()
                if run == 0 { #expect(await eventually(timeout: .seconds(60)) { sink.requests.count >= 1 }) }
                await actions.shutdown()
            }
            sink.setBehaviour { $0.failures = 0 }
            let actions = try ActionLogger(testConfiguration(folder, registry: registry))
            #expect(actions.statistics.leftovers == 55)
            // No flush, no new action: start-up sends every batch left, partial ones included.
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 55 })
            #expect(sink.acknowledgedBatches.map(\.recordIDs.count) == [30, 15, 10])
            #expect(sink.changedResendCount == 0)
            await actions.shutdown()
        }
    }

    @Test func theUploadIsSignedCompressedAndLoggedThroughTheServicePipeline() async throws {
        let secret = "action-log-secret"
        let sink = ActionSink(verifier: try SignatureVerifier.hmacSHA256(secret: secret))
        let folder = TestFolder()
        defer { folder.remove() }
        let logs = InMemoryLogHandler()
        try await withTestServer(routes: sink.routes) { server in
            let registry = try analyticsRegistry(
                server,
                interceptors: [
                    .logging(Logger(label: "network") { _ in logs }),
                    try .retry(maxAttempts: 2),
                    try .compression(threshold: 256),
                    try SigningInterceptor.signing(secret: secret),
                ])
            let actions = try ActionLogger(testConfiguration(folder, registry: registry))
            for n in 0..<30 { actions.record("tap", attributes: ["n": String(n), "screen": "listing/detail"]) }
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 30 })
            #expect(sink.rejected.isEmpty)
            let request = try #require(sink.requests.first)
            #expect(request.headers["content-encoding"] == "gzip")
            #expect(request.headers["x-runway-signature"] != nil)
            #expect(request.headers["x-client"] == "runway-tests")  // the service's common header
            #expect(request.headers["content-type"] == "application/json")
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.uploaded == 30 })
            #expect(logs.entries.contains { "\($0.message)".contains("POST") && "\($0.message)".contains("/v1/actions/batch") })
            await actions.shutdown()
        }
    }

    /// A logger of `batchSize` with a short backoff, uploading to a server that answers `status`
    /// to any batch holding an action named "poison".
    func withPoisonRefused(
        status: Int, batchSize: Int, _ body: (ActionLogger, ActionSink, EventRecorder) async throws -> Void
    ) async throws {
        let sink = ActionSink(.init(refuseName: "poison", refusalStatus: status))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.batchSize = batchSize
            configuration.initialBackoff = .milliseconds(5)
            configuration.maxBackoff = .milliseconds(20)
            try await body(try ActionLogger(configuration), sink, events)
        }
    }

    /// One action the server can never take (it answers 422 to any batch holding it) must not
    /// hold back the others: the refused batch is split until that action is alone, and the
    /// action is deleted as lost only after it was refused `maxRefusals` times while other
    /// batches were acknowledged.
    @Test(arguments: [422, 400, 413])
    func anActionTheServerAlwaysRefusesIsIsolatedAndTheOthersGoOut(status: Int) async throws {
        try await withPoisonRefused(status: status, batchSize: 10) { actions, sink, events in
            for n in 0..<60 { actions.record(n == 3 ? "poison" : "tap", attributes: ["n": String(n)]) }
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.pending == 0 })
            // Each once; the halves of a split batch go out of order (the second half goes last).
            #expect(sink.stored.compactMap(\.n).sorted() == Array(0..<60).filter { $0 != 3 })
            #expect(sink.duplicates == 0)
            #expect(actions.statistics.uploaded == 59)
            #expect(actions.statistics.lost == 1)
            let lost = events.of(.lost)
            #expect(lost.map(\.count) == [1])
            #expect(lost.first?.reason?.contains("HTTP \(status)") == true)
            // The poisoned batch (0-9) was split down to the one action: 0-4, 3-4, then 3 alone,
            // refused three times in all, the last after other batches were acknowledged.
            let refused = sink.requests.filter { $0.status == status }.map(\.recordIDs.count)
            #expect(refused == [10, 5, 2, 1, 1, 1])
            await actions.shutdown()
        }
    }

    /// An action refused alone when no other batch waits (the rest of its batch went out) was
    /// sent again and again, before everything recorded after it, which was never put into a
    /// batch: no other batch was acknowledged, so it was never discarded either, and the log
    /// stopped for the rest of the run. The actions recorded after it now go first.
    @Test func anActionRefusedAloneDoesNotHoldBackTheOnesRecordedAfterIt() async throws {
        try await withPoisonRefused(status: 422, batchSize: 6) { actions, sink, events in
            for n in 0..<6 { actions.record(n == 5 ? "poison" : "tap", attributes: ["n": String(n)]) }
            // The batch is split until the poisoned action is alone, the last batch waiting.
            #expect(
                await eventually(timeout: .seconds(60)) { sink.requests.filter { $0.status == 422 && $0.recordIDs.count == 1 }.count >= 1 })
            for n in 6..<18 { actions.record("tap", attributes: ["n": String(n)]) }
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.pending == 0 })
            #expect(sink.stored.compactMap(\.n).sorted() == Array(0..<18).filter { $0 != 5 })
            #expect(sink.duplicates == 0)
            #expect(actions.statistics.lost == 1)
            #expect(events.of(.lost).map(\.count) == [1])
            await actions.shutdown()
        }
    }

    @Test func aServerThatRefusesEveryBatchLosesNothing() async throws {
        let sink = ActionSink(.init(refuseName: "tap", refusalStatus: 400))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.batchSize = 4
            configuration.maxRefusals = 1
            configuration.initialBackoff = .milliseconds(5)
            configuration.maxBackoff = .milliseconds(10)
            let actions = try ActionLogger(configuration)
            for n in 0..<8 { actions.record("tap", attributes: ["n": String(n)]) }
            #expect(await eventually(timeout: .seconds(60)) { sink.requests.count >= 30 })
            #expect(actions.statistics.lost == 0)
            #expect(events.of(.lost).isEmpty)
            #expect(actions.statistics.stored == 8)
            // Fixed: everything goes out, each action once.
            sink.setBehaviour { $0.refuseName = nil }
            try await actions.flush()
            #expect(Set(sink.stored.compactMap(\.n)) == Set(0..<8))
            #expect(sink.stored.count == 8)
            #expect(actions.statistics.pending == 0)
            await actions.shutdown()
        }
    }

    @Test func aDeadServerLosesNothingAndTheActionsGoOutWhenItIsBack() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        // A port with nobody listening: every upload fails to connect.
        let deadServer = try RefusingPort()
        let deadRegistry = try analyticsRegistry(deadServer.url("/v1"))
        let events = EventRecorder()
        do {
            let actions = try ActionLogger(testConfiguration(folder, registry: deadRegistry, events: events))
            for n in 0..<40 { actions.record("tap", attributes: ["n": String(n)]) }
            #expect(await eventually(timeout: .seconds(60)) { events.of(.uploadFailed).count >= 2 })
            #expect(events.of(.uploadFailed).allSatisfy { $0.error?.code == .cannotConnect })
            await actions.shutdown()
            #expect(actions.statistics.stored == 40)
        }
        withExtendedLifetime(deadServer) {}
        try await withTestServer(routes: sink.routes) { server in
            let actions = try ActionLogger(testConfiguration(folder, registry: try analyticsRegistry(server)))
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 40 })
            #expect(sink.stored.compactMap(\.n) == Array(0..<40))
            await actions.shutdown()
        }
    }
}
