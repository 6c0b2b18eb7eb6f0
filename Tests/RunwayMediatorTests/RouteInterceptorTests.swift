import RunwayTestServer
import Testing

@testable import RunwayMediator

/// Appends "name>" on the way in and "<name" on the way out.
struct TracingInterceptor: RouteInterceptor {
    let name: String
    let log: Log
    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        log.append("\(name)>")
        let result = try await next(call)
        log.append("<\(name)")
        return result
    }
}

/// Redirects every call to a local-only action while keeping it remote.
struct SneakyRedirect: RouteInterceptor {
    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        var call = call
        call.target = "listing"
        call.action = "purge"
        return try await next(call)
    }
}

/// Redirects by opening the call's URL again through the mediator: a loop, since it comes back here.
struct ReopeningRedirect: RouteInterceptor {
    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        guard let mediator = call.mediator, let url = call.url else { return try await next(call) }
        return try await mediator.perform(url: url)
    }
}

@Suite("Route interceptors")
struct RouteInterceptorTests {
    @Test func callsGoFirstToLastResultsComeBackLastToFirst() async throws {
        let log = Log()
        var builder = try standardBuilder()
        builder.add(TracingInterceptor(name: "a", log: log))
        builder.add(TracingInterceptor(name: "b", log: log))
        builder.add(TracingInterceptor(name: "c", log: log))
        let mediator = try builder.build()
        #expect(mediator.interceptorNames == ["a", "b", "c"])
        try await mediator.open(url: "app://listing/1")
        #expect(log.all == ["a>", "b>", "c>", "<c", "<b", "<a"])
    }

    @Test func loginGateRedirectsTaggedActionsUntilLoggedIn() async throws {
        let loggedIn = Counter()
        var builder = try standardBuilder()
        builder.add(.loginGate(loginTarget: "account", loginAction: "login") { loggedIn.value > 0 })
        let mediator = try builder.build()
        let redirected = try await mediator.perform(url: "app://listing/5/edit", as: Screen.self)
        #expect(redirected.name == "account.login:app://listing/5/edit")
        let untagged = try await mediator.perform(url: "app://listing/5", as: Screen.self)
        #expect(untagged == Screen(name: "listing.detail", id: 5))
        _ = loggedIn.increment()
        let allowed = try await mediator.perform(url: "app://listing/5/edit", as: Screen.self)
        #expect(allowed == Screen(name: "listing.edit", id: 5))
    }

    @Test func analyticsObservesOutcomes() async throws {
        let log = Log()
        var builder = try standardBuilder()
        builder.add(.analytics { event in log.append("\(event.target)/\(event.action) \(event.origin) \(event.succeeded)") })
        let mediator = try builder.build()
        try await mediator.open(url: "app://listing/3")
        _ = try? await mediator.perform(target: "listing", action: "detail")  // missing id: the action throws
        #expect(log.all == ["listing/detail remote true", "listing/detail local false"])
    }

    @Test func redirectCannotCarryARemoteCallIntoALocalOnlyAction() async throws {
        var builder = try standardBuilder()
        builder.add(SneakyRedirect())
        let mediator = try builder.build()
        await #expect { try await mediator.perform(url: "app://listing/1") } throws: {
            ($0 as? MediatorError)?.code == .remoteCallForbidden
        }
        let local = try await mediator.perform(target: "listing", action: "detail", as: Screen.self)
        #expect(local.name == "listing.purge")
    }

    @Test func interceptorCanAnswerWithoutCallingNext() async throws {
        struct Cached: RouteInterceptor {
            func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable { Screen(name: "cached") }
        }
        var builder = try standardBuilder()
        builder.add(Cached())
        let mediator = try builder.build()
        #expect(try await mediator.perform(url: "app://listing/1", as: Screen.self) == Screen(name: "cached"))
    }

    @Test func aRedirectLoopEndsInATypedErrorAtTheDepthLimit() async throws {
        let calls = Counter()
        var builder = try standardBuilder()
        builder.add(.analytics { _ in _ = calls.increment() })
        builder.add(ReopeningRedirect())
        let mediator = try builder.build()
        await #expect { try await mediator.perform(url: "app://listing/1") } throws: {
            ($0 as? MediatorError)?.code == .callDepthExceeded && ($0 as? MediatorError)?.url == "app://listing/1"
        }
        // Every level passed the analytics interceptor once before the limit stopped the next one.
        #expect(calls.value == Mediator.maxCallDepth)

        // An unmatched-URL handler that opens the URL again loops the same way, and ends the same way.
        let box = Box<Mediator>()
        var unmatched = try standardBuilder()
        unmatched.onUnmatchedURL { request in try await box.value?.perform(url: request.url ?? "") }
        let looping = try unmatched.build()
        box.value = looping
        await #expect { try await looping.perform(url: "app://nowhere/x") } throws: {
            ($0 as? MediatorError)?.code == .callDepthExceeded
        }
    }

    @Test func anInterceptorsOwnErrorReachesTheCallerAsItself() async throws {
        struct Oops: Error {}
        struct Failing: RouteInterceptor {
            func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable { throw Oops() }
        }
        var builder = try standardBuilder()
        builder.add(Failing())
        let mediator = try builder.build()
        await #expect(throws: Oops.self) { try await mediator.open(url: "app://listing/1") }
    }
}
