#if Metrics  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway
import RunwaySync

#if Metrics  // the package trait that brings this dependency (TraitCheck.swift)
import CoreMetrics
#endif

/// Counts and times every call with swift-metrics, per service, API and outcome, and records
/// the transfer's phases (DNS, connect, TLS, first byte, total) from `Response.metrics`.
///
/// Metrics (with the default prefix `runway`):
/// - `runway_requests_total` — counter; dimensions `service`, `api`, `method`, `outcome`, `origin`.
/// - `runway_request_duration` — timer (nanoseconds), the whole call as seen from this
///   interceptor (cache hits and retries included); dimensions `service`, `api`, `outcome`.
/// - `runway_transfer_phase` — timer (nanoseconds) per phase of a transfer; dimensions
///   `service`, `api`, `phase` (`dns`, `connect`, `tls`, `first_byte`, `total`). Phases a
///   transfer skipped (no DNS for an IP, no TLS for `http`, a reused connection) are not recorded,
///   and a cache hit (no transfer) records none.
/// - `runway_retries_total` — counter, one per attempt a `RetryInterceptor` further down makes
///   again; dimensions `service`, `api`, `cause` (the status, or the error code, of the attempt
///   before). Counted through `RetryInterceptor.Observers` in the context: no wiring.
/// - `runway_redirects_total` — counter, one per redirect a `RedirectInterceptor` further down
///   follows; dimensions `service`, `api`, `status` (`301`, `302`, `303`, `307`, `308`).
///   Counted through `RedirectInterceptor.Observers`, likewise.
///
/// `outcome` is `success` (2xx/3xx), `client_error` (4xx), `server_error` (5xx), or the
/// `RunwayError.Code` of a thrown error (`timeout`, `paramsInvalid`, ...). `origin` is the
/// `ResponseOrigin` (`network`, `memory-cache`, `disk-cache`) or `none` for errors. A streamed
/// call (`Response.bodyStream`) is counted and timed when its body ends, its `outcome` the code
/// of the body's failure if it failed (`connectionLost`, `cancelled`, ...).
///
/// ## Position
/// First in the chain, so it sees every call once, whatever later interceptors do: cache hits,
/// validation failures, and the total time of all retries.
/// ```swift
/// let metrics = try MetricsInterceptor.metrics()
/// let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
///     metrics
///     // validation, cache, ...
/// }
/// ```
public struct MetricsInterceptor: Interceptor {
    /// The label prefix.
    public let prefix: String

    /// Creates the interceptor.
    /// - Parameters:
    ///   - prefix: Starts every label; letters, digits and `_`, starting with a letter.
    ///   - factory: Where metrics go; `nil` uses the process-wide `MetricsSystem` (bootstrap it
    ///     once at start-up, before the first call: each metric is made at its first use and
    ///     kept).
    /// - Throws: `RunwayError` `.configuration` for an invalid prefix.
    public init(prefix: String = "runway", factory: (any MetricsFactory)? = nil) throws(RunwayError) {
        guard let first = prefix.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII,
            prefix.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else {
            throw RunwayError(.configuration, "metrics prefix \"\(prefix)\" must be letters, digits and _, starting with a letter")
        }
        self.prefix = prefix
        let handles = Handles(labels: Labels(prefix: prefix), factory: factory)
        self.handles = handles
        retryObserver = [
            { event in
                let cause = event.status.map(String.init) ?? event.error.map { "\($0.code)" } ?? "unknown"
                handles.retries(event.context.serviceID?.rawValue ?? "", event.context.apiLabel ?? "", cause: cause).increment()
            }
        ]
        redirectObserver = [
            { event in
                handles.redirects(event.context.serviceID?.rawValue ?? "", event.context.apiLabel ?? "", status: event.status).increment()
            }
        ]
    }

    /// The metric names, made once: a call records several metrics.
    fileprivate struct Labels: Sendable {
        let requests: String
        let duration: String
        let retries: String
        let redirects: String
        let phase: String

        init(prefix: String) {
            requests = prefix + "_requests_total"
            duration = prefix + "_request_duration"
            retries = prefix + "_retries_total"
            redirects = prefix + "_redirects_total"
            phase = prefix + "_transfer_phase"
        }
    }

    private let handles: Handles
    /// The retry observer every call carries, made once: the event's context names the call.
    private let retryObserver: RetryInterceptor.Observers.Value
    /// The redirect observer every call carries, made once.
    private let redirectObserver: RedirectInterceptor.Observers.Value

    public var name: String { "metrics" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        var context = context
        if let others = context[RetryInterceptor.Observers.self] {
            context[RetryInterceptor.Observers.self] = others + retryObserver
        } else {
            context[RetryInterceptor.Observers.self] = retryObserver
        }
        if let others = context[RedirectInterceptor.Observers.self] {
            context[RedirectInterceptor.Observers.self] = others + redirectObserver
        } else {
            context[RedirectInterceptor.Observers.self] = redirectObserver
        }
        let service = context.serviceID?.rawValue ?? ""
        let api = context.apiLabel ?? ""
        do {
            var response = try await next(request, context)
            let call = Call(
                service: service, api: api, method: request.method.rawValue, status: response.status, origin: response.origin.name,
                transfer: response.metrics)
            guard let stream = response.bodyStream else {
                handles.record(call, bodyFailure: nil, elapsed: clock.now - start)
                return response
            }
            // A streamed call ends with its body, which may still fail: counted then, by how it
            // ended. The observer keeps the call's facts, not the response: holding the stream, it
            // would keep a stream dropped unread from aborting its transfer.
            let handles = self.handles
            response.bodyStream = stream.observingEnd { end in
                handles.record(call, bodyFailure: end.error, elapsed: clock.now - start)
            }
            return response
        } catch {
            let code = (error as? RunwayError)?.code.description ?? (error is CancellationError ? "cancelled" : "interceptorFailed")
            let elapsed = clock.now - start
            let key = Handles.CallKey(service: service, api: api, method: request.method.rawValue, outcome: code, origin: "none")
            let (call, _) = handles.call(key, phases: 0)
            call.requests.increment()
            call.duration.recordNanoseconds(Self.nanoseconds(elapsed))
            throw error
        }
    }

    /// What is counted of a call that got a response.
    fileprivate struct Call: Sendable {
        let service: String
        let api: String
        let method: String
        let status: Int
        let origin: String
        let transfer: TransferMetrics
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}

/// The counters and timers of one interceptor, made once per label and dimensions and reused
/// (as swift-metrics recommends: a backend looks a metric up, or registers it, when it is made).
/// A call finds its own in one lookup under one lock.
private final class Handles: Sendable {
    /// The dimensions of a call's request counter and duration timer.
    struct CallKey: Hashable, Sendable {
        let service: String
        let api: String
        let method: String
        let outcome: String
        let origin: String
    }

    struct CallHandles: Sendable {
        let requests: Counter
        let duration: CoreMetrics.Timer
    }

    /// The dimensions shared by an API's phase timers.
    struct APIKey: Hashable, Sendable {
        let service: String
        let api: String
    }

    /// A phase of a transfer, `runway_transfer_phase`'s `phase` dimension.
    enum Phase: Int, CaseIterable, Sendable {
        case dns, connect, tls, firstByte, total

        var name: String {
            switch self {
            case .dns: "dns"
            case .connect: "connect"
            case .tls: "tls"
            case .firstByte: "first_byte"
            case .total: "total"
            }
        }

        func duration(in metrics: TransferMetrics) -> Duration {
            switch self {
            case .dns: metrics.nameLookup
            case .connect: metrics.connect
            case .tls: metrics.tlsHandshake
            case .firstByte: metrics.firstByte
            case .total: metrics.total
            }
        }

        /// The phases a transfer went through (a phase it skipped is zero), one bit each.
        static func taken(by metrics: TransferMetrics) -> UInt8 {
            allCases.reduce(0) { $0 | ($1.duration(in: metrics) > .zero ? 1 << $1.rawValue : 0) }
        }
    }

    struct State {
        var calls: [CallKey: CallHandles] = [:]
        /// An API's phase timers by `Phase.rawValue`, each made when a transfer first goes
        /// through that phase (a timer made is a metric a backend shows).
        var phases: [APIKey: [CoreMetrics.Timer?]] = [:]
    }

    /// Past this many entries, handles are made per call and not kept: dimensions come from API
    /// names, methods and outcomes, a small set, unless something sends unbounded names.
    static let limit = 4096

    /// No phase timers: what a call whose transfer had no phases gets, one entry per phase, so
    /// a caller may index it by any `Phase.rawValue`.
    static let noTimers = [CoreMetrics.Timer?](repeating: nil, count: Phase.allCases.count)

    private let labels: MetricsInterceptor.Labels
    private let factory: (any MetricsFactory)?
    private let state = Locked(State())

    init(labels: MetricsInterceptor.Labels, factory: (any MetricsFactory)?) {
        self.labels = labels
        self.factory = factory
    }

    /// The request counter and duration timer of `key`, and its API's phase timers by
    /// `Phase.rawValue` (always one entry per phase), those of the `phases` bits
    /// (``Phase/taken(by:)``) made.
    func call(_ key: CallKey, phases: UInt8) -> (CallHandles, [CoreMetrics.Timer?]) {
        let api = APIKey(service: key.service, api: key.api)
        let found = state.withLock { ($0.calls[key], phases == 0 ? nil : $0.phases[api]) }
        if let handles = found.0, Self.has(found.1, phases) { return (handles, found.1 ?? Self.noTimers) }
        // Made outside the lock: a backend may take locks of its own.
        let handles =
            found.0
            ?? CallHandles(
                requests: counter(
                    labels.requests,
                    [("service", key.service), ("api", key.api), ("method", key.method), ("outcome", key.outcome), ("origin", key.origin)]),
                duration: timer(labels.duration, [("service", key.service), ("api", key.api), ("outcome", key.outcome)]))
        var timers = found.1 ?? Self.noTimers
        for phase in Phase.allCases where phases & (1 << phase.rawValue) != 0 && timers[phase.rawValue] == nil {
            timers[phase.rawValue] = timer(labels.phase, [("service", key.service), ("api", key.api), ("phase", phase.name)])
        }
        return state.withLock { state in
            let kept = state.calls[key] ?? handles
            if state.calls.count < Self.limit { state.calls[key] = kept }
            guard phases != 0 else { return (kept, Self.noTimers) }
            var keptTimers = state.phases[api] ?? timers
            for index in keptTimers.indices where keptTimers[index] == nil { keptTimers[index] = timers[index] }
            if state.phases.count < Self.limit { state.phases[api] = keptTimers }
            return (kept, keptTimers)
        }
    }

    /// Whether `timers` has one for each phase of `phases`.
    private static func has(_ timers: [CoreMetrics.Timer?]?, _ phases: UInt8) -> Bool {
        guard phases != 0 else { return true }
        guard let timers else { return false }
        return Phase.allCases.allSatisfy { phases & (1 << $0.rawValue) == 0 || timers[$0.rawValue] != nil }
    }

    /// The retry counter of one retry: made for each (retries are rare).
    func retries(_ service: String, _ api: String, cause: String) -> Counter {
        counter(labels.retries, [("service", service), ("api", api), ("cause", cause)])
    }

    /// The redirect counter of one redirect: made for each (redirects are few).
    func redirects(_ service: String, _ api: String, status: Int) -> Counter {
        counter(labels.redirects, [("service", service), ("api", api), ("status", String(status))])
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        if let factory { return Counter(label: label, dimensions: dimensions, factory: factory) }
        return Counter(label: label, dimensions: dimensions)
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        if let factory { return CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory) }
        return CoreMetrics.Timer(label: label, dimensions: dimensions)
    }
}

extension Interceptor where Self == MetricsInterceptor {
    /// Records swift-metrics counters and timers for every call; see ``MetricsInterceptor``.
    /// - Throws: `RunwayError` `.configuration` for an invalid prefix.
    public static func metrics(prefix: String = "runway", factory: (any MetricsFactory)? = nil) throws(RunwayError) -> MetricsInterceptor {
        try MetricsInterceptor(prefix: prefix, factory: factory)
    }
}

extension Handles {
    /// Counts and times a call that got a response; `bodyFailure` is how its streamed body failed,
    /// if it did (the status says the outcome otherwise).
    func record(_ call: MetricsInterceptor.Call, bodyFailure: RunwayError?, elapsed: Duration) {
        let outcome: String
        if let bodyFailure {
            outcome = bodyFailure.code.description
        } else {
            switch call.status {
            case 500...: outcome = "server_error"
            case 400..<500: outcome = "client_error"
            default: outcome = "success"
            }
        }
        let key = CallKey(service: call.service, api: call.api, method: call.method, outcome: outcome, origin: call.origin)
        let (handles, phases) = self.call(key, phases: Phase.taken(by: call.transfer))
        handles.requests.increment()
        handles.duration.recordNanoseconds(MetricsInterceptor.nanoseconds(elapsed))
        for phase in Phase.allCases {
            let duration = phase.duration(in: call.transfer)
            if duration > .zero { phases[phase.rawValue]?.recordNanoseconds(MetricsInterceptor.nanoseconds(duration)) }
        }
    }
}

#endif
