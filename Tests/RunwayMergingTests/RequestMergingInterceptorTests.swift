import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Request merging end to end: libcurl against a real batch endpoint on the test server.
@Suite struct RequestMergingInterceptorTests {
    /// A pipeline whose `item` API merges into `/m/items/batch` on `server`.
    func pipeline(_ server: TestServer, maxMerged: Int = 50) throws -> (Pipeline, RequestMergingInterceptor) {
        let merging = try RequestMergingInterceptor.merging([
            "item": ItemMerger(batchURL: server.url("/m/items/batch"), maxMerged: maxMerged)
        ])
        return (Pipeline(interceptors: [merging], dispatcher: CurlDispatcher()), merging)
    }

    /// Calls `item?id=<id>` and returns the id the response carries.
    @Sendable static func call(
        _ pipeline: Pipeline, _ server: TestServer, id: String, hold: Bool = false, api: String = "item"
    ) async throws -> String {
        let request = Request(url: server.url("/m/item?id=\(id)" + (hold ? "&hold=1" : "")))
        let response = try await pipeline.send(request, context: RequestContext(apiName: api))
        return try JSON(parsing: response.body)["id"]?.string ?? ""
    }

    /// Starts a held first call, then `ids` as separate tasks, one after the other queued (so
    /// they queue, and are combined, in that order).
    func queue(
        _ ids: [String], behind pipeline: Pipeline, merging: RequestMergingInterceptor, server: TestServer
    ) async throws -> (first: Task<String, any Error>, queued: [String: Task<String, any Error>]) {
        let first = Task { try await Self.call(pipeline, server, id: "0", hold: true) }
        #expect(await server.stats.wait { $0.requests(path: "/m/item") == 1 })
        var queued: [String: Task<String, any Error>] = [:]
        for (index, id) in ids.enumerated() {
            queued[id] = Task { try await Self.call(pipeline, server, id: id) }
            #expect(await eventually { merging.waitingCount(api: "item") == index + 1 })
        }
        return (first, queued)
    }

    @Test func callsArrivingWhileOneIsInFlightGoAsOneCombinedRequestAndEachGetsItsOwnAnswer() async throws {
        let state = MergeRouteState()
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let ids = ["1", "2", "3", "4", "5"]
            let (first, queued) = try await queue(ids, behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            #expect(try await first.value == "0")
            for (id, task) in queued { #expect(try await task.value == id) }
            #expect(state.singles == ["0"])
            #expect(state.batches.count == 1)
            #expect(Set(state.batches.first ?? []) == Set(ids))
            #expect(merging.waitingCount(api: "item") == 0)
        }
    }

    @Test func atMostMaxMergedGoInOneRequest() async throws {
        let state = MergeRouteState()
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server, maxMerged: 2)
            let ids = ["1", "2", "3", "4", "5"]
            let (first, queued) = try await queue(ids, behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            _ = try await first.value
            for (id, task) in queued { #expect(try await task.value == id) }
            // Five queued: two combined requests of two, and the fifth alone.
            #expect(state.batches.map(\.count) == [2, 2])
            #expect(state.singles.count == 2)
            #expect(Set(state.batches.flatMap { $0 } + state.singles.dropFirst()) == Set(ids))
        }
    }

    @Test func cancellingOneWaitingCallEndsOnlyThatCall() async throws {
        let state = MergeRouteState()
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            queued["2"]?.cancel()
            // It never went out: sending it again cannot repeat it at the server.
            await #expect { try await queued["2"]?.value } throws: {
                ($0 as? RunwayError)?.code == .cancelled && ($0 as? RunwayError)?.neverSent == true
            }
            #expect(merging.waitingCount(api: "item") == 2)
            state.itemGate.open()
            _ = try await first.value
            #expect(try await queued["1"]?.value == "1")
            #expect(try await queued["3"]?.value == "3")
            #expect(state.batches.map { Set($0) } == [["1", "3"]])
        }
    }

    @Test func cancellingOneCallerOfTheCombinedRequestLeavesItRunningForTheOthers() async throws {
        let state = MergeRouteState(holdBatches: true)
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            _ = try await first.value
            #expect(await server.stats.wait { $0.requests(path: "/m/items/batch") == 1 })
            queued["2"]?.cancel()
            // Its request is out, in the combined one.
            await #expect { try await queued["2"]?.value } throws: {
                ($0 as? RunwayError)?.code == .cancelled && ($0 as? RunwayError)?.neverSent == false
            }
            state.batchGate.open()
            #expect(try await queued["1"]?.value == "1")
            #expect(try await queued["3"]?.value == "3")
            #expect(server.stats.aborts(path: "/m/items/batch") == 0)
        }
    }

    /// The combined request goes with the first member's context; cancelling that member's task
    /// (as an API manager's `cancelAll()`, `cancelPrevious` or release does) must not reach it.
    @Test func cancellingTheFirstMembersTaskLeavesTheCombinedRequestRunning() async throws {
        let state = MergeRouteState(holdBatches: true)
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            _ = try await first.value
            #expect(await server.stats.wait { $0.requests(path: "/m/items/batch") == 1 })
            queued["1"]?.cancel()
            await #expect { try await queued["1"]?.value } throws: { ($0 as? RunwayError)?.code == .cancelled }
            state.batchGate.open()
            #expect(try await queued["2"]?.value == "2")
            #expect(try await queued["3"]?.value == "3")
            #expect(server.stats.aborts(path: "/m/items/batch") == 0)
            #expect(state.batches.map { Set($0) } == [["1", "2", "3"]])
        }
    }

    @Test(arguments: [MergeRouteState.BatchAnswer.status(503), .reset])
    func aFailedCombinedRequestFailsEachCallerWithATypedError(answer: MergeRouteState.BatchAnswer) async throws {
        let state = MergeRouteState(answer: answer)
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            #expect(try await first.value == "0")
            var codes: [RunwayError.Code] = []
            for task in queued.values {
                do {
                    _ = try await task.value
                    Issue.record("a caller of a failed combined request succeeded")
                } catch let error as RunwayError {
                    codes.append(error.code)
                }
            }
            if case .status = answer {
                #expect(codes == [.serverError, .serverError, .serverError])
            } else {
                #expect(codes.count == 3)
                #expect(Set(codes).count == 1)
                #expect(!codes.contains(.cancelled))
            }
            // The lane is free again: the next call goes through alone.
            #expect(try await Self.call(pipeline, server, id: "9") == "9")
        }
    }

    /// The guide's chain: retry after merging sees the combined request as it goes on the wire,
    /// a `POST`, which it repeats only when its API is opted in (`nonIdempotentAPIs`); each `GET`
    /// alone would have been retried, so without the opt-in a 503 fails every caller.
    @Test(arguments: [true, false])
    func aCombinedPostIsRetriedOnlyWhenItsAPIIsOptedIn(optedIn: Bool) async throws {
        let state = MergeRouteState(answer: .statusOnce(503))
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let merging = try RequestMergingInterceptor.merging(["item": ItemMerger(batchURL: server.url("/m/items/batch"))])
            let retry = try RetryPolicy(maxAttempts: 3, initialBackoff: .zero, nonIdempotentAPIs: optedIn ? ["item"] : [])
            let pipeline = Pipeline(interceptors: [merging, .retry(retry)], dispatcher: CurlDispatcher())
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            #expect(try await first.value == "0")
            for (id, task) in queued {
                if optedIn {
                    #expect(try await task.value == id)
                } else {
                    await #expect { try await task.value } throws: { ($0 as? RunwayError)?.code == .serverError }
                }
            }
            #expect(state.batches.count == (optedIn ? 2 : 1))
        }
    }

    @Test func aSplitWithTheWrongCountFailsEachCallerNeverCrashes() async throws {
        let state = MergeRouteState(answer: .oneItemShort)
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, merging) = try pipeline(server)
            let (first, queued) = try await queue(["1", "2", "3"], behind: pipeline, merging: merging, server: server)
            state.itemGate.open()
            _ = try await first.value
            for task in queued.values {
                await #expect { try await task.value } throws: { error in
                    let error = error as? RunwayError
                    return error?.code == .responseInvalid && error?.stage == .interceptor("merging")
                        && error?.message.contains("2 results for 3") == true
                }
            }
        }
    }

    /// Calls `item?id=<id>` with `Authorization: <user>` (none for `nil`) and the credential
    /// scope `scope`; returns the id and the user the response was made for.
    @Sendable static func call(
        _ pipeline: Pipeline, _ server: TestServer, id: String, user: String?, scope: String? = nil, hold: Bool = false
    ) async throws -> (id: String, user: String?) {
        var request = Request(url: server.url("/m/item?id=\(id)" + (hold ? "&hold=1" : "")))
        request.headers["Authorization"] = user
        var context = RequestContext(apiName: "item")
        context.credentialScope = scope
        let json = try JSON(parsing: try await pipeline.send(request, context: context).body)
        return (json["id"]?.string ?? "", json["user"]?.string)
    }

    @Test(
        "calls whose headers or credential scope differ are never combined: each answer is made for its own caller",
        arguments: [true, false])
    func callsOfDifferentCallersAreNotCombined(differInHeaders: Bool) async throws {
        let state = MergeRouteState()
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let merging = try RequestMergingInterceptor.merging([
                "item": ItemMerger(batchURL: server.url("/m/items/batch"), keepsHeaders: true)
            ])
            let pipeline = Pipeline(interceptors: [merging], dispatcher: CurlDispatcher())
            let bob = differInHeaders ? "bob" : "alice"
            let first = Task { try await Self.call(pipeline, server, id: "0", user: "alice", scope: "alice", hold: true) }
            #expect(await server.stats.wait { $0.requests(path: "/m/item") == 1 })
            let second = Task { try await Self.call(pipeline, server, id: "1", user: bob, scope: "bob") }
            let third = Task { try await Self.call(pipeline, server, id: "2", user: "alice", scope: "alice") }
            // Each call either waits to be merged or has gone alone.
            #expect(await eventually { merging.waitingCount(api: "item") + state.singles.count == 3 })
            state.itemGate.open()
            #expect(try await first.value == ("0", "alice"))
            #expect(try await second.value == ("1", bob))
            #expect(try await third.value == ("2", "alice"))
            #expect(state.batches.allSatisfy { $0.count < 2 })
        }
    }

    @Test func otherAPIsPassStraightThrough() async throws {
        let state = MergeRouteState()
        try await withTestServer(routes: mergeRoutes(state)) { server in
            let (pipeline, _) = try pipeline(server)
            let tasks = (0..<4).map { id in Task { try await Self.call(pipeline, server, id: "\(id)", hold: true, api: "other") } }
            // All four reach the server while the gate is closed: nothing queued them.
            #expect(await server.stats.wait { $0.requests(path: "/m/item") == 4 })
            state.itemGate.open()
            for (id, task) in tasks.enumerated() { #expect(try await task.value == "\(id)") }
            #expect(state.batches.isEmpty)
        }
    }

    @Test func badConfigurationIsRejectedAtStartUp() {
        let url = URL(fileURLWithPath: "/")
        #expect { try RequestMergingInterceptor.merging(["": ItemMerger(batchURL: url)]) } throws: {
            ($0 as? RunwayError)?.code == .configuration
        }
        #expect { try RequestMergingInterceptor.merging(["item": ItemMerger(batchURL: url, maxMerged: 1)]) } throws: {
            ($0 as? RunwayError)?.code == .configuration && ($0 as? RunwayError)?.field == "item"
        }
    }
}
