import Testing

@testable import RunwayMediator

/// A module that logs its lifecycle events and registers one target.
struct LoggingModule: MediatorModule {
    let name: String
    var dependencies: [String] = []
    let log: Log

    func register(into builder: inout Mediator.Builder) throws {
        log.append("register \(name)")
        try builder.register(targetNamed: name) { actions in
            actions.action("ping") { _, _ in "pong" }
        }
    }

    func configure(_ configuration: MediatorParameters) throws {
        log.append("configure \(name) \((try? configuration.string("env")) ?? "-")")
    }

    func start(_ mediator: Mediator) async throws {
        let reply = try await mediator.perform(target: name, action: "ping", as: String.self)
        log.append("start \(name) \(reply)")
    }

    func stop() async { log.append("stop \(name)") }
}

@Suite("Module lifecycle")
struct MediatorLifecycleTests {
    func modules(_ log: Log) -> [LoggingModule] {
        [
            LoggingModule(name: "search", dependencies: ["listing", "account"], log: log),
            LoggingModule(name: "listing", dependencies: ["account"], log: log),
            LoggingModule(name: "account", log: log),
            LoggingModule(name: "chat", log: log),
        ]
    }

    @Test func eventsRunInDependencyOrderWhateverTheAddOrder() async throws {
        var reference: [String]?
        var generator = SplitMix64(seed: 7)
        for _ in 0..<6 {
            let log = Log()
            var builder = Mediator.Builder()
            for module in modules(log).shuffled(using: &generator) { builder.add(module: module) }
            let mediator = try builder.build()
            #expect(mediator.moduleOrder == ["account", "chat", "listing", "search"])
            try await mediator.start(configuration: ["env": "test"])
            try await mediator.stop()
            if let reference { #expect(log.all == reference) } else { reference = log.all }
        }
        #expect(
            reference == [
                "register account", "register chat", "register listing", "register search",
                "configure account test", "configure chat test", "configure listing test", "configure search test",
                "start account pong", "start chat pong", "start listing pong", "start search pong",
                "stop search", "stop listing", "stop chat", "stop account",
            ])
    }

    @Test func startsOnceAndStopsOnlyAfterStart() async throws {
        var builder = Mediator.Builder()
        builder.add(module: LoggingModule(name: "a", log: Log()))
        let mediator = try builder.build()
        await #expect { try await mediator.stop() } throws: { ($0 as? MediatorError)?.code == .lifecycle }
        try await mediator.start()
        await #expect { try await mediator.start() } throws: { ($0 as? MediatorError)?.code == .lifecycle }
        try await mediator.stop()
    }

    /// A module whose start fails.
    struct FailingModule: MediatorModule {
        struct Refused: Error {}
        let name: String
        var dependencies: [String] = []
        let log: Log
        func start(_ mediator: Mediator) async throws {
            log.append("start \(name) fails")
            throw Refused()
        }
        func stop() async { log.append("stop \(name)") }
    }

    @Test("a module whose start fails: the modules started before it are stopped, in reverse order, and the error names it")
    func aFailedStartStopsWhatStarted() async throws {
        let log = Log()
        var builder = Mediator.Builder()
        builder.add(module: LoggingModule(name: "account", log: log))
        builder.add(module: LoggingModule(name: "chat", log: log))
        builder.add(module: FailingModule(name: "listing", dependencies: ["account"], log: log))
        builder.add(module: LoggingModule(name: "search", dependencies: ["listing"], log: log))
        let mediator = try builder.build()
        let error = await #expect(throws: MediatorError.self) { try await mediator.start() }
        #expect(error?.code == .lifecycle)
        #expect(error?.message.contains("'listing' failed to start") == true)
        #expect(error?.underlying is FailingModule.Refused)
        #expect(
            log.all == [
                "register account", "register chat", "register search", "configure account -", "configure chat -",
                "configure search -", "start account pong", "start chat pong", "start listing fails", "stop chat", "stop account",
            ])
        // Failed: neither started nor stopped again.
        await #expect { try await mediator.start() } throws: { ($0 as? MediatorError)?.code == .lifecycle }
        await #expect { try await mediator.stop() } throws: { ($0 as? MediatorError)?.code == .lifecycle }
    }

    @Test func cyclesAndUnknownDependenciesAreRejected() {
        let log = Log()
        var cycle = Mediator.Builder()
        cycle.add(module: LoggingModule(name: "a", dependencies: ["b"], log: log))
        cycle.add(module: LoggingModule(name: "b", dependencies: ["a"], log: log))
        #expect { try cycle.build() } throws: { ($0 as? MediatorError)?.message.contains("cycle") == true }
        var unknown = Mediator.Builder()
        unknown.add(module: LoggingModule(name: "a", dependencies: ["ghost"], log: log))
        #expect { try unknown.build() } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }
    }

    @Test func aModuleAddedByAnotherModulesRegistrationIsAnErrorNotDropped() {
        struct Parent: MediatorModule {
            let log: Log
            var name: String { "parent" }
            func register(into builder: inout Mediator.Builder) throws {
                builder.add(module: LoggingModule(name: "child", log: log))
            }
        }
        var builder = Mediator.Builder()
        builder.add(module: Parent(log: Log()))
        #expect { try builder.build() } throws: {
            let error = $0 as? MediatorError
            return error?.code == .invalidRegistration && error?.message.contains("module 'parent' added module 'child'") == true
        }
        // Added to the builder itself, the same module registers and gets its events.
        let log = Log()
        var direct = Mediator.Builder()
        direct.add(module: LoggingModule(name: "child", log: log))
        #expect(throws: Never.self) { try direct.build() }
        #expect(log.all == ["register child"])
    }

    @Test func failingStartIsALifecycleErrorNamingTheModule() async throws {
        struct Broken: MediatorModule {
            struct Nope: Error {}
            var name: String { "broken" }
            func start(_ mediator: Mediator) async throws { throw Nope() }
        }
        var builder = Mediator.Builder()
        builder.add(module: Broken())
        let mediator = try builder.build()
        await #expect { try await mediator.start() } throws: {
            ($0 as? MediatorError)?.code == .lifecycle && ($0 as? MediatorError)?.message.contains("broken") == true
        }
    }
}
