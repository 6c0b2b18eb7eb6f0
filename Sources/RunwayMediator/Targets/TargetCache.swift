import Foundation

/// The instances of targets declared ``TargetCaching/keep``, shared by copies of a ``Mediator``.
// @unchecked Sendable: `instances` is only read or written while `lock` is held.
final class TargetCache: @unchecked Sendable {
    private let lock = NSLock()
    private var instances: [String: any MediatorTarget] = [:]

    /// The kept instance for `name`, made by `make` on first use.
    func instance(named name: String, make: () -> any MediatorTarget) -> any MediatorTarget {
        lock.lock()
        defer { lock.unlock() }
        if let existing = instances[name] { return existing }
        let created = make()
        instances[name] = created
        return created
    }

    /// Drops the kept instance for `name`; returns whether there was one.
    @discardableResult
    func release(_ name: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return instances.removeValue(forKey: name) != nil
    }

    /// The names with a kept instance, sorted.
    var cachedNames: [String] {
        lock.lock()
        defer { lock.unlock() }
        return instances.keys.sorted()
    }
}
