import Dispatch
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a manager lands its calls: the delegate methods and the hooks around them
/// (`beforePerformSuccess` ... `afterPerformFail`) run here.
///
/// The default is the main actor, for delegates that are view controllers or other
/// `@MainActor` types (conform with `extension ListViewController: @MainActor APIManagerDelegate`).
/// Choose another only for delegates that are safe to call from it.
public struct ManagerDelivery: Sendable {
    private enum Base: Sendable {
        case mainActor
        case inline
        case queue(DispatchQueue)
    }

    private let base: Base

    /// On the main actor (the default).
    public static let mainActor = ManagerDelivery(base: .mainActor)
    /// On whatever task finished the call, with no hop: for thread-safe delegates, servers and
    /// benchmarks.
    public static let inline = ManagerDelivery(base: .inline)
    /// On a dispatch queue, one landing at a time and in the order the calls landed.
    ///
    /// A concurrent queue is accepted: the landings go through a serial queue that targets it, so
    /// they never overlap, as a delegate expects. Each value made here has its own serial queue;
    /// give a manager's engine one value, not a new one per call.
    public static func queue(_ queue: DispatchQueue) -> ManagerDelivery {
        ManagerDelivery(base: .queue(DispatchQueue(label: "Runway.ManagerDelivery", target: queue)))
    }

    /// Whether delivery runs on the task that finished the call.
    var isInline: Bool {
        if case .inline = base { return true }
        return false
    }

    /// Runs `body` on this executor and returns its result when it has run.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        switch base {
        case .mainActor:
            return await MainActor.run { body() }
        case .inline:
            return body()
        case .queue(let queue):
            // `body` must be escaping: the queue's block may still hold it after the
            // continuation has resumed (`withoutActuallyEscaping` traps on exactly that).
            return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
                queue.async { continuation.resume(returning: body()) }
            }
        }
    }
}
