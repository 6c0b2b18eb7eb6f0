import Foundation
import Runway
import RunwayTesting
import Testing

/// Records the API, service ID and service each call's context carries.
private struct ContextProbe: Interceptor {
    let label: String
    let log: EventLog

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        log.append("\(label): \(context.apiName ?? "-") @ \(context.serviceID ?? "-") by \(context.service?.id ?? "-")")
        return try await next(request, context)
    }
}

/// `ServiceRegistry.send`: a body built by the caller, through the service's chain.
@Suite struct ServiceRegistrySendTests {
    @Test func sendsToTheAPIUnderTheBaseURLWithTheServiceHeadersAndContext() async throws {
        let stub = StubDispatcher(status: 202, body: Data("{}".utf8))
        let seen = EventLog()
        var service = TestService(id: .listings, baseURL: "https://api.example.test/v2/")
        service.commonHeaders = ["X-Client": "app/1.0", "Content-Type": "text/plain"]
        service.interceptors = [ContextProbe(label: "service", log: seen)]
        let registry = try makeRegistry(stub, services: [service], interceptors: [ContextProbe(label: "app", log: seen)])
        let body = Data(#"{"batch":"b"}"#.utf8)
        let response = try await registry.send(
            api: "actions/batch", of: .listings, headers: ["Content-Type": "application/json", "Idempotency-Key": "b"],
            body: body)
        #expect(response.status == 202)
        let sent = try #require(stub.requests.first)
        #expect(sent.method == .post)
        #expect(sent.url.absoluteString == "https://api.example.test/v2/actions/batch")
        #expect(sent.body == body)
        #expect(sent.headers["X-Client"] == "app/1.0")
        #expect(sent.headers.values(for: "Content-Type") == ["application/json"])  // the call's header wins
        #expect(sent.headers["Idempotency-Key"] == "b")
        #expect(seen.events == ["app: actions/batch @ listings by listings", "service: actions/batch @ listings by listings"])
    }

    @Test func anUnknownServiceAndAnUnreachableNetworkAreTypedErrors() async throws {
        let stub = StubDispatcher(status: 200)
        let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.unreachable))
        monitor.refresh()
        let registry = try makeRegistry(stub, reachability: monitor)
        await #expect { try await registry.send(api: "x", of: "nobody") } throws: {
            ($0 as? RunwayError)?.code == .configuration
        }
        await #expect { try await registry.send(api: "x", of: .listings) } throws: {
            ($0 as? RunwayError)?.code == .noNetwork && ($0 as? RunwayError)?.neverSent == true
        }
        #expect(stub.requests.isEmpty)
    }
}

@Suite struct RequestContextServiceTests {
    @Test func aContextCarriesTheServiceSetOnItAndItsValuesApart() {
        var context = RequestContext(apiName: "a", serviceID: "listings")
        #expect(context.service == nil)
        context[CallerTag.self] = "tagged"
        context.service = TestService(id: .listings, baseURL: "https://api.example.test")
        #expect(context.service?.id == .listings)
        #expect(context[CallerTag.self] == "tagged")
        var copy = context
        copy.service = nil
        #expect(copy.service == nil)
        #expect(context.service?.id == .listings)  // a value: the copy's change is its own
        #expect(copy[CallerTag.self] == "tagged")
    }
}

private enum CallerTag: ContextKey {
    typealias Value = String
}
