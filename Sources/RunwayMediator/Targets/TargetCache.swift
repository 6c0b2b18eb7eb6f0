import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The instances of targets declared ``TargetCaching/keep``, shared by copies of a ``Mediator``.
final class TargetCache: Sendable {
    private let instances = Locked<[String: any MediatorTarget]>([:])

    /// The kept instance for `name`, made by `make` on first use.
    func instance(named name: String, make: () -> any MediatorTarget) -> any MediatorTarget {
        instances.withLock { instances in
            if let existing = instances[name] { return existing }
            let created = make()
            instances[name] = created
            return created
        }
    }

    /// Drops the kept instance for `name`; returns whether there was one.
    @discardableResult
    func release(_ name: String) -> Bool {
        instances.withLock { $0.removeValue(forKey: name) != nil }
    }

    /// The names with a kept instance, sorted.
    var cachedNames: [String] {
        instances.withLock { $0.keys.sorted() }
    }
}
