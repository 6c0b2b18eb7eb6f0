import Foundation
import ListingInterface
import Runway
import RunwayActionLog
import RunwayMediator

/// The one seam where user actions leave the app: screens opened and filters changed go to the
/// ``ActionLogger`` (`RunwayActionLog`), which keeps them in an SQLite outbox and uploads them
/// 30 at a time to `POST actions/batch` of ``ActionLogService`` (through the app's chain: signed,
/// gzipped, retried), and at start-up uploads what the last run left behind.
///
/// The mediator (and its ``UserActionRecorder``) exists before the network does, so the logger
/// is attached at start-up, once the services are registered.
final class UserActions: Sendable {
    private struct State {
        var logger: ActionLogger?
        var recorded: [String: Int] = [:]
        var events: [ActionLogEvent] = []
    }

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    /// Opens the outbox at `file` and attaches the logger; uploads go to ``ActionLogService``
    /// through `registry`. Uploads what the last run left in the file.
    func start(file: URL, registry: ServiceRegistry, timeout: Duration) throws(RunwayError) {
        var configuration = ActionLogger.Configuration(file: file, serviceID: .actions)
        configuration.registry = registry
        configuration.requestOptions = RequestOptions(timeout: min(timeout, .seconds(10)))
        configuration.onEvent = { [weak self] event in self?.observe(event) }
        let logger = try ActionLogger(configuration)
        lock.withLock { state.logger = logger }
    }

    /// Records one action (nothing before ``start(file:registry:timeout:)``: no screen opens before it).
    func record(_ name: String, attributes: [String: String]) {
        let logger = lock.withLock {
            state.recorded[name, default: 0] += 1
            return state.logger
        }
        _ = logger?.record(name, attributes: attributes)
    }

    private func observe(_ event: ActionLogEvent) {
        lock.withLock { state.events.append(event) }
    }

    /// Uploads everything pending now; returns lines saying what was recorded and uploaded.
    func flush() async -> [String] {
        guard let logger = lock.withLock({ state.logger }) else { return ["the action logger is not running"] }
        var lines: [String] = []
        do {
            try await logger.flush()
        } catch {
            lines.append("flush failed: \(error.code): \(error.message) (the actions stay in the outbox for the next run)")
        }
        let (recorded, events) = lock.withLock { (state.recorded, state.events) }
        let total = recorded.values.reduce(0, +)
        let kinds = recorded.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        lines.insert("recorded this run: \(total) actions (\(kinds))", at: 0)
        let leftovers = events.filter { $0.kind == .leftoversFound }.reduce(0) { $0 + $1.count }
        if leftovers > 0 { lines.append("left by the last run: \(leftovers) action\(leftovers == 1 ? "" : "s"), uploaded first") }
        let uploads = events.filter { $0.kind == .uploaded }
        lines.append(
            "uploaded: \(uploads.reduce(0) { $0 + $1.count }) actions in \(uploads.count) batch\(uploads.count == 1 ? "" : "es")"
                + " (POST actions/batch, signed; pending now: \(logger.statistics.pending))")
        let failures = events.filter { $0.kind == .uploadFailed }
        if let last = failures.last {
            lines.append("failed uploads: \(failures.count) (last: \(last.error.map { "\($0.code): \($0.message)" } ?? "unknown"))")
        }
        return lines
    }

    /// Writes what is queued to the outbox and stops the logger (what was not uploaded goes
    /// with the next run).
    func shutdown() async {
        await lock.withLock({ state.logger })?.shutdown()
    }

    /// The outbox file: `--action-log`, else `$HOUSEHUNTER_ACTION_LOG`, else
    /// `$XDG_CACHE_HOME/househunter/actions.sqlite` (`~/.cache/...`).
    static func file(option: String?) -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = option ?? environment["HOUSEHUNTER_ACTION_LOG"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let cache =
            environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("househunter/actions.sqlite")
    }
}

/// Records what the user does: every URL opened is `screen.opened`, and a filter URL is also
/// `filter.changed` with the filter's values. First in the mediator's chain, so it records what
/// the user asked for, before the login gate redirects anything.
struct UserActionRecorder: RouteInterceptor {
    let actions: UserActions

    var name: String { "user-actions" }

    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        if call.origin == .remote {
            var attributes = ["screen": "\(call.target)/\(call.action)"]
            if let url = call.url { attributes["url"] = Self.redacted(url) }
            actions.record("screen.opened", attributes: attributes)
            if call.target == ListingRoutes.target, call.action == ListingRoutes.filter {
                var filter: [String: String] = [:]
                for key in call.parameters.keys { filter[key] = try? call.parameters.string(key) }
                actions.record("filter.changed", attributes: filter)
            }
        }
        return try await next(call)
    }

    /// Query parameters whose values never leave the device in the action log, whatever a user
    /// pastes into a link.
    static let secretParameters = ["password", "passwd", "token", "secret", "code"]

    /// `url` with the value of every query parameter whose name contains one of
    /// ``secretParameters`` replaced by `<redacted>`.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), let items = components.queryItems, !items.isEmpty else { return url }
        components.queryItems = items.map { item in
            let name = item.name.lowercased()
            guard secretParameters.contains(where: { name.contains($0) }) else { return item }
            return URLQueryItem(name: item.name, value: "<redacted>")
        }
        return components.string ?? url
    }
}
