import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Watches whether the network is reachable and tells whoever asked: an `AsyncSequence`
/// (``updates``) and an observer API (``observe(_:)``).
///
/// On Linux (and everywhere) the status is **derived from polling** a ``ReachabilitySource``,
/// by default the system's network interfaces via `getifaddrs` (``NetworkInterfacesSource``),
/// every ``interval``, **combined with probe failures**: when ``probeFailureThreshold`` calls
/// in a row fail to connect (`.cannotConnect`, `.dnsFailure`), the status is unreachable until
/// a call gets a response or the next poll. API managers whose registry has a monitor report
/// their calls to it, with their service's host and port, and fail fast with `.noNetwork`
/// (``shouldFailFast(host:)``) while the source says unreachable, or while *their own host:port*
/// refused its last ``probeFailureThreshold`` connections — for one ``interval`` after the last
/// refusal, then a call goes through to find out. One dead service never blocks the others, and
/// a service on this machine (`127.0.0.1`, `::1`, `localhost`) is called without a network.
/// ```swift
/// let monitor = ReachabilityMonitor()
/// monitor.start()
/// for await status in monitor.updates { banner.isHidden = status != .unreachable }
/// ```
public final class ReachabilityMonitor: Sendable {
    /// How often the source is polled: at least ``minimumInterval``.
    public let interval: Duration
    /// The shortest polling interval: a shorter one (zero, or below) is taken as this, so a
    /// mistaken interval never makes the poller spin.
    public static let minimumInterval: Duration = .milliseconds(10)
    /// Consecutive connection failures that make the status unreachable.
    public let probeFailureThreshold: Int
    private let source: any ReachabilitySource
    /// The time host failures are stamped and aged with (tests move it by hand).
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = Locked(State())

    private struct State {
        var sourceStatus = ReachabilityStatus.unknown
        var consecutiveProbeFailures = 0
        var published = ReachabilityStatus.unknown
        /// The last status handed to streams and observers (``published`` once `undelivered` is empty).
        var delivered = ReachabilityStatus.unknown
        /// Changes published but not yet handed over, oldest first.
        var undelivered: [ReachabilityStatus] = []
        /// Whether a task is handing changes over (it takes the ones published meanwhile too).
        var delivering = false
        var nextToken = 0
        var streams: [Int: AsyncStream<ReachabilityStatus>.Continuation] = [:]
        var observers: [Int: @Sendable (ReachabilityStatus) -> Void] = [:]
        var poller: Task<Void, Never>?
        /// Consecutive connection failures per host, and when the last one was.
        var hosts: [String: (count: Int, last: ContinuousClock.Instant)] = [:]
    }

    /// The most hosts whose failures are remembered (a bound, not a working limit).
    private static let maxHosts = 256

    /// Creates a monitor; call ``start()`` to poll, or ``refresh()`` to poll once.
    public convenience init(source: any ReachabilitySource = .interfaces, interval: Duration = .seconds(2), probeFailureThreshold: Int = 3)
    {
        self.init(source: source, interval: interval, probeFailureThreshold: probeFailureThreshold, now: { ContinuousClock.now })
    }

    /// A monitor whose host failures are timed by `now` instead of the continuous clock.
    init(
        source: any ReachabilitySource, interval: Duration, probeFailureThreshold: Int,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.source = source
        self.interval = max(interval, Self.minimumInterval)
        self.probeFailureThreshold = max(1, probeFailureThreshold)
        self.now = now
    }

    deinit {
        let (poller, streams) = state.withLock { ($0.poller, $0.streams.values) }
        poller?.cancel()
        for continuation in streams { continuation.finish() }
    }

    /// The status now.
    public var status: ReachabilityStatus { state.withLock { $0.published } }

    /// Starts polling (idempotent). Polling stops with ``stop()`` or when the monitor is released.
    public func start() {
        state.withLock { state in
            guard state.poller == nil else { return }
            let interval = self.interval
            state.poller = Task { [weak self] in
                while !Task.isCancelled {
                    guard let monitor = self else { return }
                    monitor.poll()
                    try? await Task.sleep(for: min(interval, .longestSleep))
                }
            }
        }
    }

    /// Stops polling.
    public func stop() {
        let poller = state.withLock { state -> Task<Void, Never>? in
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    /// Polls the source once now and publishes a change.
    public func refresh() { poll() }

    private func poll() {
        let sourceStatus = source.currentStatus()
        update { state in
            state.sourceStatus = sourceStatus
            state.consecutiveProbeFailures = 0
        }
    }

    /// Records how a call to `host` (`host:port`) ended, as managers and
    /// `ServiceRegistry.send` do: a response is a success; a connection to it that could not be
    /// made (`.cannotConnect` or `.dnsFailure` with `neverSent`) a failure. The same codes without
    /// `neverSent` come from where a redirect led, after `host` answered: a success of `host`'s.
    func recordCall(failure: RunwayError?, host: String) {
        guard let failure else { return recordProbe(succeeded: true, host: host) }
        guard failure.code == .cannotConnect || failure.code == .dnsFailure else { return }
        recordProbe(succeeded: !failure.neverSent, host: host)
    }

    /// Records a call's outcome: `false` for a connection that could not be made, `true` for
    /// any response; `host` is where it went (managers pass `host:port`). Managers do this for you.
    public func recordProbe(succeeded: Bool, host: String? = nil) {
        let now = self.now()
        update { state in
            if succeeded {
                state.consecutiveProbeFailures = 0
            } else {
                state.consecutiveProbeFailures += 1
            }
            guard let host else { return }
            if succeeded {
                state.hosts[host] = nil
            } else {
                if state.hosts[host] == nil, state.hosts.count >= Self.maxHosts { state.hosts.removeAll() }
                state.hosts[host, default: (0, now)].count += 1
                state.hosts[host]?.last = now
            }
        }
    }

    /// Whether a call to `host` should fail at once with `.noNetwork`: the source says the
    /// network is unreachable, or `host` refused its last ``probeFailureThreshold`` connections
    /// less than ``interval`` ago (after that, calls go through again to find out, with or
    /// without polling). A host on this machine (`localhost` and names under it, `127.0.0.0/8`,
    /// `::1`) needs no network: only its own refusals fail it fast.
    /// - Parameter host: `host:port` (or a bare host), as the registry names a service's endpoint.
    public func shouldFailFast(host: String?) -> Bool {
        let (unreachable, refused) = state.withLock { state in
            guard let host, let failures = state.hosts[host], failures.count >= probeFailureThreshold else {
                return (state.sourceStatus == .unreachable, false)
            }
            return (state.sourceStatus == .unreachable, now() - failures.last < interval)
        }
        // Read only while the network is down: every call of a registry with a monitor asks.
        return refused || (unreachable && !(host.map(Self.isLoopback) ?? false))
    }

    /// Whether `endpoint` (`host:port`, or a bare host; an IPv6 address with or without
    /// brackets) names this machine.
    static func isLoopback(_ endpoint: String) -> Bool {
        let text = Substring(endpoint.lowercased())
        if isLoopbackHost(text) { return true }
        // Without its port: what follows the last colon, when that is all digits.
        guard let colon = text.lastIndex(of: ":"), !text[text.index(after: colon)...].isEmpty,
            text[text.index(after: colon)...].allSatisfy({ $0 >= "0" && $0 <= "9" })
        else { return false }
        return isLoopbackHost(text[..<colon])
    }

    /// Whether `host` (lowercased) is `localhost` or a name under it (RFC 6761), an address of
    /// `127.0.0.0/8` (also IPv4-mapped), or `::1`.
    private static func isLoopbackHost(_ host: Substring) -> Bool {
        var host = host
        if host.first == "[", host.last == "]" { host = host.dropFirst().dropLast() }
        if host.last == "." { host = host.dropLast() }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        if host.hasPrefix("::ffff:") { host = host.dropFirst(7) }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { octet in
                (1...3).contains(octet.count) && octet.allSatisfy { $0 >= "0" && $0 <= "9" } && Int(octet)! <= 255
            }
    }

    /// Applies `change` and publishes the status it leads to. Changes are handed to streams and
    /// observers in the order they were published, one task at a time and outside the lock: a
    /// change published while another task hands one over is handed over by that task, after
    /// it (two threads each handing over their own could do so in the wrong order, leaving
    /// observers with a status the monitor no longer has).
    private func update(_ change: (inout State) -> Void) {
        let delivers = state.withLock { state -> Bool in
            change(&state)
            let status: ReachabilityStatus =
                state.consecutiveProbeFailures >= probeFailureThreshold ? .unreachable : state.sourceStatus
            guard status != state.published else { return false }
            state.published = status
            state.undelivered.append(status)
            guard !state.delivering else { return false }
            state.delivering = true
            return true
        }
        guard delivers else { return }
        while let (status, streams, observers) = nextDelivery() {
            for stream in streams { stream.yield(status) }
            for observer in observers { observer(status) }
        }
    }

    /// The oldest change not handed over yet and who to hand it to, or `nil` (and no task
    /// delivering any more) when there is none.
    private func nextDelivery()
        -> (ReachabilityStatus, [AsyncStream<ReachabilityStatus>.Continuation], [@Sendable (ReachabilityStatus) -> Void])?
    {
        state.withLock { state in
            guard !state.undelivered.isEmpty else {
                state.delivering = false
                return nil
            }
            let status = state.undelivered.removeFirst()
            state.delivered = status
            return (status, Array(state.streams.values), Array(state.observers.values))
        }
    }

    /// Every status change, in the order they happened, starting with the current status; one
    /// stream per access.
    public var updates: AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReachabilityStatus.self, bufferingPolicy: .bufferingNewest(16))
        let token = state.withLock { state -> Int in
            state.nextToken += 1
            state.streams[state.nextToken] = continuation
            // The changes not handed over yet come to this stream after it.
            continuation.yield(state.delivered)
            return state.nextToken
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: token) }
        }
        return stream
    }

    /// Calls `observer` with every status change, in the order they happened, until the
    /// returned observation is cancelled or released. It runs on the task that noticed the
    /// change, or, when changes come at once, on the task handing over the one before it; an
    /// observer may call the monitor (its own change is then handed over after it returns).
    public func observe(_ observer: @escaping @Sendable (ReachabilityStatus) -> Void) -> ReachabilityObservation {
        let token = state.withLock { state -> Int in
            state.nextToken += 1
            state.observers[state.nextToken] = observer
            return state.nextToken
        }
        return ReachabilityObservation { [weak self] in
            self?.state.withLock { _ = $0.observers.removeValue(forKey: token) }
        }
    }
}

/// Keeps an observer of a ``ReachabilityMonitor`` registered; cancel it or let it go to stop.
public final class ReachabilityObservation: Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = Locked(false)

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    deinit { cancel() }

    /// Stops the observer; idempotent.
    public func cancel() {
        let first = cancelled.withLock { cancelled -> Bool in
            defer { cancelled = true }
            return !cancelled
        }
        if first { onCancel() }
    }
}
