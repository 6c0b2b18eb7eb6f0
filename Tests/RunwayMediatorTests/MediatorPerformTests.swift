import Testing

@testable import RunwayMediator

@Suite("Mediator calls")
struct MediatorPerformTests {
    @Test func localCallReachesEveryActionAndReturnsItsValue() async throws {
        let mediator = try standardBuilder().build()
        let purge = try await mediator.perform(target: "listing", action: "purge", as: Screen.self)
        #expect(purge == Screen(name: "listing.purge"))
        let detail = try await mediator.perform(target: "Listing", action: "detail", parameters: ["id": 7], as: Screen.self)
        #expect(detail == Screen(name: "listing.detail", id: 7))
    }

    @Test func urlCallResolvesTypedParameters() async throws {
        let mediator = try standardBuilder().build()
        let screen = try await mediator.perform(url: "app://listing/42?ref=push", as: Screen.self)
        #expect(screen == Screen(name: "listing.detail", id: 42))
        let match = try #require(try mediator.resolve("app://listing/42?ref=push"))
        #expect(match.target == "listing" && match.action == "detail")
        #expect(try match.parameters.value("id", as: Int.self) == 42)
        #expect(try match.parameters.string("ref") == "push")
    }

    @Test func implicitRouteCarriesQueryParameters() async throws {
        let mediator = try standardBuilder().build()
        let screen = try await mediator.perform(url: "app://listing/slow?id=3", as: Screen.self)
        #expect(screen == Screen(name: "listing.slow", id: 3))
    }

    @Test func remoteCallToLocalOnlyActionIsForbidden() async throws {
        let mediator = try standardBuilder().build()
        await #expect(throws: MediatorError.self) { try await mediator.perform(url: "app://listing/purge") }
        do {
            try await mediator.open(url: "app://listing/purge")
            Issue.record("expected an error")
        } catch let error as MediatorError {
            #expect(error.code == .remoteCallForbidden)
            #expect(error.url == "app://listing/purge")
        }
        #expect(!mediator.canOpen(url: "app://listing/purge"))
        // The same URL from inside the app is allowed.
        let screen = try await mediator.perform(url: "app://listing/purge", origin: .local, as: Screen.self)
        #expect(screen.name == "listing.purge")
        // And a local call by name that claims to be remote is checked too.
        await #expect(throws: MediatorError.self) {
            try await mediator.perform(target: "listing", action: "purge", origin: .remote)
        }
    }

    @Test func canOpenOnlyForRemoteCallableRoutes() throws {
        let mediator = try standardBuilder().build()
        #expect(mediator.canOpen(url: "app://listing/42"))
        #expect(mediator.canOpen(url: "app://account/login"))
        #expect(!mediator.canOpen(url: "app://listing/nope/deeper"))
        #expect(!mediator.canOpen(url: "other://listing/42"))
        #expect(!mediator.canOpen(url: "not a url"))
    }

    @Test func notFoundWithoutFallbackIsTypedError() async throws {
        let mediator = try standardBuilder().build()
        await #expect { try await mediator.perform(url: "app://nowhere/x") } throws: { error in
            (error as? MediatorError)?.code == .notFound
        }
        await #expect { try await mediator.perform(target: "listing", action: "missing") } throws: { error in
            let error = error as? MediatorError
            return error?.code == .notFound && error?.target == "listing" && error?.action == "missing"
        }
    }

    @Test func fallbackGetsTheOriginalRequest() async throws {
        var builder = try standardBuilder()
        builder.setFallback(target: "account", action: "notFound")
        let mediator = try builder.build()
        let byURL = try await mediator.perform(url: "app://nowhere/x?q=1", as: Screen.self)
        #expect(byURL.name == "account.notFound:app://nowhere/x?q=1")
        let byName = try await mediator.perform(target: "ghost", action: "boo", as: Screen.self)
        #expect(byName.name == "account.notFound:ghost/boo")
        #expect(!mediator.canOpen(url: "app://nowhere/x"))
    }

    @Test func unmatchedHandlerRunsBeforeFallback() async throws {
        var builder = try standardBuilder()
        builder.setFallback(target: "account", action: "notFound")
        let seen = Log()
        builder.onUnmatchedURL { request in
            seen.append("\(request.target ?? "?") \(request.parameters.strings("q"))")
            return request.target == "web" ? Screen(name: "web") : nil
        }
        let mediator = try builder.build()
        #expect(try await mediator.perform(url: "app://web/page?q=a&q=b", as: Screen.self) == Screen(name: "web"))
        let fallback = try await mediator.perform(url: "app://other", as: Screen.self)
        #expect(fallback.name.hasPrefix("account.notFound"))
        #expect(seen.all == ["web [\"a\", \"b\"]", "other []"])
    }

    @Test("a web URL with user info, a port or an IP literal reaches the unmatched-URL handler, then the fallback")
    func urlsWithAForeignAuthorityAreUnmatchedNotMalformed() async throws {
        var builder = try standardBuilder()
        builder.setFallback(target: "account", action: "notFound")
        let seen = Log()
        builder.onUnmatchedURL { request in
            seen.append("\(request.target ?? "?") \(request.parameters.strings("q"))")
            return request.url?.hasPrefix("https://") == true ? Screen(name: "web") : nil
        }
        let mediator = try builder.build()
        let urls = [
            "https://example.com:8443/x?q=1", "https://user@Example.com/x", "https://u:p@example.com:80/x",
            "https://[::1]:8080/x", "https://[::1]/x",
        ]
        for url in urls {
            #expect(try await mediator.perform(url: url, as: Screen.self) == Screen(name: "web"), "\(url)")
            // Not a mediator URL: resolving it is still malformed, and nothing can open it.
            #expect(throws: MediatorError.self) { try mediator.resolve(url) }
            #expect(!mediator.canOpen(url: url))
        }
        #expect(seen.all == ["example.com [\"1\"]", "example.com []", "example.com []", "[::1] []", "[::1] []"])
        // The app's own scheme with a port matches no target either: the fallback takes it.
        let fallback = try await mediator.perform(url: "app://listing:80/detail/42", as: Screen.self)
        #expect(fallback.name == "account.notFound:app://listing:80/detail/42")
        // Malformed otherwise, it stays malformed.
        await #expect(throws: MediatorError.self) { try await mediator.perform(url: "https://example.com:80/%zz") }
        await #expect(throws: MediatorError.self) { try await mediator.perform(url: "https://:80/x") }
    }

    @Test func fallbackMustExistAndBeRemoteCallable() throws {
        var missing = try standardBuilder()
        missing.setFallback(target: "account", action: "nope")
        #expect { try missing.build() } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }
        var local = try standardBuilder()
        local.setFallback(target: "account", action: "wipe")
        #expect { try local.build() } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }
    }

    @Test func malformedURLIsTypedError() async throws {
        let mediator = try standardBuilder().build()
        for bad in ["", "listing/42", "app:/listing", "app://", "app://listing/%zz", "app://a b", "1app://x", "app://us@er/x"] {
            await #expect(throws: MediatorError.self, "\(bad)") { try await mediator.perform(url: bad) }
            #expect(throws: MediatorError.self) { try mediator.resolve(bad) }
        }
        do {
            _ = try mediator.resolve("app://listing/%E2%82")
            Issue.record("expected an error")
        } catch let error as MediatorError {
            #expect(error.code == .malformedURL)
            #expect(error.url == "app://listing/%E2%82")
        }
    }

    /// Queries that cannot be read: a bad escape, a truncated one, invalid UTF-8, an item with no name.
    static let malformedQueries = ["q=%ZZ", "q=%4", "q=%FF", "=v", "ok=1&%zz=2"]

    @Test func unmatchedURLWithMalformedQueryIsNotFoundLikeAnyUnmatchedURL() async throws {
        let mediator = try standardBuilder().build()
        for query in Self.malformedQueries {
            let url = "app://nowhere/x?" + query
            #expect(try mediator.resolve(url) == nil, "\(url)")
            #expect(!mediator.canOpen(url: url))
            await #expect("\(url)") { try await mediator.perform(url: url) } throws: { error in
                let error = error as? MediatorError
                return error?.code == .notFound && error?.url == url && error?.target == "nowhere"
            }
        }
    }

    @Test func unmatchedURLWithMalformedQueryGoesToTheHandlerThenTheFallback() async throws {
        var builder = try standardBuilder()
        builder.setFallback(target: "account", action: "notFound")
        let seen = Log()
        builder.onUnmatchedURL { request in
            seen.append("\(request.target ?? "?") \(request.parameters.keys)")
            return request.target == "web" ? Screen(name: "web") : nil
        }
        let mediator = try builder.build()
        for query in Self.malformedQueries {
            #expect(try await mediator.perform(url: "app://web/page?" + query, as: Screen.self) == Screen(name: "web"))
            let fallback = try await mediator.perform(url: "app://nowhere/x?" + query, as: Screen.self)
            #expect(fallback.name == "account.notFound:app://nowhere/x?" + query)
        }
        // The handler gets no parameters from a query it cannot read, and every item of one it can.
        #expect(try await mediator.perform(url: "app://web/page?a=1&b=2", as: Screen.self) == Screen(name: "web"))
        #expect(seen.all == Self.malformedQueries.flatMap { _ in ["web []", "nowhere []"] } + ["web [\"a\", \"b\"]"])
    }

    @Test func matchedURLWithMalformedQueryIsMalformedForAllThree() async throws {
        var builder = try standardBuilder()
        builder.setFallback(target: "account", action: "notFound")
        let mediator = try builder.build()
        for query in Self.malformedQueries {
            let url = "app://listing/42?" + query
            #expect("\(url)") { try mediator.resolve(url) } throws: { ($0 as? MediatorError)?.code == .malformedURL }
            #expect(!mediator.canOpen(url: url))
            // Neither the unmatched handler nor the fallback: the URL did match.
            await #expect("\(url)") { try await mediator.perform(url: url) } throws: { error in
                let error = error as? MediatorError
                return error?.code == .malformedURL && error?.url == url
            }
        }
        // A malformed path is malformed whether or not anything would match it.
        for url in ["app://nowhere/%ZZ?q=1", "app://listing/%ZZ"] {
            #expect { try mediator.resolve(url) } throws: { ($0 as? MediatorError)?.code == .malformedURL }
            #expect(!mediator.canOpen(url: url))
            await #expect { try await mediator.perform(url: url) } throws: { ($0 as? MediatorError)?.code == .malformedURL }
        }
    }

    @Test func anActionsOwnErrorReachesTheCallerAsItself() async throws {
        struct Boom: Error, Equatable { let code: Int }
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "t") { actions in
            actions.action("fail") { _, _ in throw Boom(code: 7) }
        }
        let mediator = try builder.build()
        await #expect(throws: Boom(code: 7)) { try await mediator.perform(target: "t", action: "fail") }
        await #expect(throws: Boom(code: 7)) { try await mediator.perform(url: "app://t/fail", origin: .local) }
        await #expect(throws: Boom(code: 7)) { try await mediator.perform(url: "app://t/fail", origin: .local, as: Int.self) }
    }

    @Test func aCancelledCallIsMediatorCancelledAsThePipelineMakesItRunwayCancelled() async throws {
        var builder = Mediator.Builder()
        let (started, startedNow) = AsyncStream.makeStream(of: Void.self)
        try builder.register(targetNamed: "t") { actions in
            actions.action("wait") { _, _ in
                startedNow.yield()
                try await Task.sleep(for: .seconds(600))
                return 1
            }
            actions.action("give-up") { _, _ in throw CancellationError() }
        }
        builder.onUnmatchedURL { _ in throw CancellationError() }
        let mediator = try builder.build()
        let isCancelled: @Sendable (any Error) -> Bool = { error in
            guard let error = error as? MediatorError else { return false }
            return error.code == .cancelled && error.underlying is CancellationError
        }

        let call = Task { try await mediator.perform(url: "app://t/wait", origin: .local, as: Int.self) }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        call.cancel()
        await #expect { try await call.value } throws: { error in
            isCancelled(error) && (error as? MediatorError)?.action == "wait"
        }
        await #expect { try await mediator.perform(target: "t", action: "give-up") } throws: { isCancelled($0) }
        await #expect { try await mediator.perform(url: "app://nowhere/x") } throws: { isCancelled($0) }
    }

    @Test func typedResultMismatchIsTypedError() async throws {
        let mediator = try standardBuilder().build()
        await #expect { try await mediator.perform(url: "app://listing/1", as: Int.self) } throws: {
            ($0 as? MediatorError)?.code == .unexpectedResult
        }
    }

    @Test func asyncActionsRunConcurrently() async throws {
        let mediator = try standardBuilder().build()
        let screens = try await withThrowingTaskGroup(of: Screen.self) { group in
            for id in 0..<20 {
                group.addTask { try await mediator.perform(url: "app://listing/slow?id=\(id)", as: Screen.self) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(screens.compactMap(\.id)) == Set(0..<20))
    }

    @Test func keptTargetIsReusedUntilReleased() async throws {
        var builder = Mediator.Builder()
        try builder.register(CountingTarget.self)
        let mediator = try builder.build()
        let first = try await mediator.perform(target: "counting", action: "serial", as: Int.self)
        let second = try await mediator.perform(target: "counting", action: "serial", as: Int.self)
        #expect(first == second)
        #expect(mediator.cachedTargetNames == ["counting"])
        #expect(mediator.releaseCachedTarget("Counting"))
        #expect(!mediator.releaseCachedTarget("counting"))
        let third = try await mediator.perform(target: "counting", action: "serial", as: Int.self)
        #expect(third > second)
    }

    // A regression deadlocks: the time limit makes it a failure, not a hung run.
    @Test(.timeLimit(.minutes(1))) func keptTargetsInitializerMayCallTheMediator() async throws {
        var builder = Mediator.Builder()
        try builder.register(CountingTarget.self)
        try builder.register(IntrospectingTarget.self)
        let mediator = try builder.build()
        IntrospectingTarget.mediator.value = mediator
        _ = try await mediator.perform(target: "counting", action: "serial", as: Int.self)
        // The initializer runs while the target is being made: it sees the kept `counting`
        // and releases it, instead of waiting for the cache it is being made in.
        #expect(try await mediator.perform(target: "introspecting", action: "seen", as: [String].self) == ["counting"])
        #expect(try await mediator.perform(target: "introspecting", action: "released", as: Bool.self))
        #expect(mediator.cachedTargetNames == ["introspecting"])
    }

    @Test func perCallTargetsAreNotKept() async throws {
        let mediator = try standardBuilder().build()
        _ = try await mediator.perform(target: "listing", action: "purge")
        #expect(mediator.cachedTargetNames.isEmpty)
    }
}
