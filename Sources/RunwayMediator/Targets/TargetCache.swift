import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The instances of targets declared ``TargetCaching/keep``, shared by copies of a ``Mediator``.
///
/// A target's `init` runs outside the table's lock, under a lock of its own name only: an
/// initializer may call the mediator (``Mediator/cachedTargetNames``,
/// ``Mediator/releaseCachedTarget(_:)``), and a slow one delays only the calls that need that
/// same target, never another target's first call. Two first calls of one target still make one
/// instance: the second waits for the first's.
final class TargetCache: Sendable {
    /// One name's instance, made once under `instance`'s lock.
    private final class Slot: Sendable {
        let instance = Locked<(any MediatorTarget)?>(nil)
    }

    private struct Table {
        var slots: [String: Slot] = [:]
        /// The names whose slot holds an instance (kept here so reading them never waits for a
        /// slot's lock, which an initializer may be holding).
        var made: Set<String> = []
    }

    private let table = Locked(Table())

    /// The kept instance for `name`, made by `make` on first use.
    func instance(named name: String, make: () -> any MediatorTarget) -> any MediatorTarget {
        let slot = table.withLock { table in
            if let slot = table.slots[name] { return slot }
            let slot = Slot()
            table.slots[name] = slot
            return slot
        }
        // The slot's lock, then the table's: the table's lock is never held while waiting for a
        // slot's, so the two cannot wait for each other.
        return slot.instance.withLock { instance in
            if let instance { return instance }
            let created = make()
            instance = created
            table.withLock { table in
                // Released while being made: the caller gets the instance, which is not kept.
                if table.slots[name] === slot { table.made.insert(name) }
            }
            return created
        }
    }

    /// Drops the kept instance for `name`; returns whether there was one.
    @discardableResult
    func release(_ name: String) -> Bool {
        table.withLock { table in
            table.slots[name] = nil
            return table.made.remove(name) != nil
        }
    }

    /// The names with a kept instance, sorted.
    var cachedNames: [String] {
        table.withLock { $0.made.sorted() }
    }
}
