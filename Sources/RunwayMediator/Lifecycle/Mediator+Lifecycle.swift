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
        for module in storage.modules {
            do { try await module.start(self) } catch {
                storage.lifecycle.set(.failed)
                throw MediatorError(.lifecycle, "module '\(module.name)' failed to start: \(error)", underlying: error)
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
