import Foundation
import ListingInterface
import RunwayMediator

// MARK: - The action-log seam
//
// User actions (screens opened, filters changed) leave the app through `UserActionLog`, and
// only here. `UserActionRecorder` (a route interceptor, first in the mediator's chain) records
// them for every URL the user opens; the tour's last step flushes.
//
// NOT WIRED YET: the action logger (`RunwayActionLog`, built on branch `outbox`) has not landed
// on `main`. `PendingActionLog` stands in for it: it counts what would be recorded and uploads
// nothing. When the logger lands, register it here at start-up (its upload goes to
// `ActionLogService`, `POST actions/batch`, which the sample server already serves) and make
// `flush()` report what was uploaded.

/// Where the app's user actions go.
protocol UserActionLog: Sendable {
    /// Whether actions are really uploaded (`false` while the action logger is not wired).
    var isWired: Bool { get }
    /// Records one action.
    func record(_ name: String, attributes: [String: String]) async
    /// Uploads what is pending; returns lines describing what happened.
    func flush() async -> [String]
}

/// Stands in for the action logger until it lands: keeps the actions in memory, uploads nothing.
final class PendingActionLog: UserActionLog {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var names: [String] = []

    var isWired: Bool { false }

    func record(_ name: String, attributes: [String: String]) async {
        lock.withLock { names.append(name) }
    }

    func flush() async -> [String] {
        let recorded = lock.withLock { names }
        let counts = Dictionary(grouping: recorded, by: { $0 }).mapValues(\.count).sorted { $0.key < $1.key }
        return [
            "not wired yet: the action logger (RunwayActionLog) has not landed, so nothing was uploaded",
            "recorded in this run: \(recorded.count) actions (" + counts.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")",
        ]
    }
}

/// Records what the user does: every URL opened is `screen.opened`, and a filter URL is also
/// `filter.changed` with the filter's values. First in the mediator's chain, so it records what
/// the user asked for, before the login gate redirects anything.
struct UserActionRecorder: RouteInterceptor {
    let log: any UserActionLog

    var name: String { "user-actions" }

    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        if call.origin == .remote {
            var attributes = ["screen": "\(call.target)/\(call.action)"]
            if let url = call.url { attributes["url"] = url }
            await log.record("screen.opened", attributes: attributes)
            if call.target == ListingRoutes.target, call.action == ListingRoutes.filter {
                var filter: [String: String] = [:]
                for key in call.parameters.keys { filter[key] = try? call.parameters.string(key) }
                await log.record("filter.changed", attributes: filter)
            }
        }
        return try await next(call)
    }
}
