import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

@Suite struct APIBatchTests {
    @Test func aBatchLoadsTogetherAndReturnsInOrder() async throws {
        // Each request waits until all three have arrived: only a concurrent batch succeeds.
        let arrivals = Counter()
        let stub = StubDispatcher { request in
            arrivals.increment()
            let allArrived = await eventually { arrivals.value == 3 }
            guard allArrived else { return Response(status: 500) }
            let q = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value ?? ""
            return Response(status: 200, body: Data(#"{"q":"\#(q)"}"#.utf8))
        }
        let registry = try makeRegistry(stub)
        let managers = (0..<3).map { _ in ItemListAPIManager(registry: registry) }
        let values = try await APIBatch.load(managers, params: [["q": "a"], ["q": "b"], ["q": "c"]])
        #expect(values == [["q": "a"], ["q": "b"], ["q": "c"]])
    }

    @Test func parametersThatAreNotOnePerManagerAreAConfigurationErrorAndNothingIsSent() async throws {
        let stub = jsonStub("{}")
        let registry = try makeRegistry(stub)
        let managers = (0..<2).map { _ in ItemListAPIManager(registry: registry) }
        for params: [[String: JSON]?] in [[["only": 1]], [nil, nil, ["extra": 1]]] {
            await #expect { try await APIBatch.load(managers, params: params) } throws: {
                ($0 as? RunwayError)?.code == .configuration && ($0 as? RunwayError)?.field == "params"
                    && ($0 as? RunwayError)?.stage == RunwayError.Stage(kind: "batch", name: "APIBatch")
            }
        }
        #expect(stub.requests.isEmpty)
    }

    @Test func theFailureThatCancelledTheRestIsThrownEvenWhenItIsACancellationItself() async throws {
        // The same dropNew manager twice: one call is dropped at once (.cancelled, "dropped"),
        // which cancels the other (.cancelled too). The drop is the cause, and is what is thrown.
        let cancellations = Counter()
        let registry = try makeRegistry(slowEchoStub(delay: neverDuringATest, cancellations: cancellations))
        let manager = ItemListAPIManager(registry: registry, policy: .dropNew)
        let error = await #expect(throws: RunwayError.self) { try await APIBatch.load([manager, manager]) }
        #expect(error?.code == .cancelled)
        #expect(error?.message.contains("dropped") == true)
        #expect(await eventually { cancellations.value == 1 })
    }

    @Test func theFirstFailureCancelsTheRestAndIsThrown() async throws {
        let cancellations = Counter()
        let slow = try makeRegistry(slowEchoStub(delay: neverDuringATest, cancellations: cancellations))
        let failing = try makeRegistry(jsonStub("{}", status: 500))
        let managers: [any APIManager] = [ItemListAPIManager(registry: slow), ItemListAPIManager(registry: failing)]
        do {
            _ = try await APIBatch.load(managers)
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == .serverError)
        }
        #expect(await eventually { cancellations.value == 1 })
    }

    @Test func loadEachReturnsEveryOutcome() async throws {
        let good = try makeRegistry(jsonStub("[1]"))
        let bad = try makeRegistry(jsonStub("{}", status: 500))
        let results = await APIBatch.loadEach([ItemListAPIManager(registry: good), ItemListAPIManager(registry: bad)])
        #expect(results[0].success == [1])
        #expect(results[1].failure?.code == .serverError)
    }

    @Test func aChainFeedsEachStepFromThePreviousOne() async throws {
        let stub = StubDispatcher { request in
            if request.url.path.hasSuffix("login") { return Response(status: 200, body: Data(#"{"id":42}"#.utf8)) }
            let id = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value ?? "?"
            return Response(status: 200, body: Data(#"{"profile":"user \#(id)"}"#.utf8))
        }
        let registry = try makeRegistry(stub)
        let login = ItemListAPIManager(registry: registry, apiName: "login")
        let profile = ItemListAPIManager(registry: registry, apiName: "profile")
        let result = try await APIChain()
            .then(login)
            .then(profile) { previous in ["userID": previous?["id"] ?? nil] }
            .run()
        #expect(result == ["profile": "user 42"])
        #expect(stub.requests.map(\.url.absoluteString) == ["http://listings.test/v1/login", "http://listings.test/v1/profile?userID=42"])
    }

    @Test func aChainStopsAtTheFirstFailure() async throws {
        let stub = jsonStub("{}", status: 500)
        let registry = try makeRegistry(stub)
        do {
            try await APIChain()
                .then(ItemListAPIManager(registry: registry, apiName: "a"))
                .then(ItemListAPIManager(registry: registry, apiName: "b"))
                .run()
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == .serverError)
        }
        #expect(stub.requests.count == 1)
    }

    @Test("a step's parameters that fail stop the chain, and the error names the step")
    func aStepWhoseParametersFailStopsTheChain() async throws {
        let stub = jsonStub(#"{"id":42}"#)
        let registry = try makeRegistry(stub)
        let error = await #expect(throws: RunwayError.self) {
            try await APIChain()
                .then(ItemListAPIManager(registry: registry, apiName: "login"))
                .then(ItemListAPIManager(registry: registry, apiName: "profile")) { _ throws(RunwayError) in
                    throw .paramsInvalid(field: "userID", "no user")
                }
                .run()
        }
        #expect(error?.code == .paramsInvalid)
        #expect(error?.stage == RunwayError.Stage(kind: "chain", name: "step 2 params"))
        #expect(stub.requests.count == 1)
    }
}
