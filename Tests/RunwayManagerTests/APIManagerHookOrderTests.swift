import Foundation
import Runway
import RunwayTesting
import Testing

/// A manager that records every hook, and can veto or stop deliveries.
final class HookedAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "items"
    let serviceID: ServiceID = .listings
    let log: EventLog
    let veto: Bool
    let stopSuccess: Bool
    let stopFail: Bool
    let rejectParams: Bool

    init(
        registry: ServiceRegistry, log: EventLog, veto: Bool = false, stopSuccess: Bool = false, stopFail: Bool = false,
        rejectParams: Bool = false
    ) {
        self.engine = ManagerEngine(registry: registry, delivery: .inline)
        self.log = log
        self.veto = veto
        self.stopSuccess = stopSuccess
        self.stopFail = stopFail
        self.rejectParams = rejectParams
    }

    func shouldCallAPI(with params: [String: JSON]) -> Bool {
        log.append("shouldCallAPI")
        return !veto
    }
    func validate(params: [String: JSON]) throws(RunwayError) {
        log.append("validate(params)")
        if rejectParams { throw .paramsInvalid(field: "city", "required") }
    }
    func afterCallingAPI(with params: [String: JSON]) { log.append("afterCallingAPI") }
    func didReceiveResponse(_ response: Response) { log.append("didReceiveResponse") }
    func validate(response: APIResponse) throws(RunwayError) {
        log.append("validate(response)")
        if response.json["ok"]?.bool != true { throw .responseInvalid("ok is not true", response: response, field: "ok") }
    }
    func beforePerformSuccess(_ response: APIResponse) -> Bool {
        log.append("beforePerformSuccess")
        return !stopSuccess
    }
    func afterPerformSuccess(_ response: APIResponse) { log.append("afterPerformSuccess") }
    func beforePerformFail(_ error: RunwayError) -> Bool {
        log.append("beforePerformFail")
        return !stopFail
    }
    func afterPerformFail(_ error: RunwayError) { log.append("afterPerformFail") }
}

/// An interceptor that writes into an `EventLog`.
struct LoggingInterceptor: Interceptor {
    let log: EventLog
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        log.append("interceptor>")
        let response = try await next(request, context)
        log.append("<interceptor")
        return response
    }
}

@Suite struct APIManagerHookOrderTests {
    private func setUp(body: String, log: EventLog) throws -> ServiceRegistry {
        let stub = StubDispatcher { _ in
            log.append("dispatcher")
            return Response(status: 200, body: Data(body.utf8))
        }
        return try makeRegistry(stub, interceptors: [LoggingInterceptor(log: log)])
    }

    @Test func successRunsEveryHookInTheDocumentedOrder() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":true}"#, log: log), log: log)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        try await manager.load()
        log.append("load returned")
        #expect(
            log.events == [
                "shouldCallAPI", "validate(params)", "afterCallingAPI", "interceptor>", "dispatcher", "<interceptor",
                "didReceiveResponse", "validate(response)", "beforePerformSuccess", "delegate.success",
                "afterPerformSuccess", "load returned",
            ])
    }

    @Test func failureRunsTheFailHooksAroundTheDelegate() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":false}"#, log: log), log: log)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load() }
        log.append("load returned")
        #expect(
            log.events == [
                "shouldCallAPI", "validate(params)", "afterCallingAPI", "interceptor>", "dispatcher", "<interceptor",
                "didReceiveResponse", "validate(response)", "beforePerformFail", "delegate.fail(responseInvalid)",
                "afterPerformFail", "load returned",
            ])
        let error = try #require(result.failure)
        #expect(error.code == .responseInvalid)
        #expect(error.field == "ok")
        #expect(error.response.map { String(decoding: $0.body, as: UTF8.self) } == #"{"ok":false}"#)
        #expect(manager.lastError?.code == .responseInvalid)
    }

    @Test func beforePerformFailReturningFalseStopsTheDelivery() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":false}"#, log: log), log: log, stopFail: true)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load() }
        #expect(!log.events.contains("delegate.fail(responseInvalid)"))
        #expect(!log.events.contains("afterPerformFail"))
        #expect(log.events.last == "beforePerformFail")
        let error = try #require(result.failure)
        #expect(error.code == .cancelled)
        #expect((error.underlying as? RunwayError)?.code == .responseInvalid)
    }

    @Test func beforePerformSuccessReturningFalseStopsTheDelivery() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":true}"#, log: log), log: log, stopSuccess: true)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load() }
        #expect(log.events.last == "beforePerformSuccess")
        #expect(result.failure?.code == .cancelled)
        #expect(manager.rawData == ["ok": true])
    }

    @Test func aVetoStartsNothingAndDeliversNothing() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":true}"#, log: log), log: log, veto: true)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == .cancelled)
        #expect(manager.loadData() == false)
        // No call is in flight that could deliver anything later.
        #expect(!manager.isLoading)
        #expect(log.events == ["shouldCallAPI", "shouldCallAPI"])
    }

    @Test func invalidParamsFailBeforeTheNetworkAndNameTheField() async throws {
        let log = EventLog()
        let manager = HookedAPIManager(registry: try setUp(body: #"{"ok":true}"#, log: log), log: log, rejectParams: true)
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load(params: ["city": ""]) }
        #expect(
            log.events == ["shouldCallAPI", "validate(params)", "beforePerformFail", "delegate.fail(paramsInvalid)", "afterPerformFail"])
        let error = try #require(result.failure)
        #expect(error.code == .paramsInvalid)
        #expect(error.field == "city")
        #expect(error.stage == .manager("items"))
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
