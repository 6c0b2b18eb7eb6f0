import Foundation
import RunwayMediator
import RunwayTestServer

/// A screen value returned by test actions.
struct Screen: Sendable, Equatable {
    var name: String
    var id: Int? = nil
}

/// A listing module's target: a remote detail screen, a remote search, a local-only service.
struct ListingTarget: MediatorTarget {
    static let name = "listing"
    init() {}
    static func declareActions(_ actions: inout MediatorActions<ListingTarget>) {
        actions.action("detail", access: .remote, routes: ["app://listing/<int:id>"]) { _, call in
            Screen(name: "listing.detail", id: try call.parameters.int("id"))
        }
        actions.action("edit", access: .remote, routes: ["app://listing/<int:id>/edit"], tags: [LoginGate.requiresLogin]) { _, call in
            Screen(name: "listing.edit", id: try call.parameters.int("id"))
        }
        actions.action("purge") { _, _ in
            Screen(name: "listing.purge")
        }
        actions.action("slow", access: .remote) { _, call in
            try await Task.sleep(for: .milliseconds(5))
            return Screen(name: "listing.slow", id: try? call.parameters.int("id"))
        }
    }
}

/// A target kept between calls, counting how many instances were made.
final class CountingTarget: MediatorTarget, @unchecked Sendable {
    // @unchecked Sendable: no stored state; `made` is a global counter behind its own lock.
    static let name = "counting"
    static var caching: TargetCaching { .keep }
    static let made = Counter()
    let serial: Int

    init() { serial = Self.made.increment() }

    static func declareActions(_ actions: inout MediatorActions<CountingTarget>) {
        actions.action("serial") { target, _ in target.serial }
    }
}

/// A kept target whose initializer calls the mediator it is made by (reached through
/// `mediator`, set by the one test that uses it): it reads the kept names and releases
/// `counting`.
final class IntrospectingTarget: MediatorTarget, @unchecked Sendable {
    // @unchecked Sendable: `seen` and `released` are set in `init` and never changed; `mediator`
    // is behind its own lock.
    static let name = "introspecting"
    static var caching: TargetCaching { .keep }
    static let mediator = Box<Mediator>()
    let seen: [String]
    let released: Bool

    init() {
        seen = Self.mediator.value?.cachedTargetNames ?? []
        released = Self.mediator.value?.releaseCachedTarget("counting") ?? false
    }

    static func declareActions(_ actions: inout MediatorActions<IntrospectingTarget>) {
        actions.action("seen") { target, _ in target.seen }
        actions.action("released") { target, _ in target.released }
    }
}

/// A value set once and read from any thread.
final class Box<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched while `lock` is held.
    private let lock = NSLock()
    private var stored: Value?
    var value: Value? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A thread-safe log of strings.
final class Log: @unchecked Sendable {
    // @unchecked Sendable: `entries` is only touched while `lock` is held.
    private let lock = NSLock()
    private var entries: [String] = []
    func append(_ entry: String) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }
    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}

/// A builder with the listing target and an account target with a remote login screen and a
/// remote not-found screen.
func standardBuilder() throws -> Mediator.Builder {
    var builder = Mediator.Builder()
    try builder.register(ListingTarget.self)
    try builder.register(targetNamed: "account") { actions in
        actions.action("login", access: .remote, routes: ["app://account/login"]) { _, call in
            Screen(name: "account.login:" + ((try? call.parameters.string("redirectURL")) ?? "-"))
        }
        actions.action("notFound", access: .remote) { _, call in
            Screen(name: "account.notFound:" + (call.unmatched?.description ?? "-"))
        }
        actions.action("wipe") { _, _ in Screen(name: "account.wipe") }
    }
    return builder
}
