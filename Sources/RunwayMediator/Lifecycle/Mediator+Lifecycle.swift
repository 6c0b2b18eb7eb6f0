import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether the modules have been started; enforces start once, stop after start.
final class LifecycleState: Sendable {
    enum Phase { case idle, starting, started, stopped, failed }
    private let phase = Locked(Phase.idle)

    /// Moves from `from` to `to`; returns the phase found when it was not `from`.
    func transition(from: Phase, to: Phase) -> Phase? {
        phase.withLock { phase in
            guard phase == from else { return phase }
            phase = to
            return nil
        }
    }

    func set(_ newPhase: Phase) {
        phase.withLock { $0 = newPhase }
    }
}

extension Mediator {
    /// The modules' names in lifecycle order (dependencies first, then by name).
    public var moduleOrder: [String] { storage.modules.map(\.name) }

    /// Sends the modules their start-up events: every ``MediatorModule/configure(_:)`` in order,
    /// then every ``MediatorModule/start(_:)`` in order. Runs once; a second call is `.lifecycle`.
    ///
    /// When a module's `start` throws, the modules already started are stopped, in reverse
    /// order, before the error is thrown: nothing is left running that ``stop()`` could no longer
    /// reach (the modules are then failed, and neither start nor stop again).
    public func start(configuration: MediatorParameters = [:]) async throws {
        if let phase = storage.lifecycle.transition(from: .idle, to: .starting) {
            throw MediatorError(.lifecycle, "modules cannot start: they are \(phase)")
        }
        for module in storage.modules {
            do { try module.configure(configuration) } catch {
                storage.lifecycle.set(.failed)
                throw MediatorError(.lifecycle, "module '\(module.name)' failed to configure: \(error)", underlying: error)
            }
        }
        for (index, module) in storage.modules.enumerated() {
            do { try await module.start(self) } catch {
                for started in storage.modules[..<index].reversed() { await started.stop() }
                storage.lifecycle.set(.failed)
                let stopped = index == 0 ? "" : " (the \(index) started before it were stopped)"
                throw MediatorError(.lifecycle, "module '\(module.name)' failed to start\(stopped): \(error)", underlying: error)
            }
        }
        storage.lifecycle.set(.started)
    }

    /// Stops the modules in reverse order; only after a successful ``start(configuration:)``.
    public func stop() async throws {
        if let phase = storage.lifecycle.transition(from: .started, to: .stopped) {
            throw MediatorError(.lifecycle, "modules cannot stop: they are \(phase)")
        }
        for module in storage.modules.reversed() { await module.stop() }
    }
}
