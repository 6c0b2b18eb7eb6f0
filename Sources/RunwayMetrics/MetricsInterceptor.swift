import Runway

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
///
/// `outcome` is `success` (2xx/3xx), `client_error` (4xx), `server_error` (5xx), or the
/// `RunwayError.Code` of a thrown error (`timeout`, `paramsInvalid`, ...). `origin` is the
/// `ResponseOrigin` (`network`, `memory-cache`, `disk-cache`) or `none` for errors.
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
    private let factory: (any MetricsFactory)?

    /// Creates the interceptor.
    /// - Parameters:
    ///   - prefix: Starts every label; letters, digits and `_`, starting with a letter.
    ///   - factory: Where metrics go; `nil` uses the process-wide `MetricsSystem` (bootstrap it
    ///     once at start-up).
    /// - Throws: `RunwayError` `.configuration` for an invalid prefix.
    public init(prefix: String = "runway", factory: (any MetricsFactory)? = nil) throws(RunwayError) {
        guard let first = prefix.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII,
            prefix.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else {
            throw RunwayError(.configuration, "metrics prefix \"\(prefix)\" must be letters, digits and _, starting with a letter")
        }
        self.prefix = prefix
        self.factory = factory
        labels = Labels(prefix: prefix)
    }

    /// The metric names, made once: a call records several metrics.
    private struct Labels: Sendable {
        let requests: String
        let duration: String
        let retries: String
        let phase: String

        init(prefix: String) {
            requests = prefix + "_requests_total"
            duration = prefix + "_request_duration"
            retries = prefix + "_retries_total"
            phase = prefix + "_transfer_phase"
        }
    }

    private let labels: Labels

    public var name: String { "metrics" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let service = context.serviceID?.rawValue ?? ""
        let api = context.apiName ?? ""
        var context = context
        var observers = context[RetryInterceptor.Observers.self] ?? []
        observers.append { [self] event in
            let cause = event.status.map(String.init) ?? event.error.map { "\($0.code)" } ?? "unknown"
            counter(labels.retries, [("service", service), ("api", api), ("cause", cause)]).increment()
        }
        context[RetryInterceptor.Observers.self] = observers
        do {
            let response = try await next(request, context)
            let outcome =
                switch response.status {
                case 500...: "server_error"
                case 400..<500: "client_error"
                default: "success"
                }
            record(request, service: service, api: api, outcome: outcome, origin: response.origin.name, elapsed: clock.now - start)
            recordPhases(response.metrics, service: service, api: api)
            return response
        } catch {
            let code = (error as? RunwayError)?.code.description ?? (error is CancellationError ? "cancelled" : "interceptorFailed")
            record(request, service: service, api: api, outcome: code, origin: "none", elapsed: clock.now - start)
            throw error
        }
    }

    private func record(_ request: Request, service: String, api: String, outcome: String, origin: String, elapsed: Duration) {
        counter(
            labels.requests,
            [("service", service), ("api", api), ("method", request.method.rawValue), ("outcome", outcome), ("origin", origin)]
        ).increment()
        timer(labels.duration, [("service", service), ("api", api), ("outcome", outcome)])
            .recordNanoseconds(Self.nanoseconds(elapsed))
    }

    private func recordPhases(_ metrics: TransferMetrics, service: String, api: String) {
        func record(_ phase: String, _ duration: Duration) {
            guard duration > .zero else { return }
            timer(labels.phase, [("service", service), ("api", api), ("phase", phase)]).recordNanoseconds(Self.nanoseconds(duration))
        }
        record("dns", metrics.nameLookup)
        record("connect", metrics.connect)
        record("tls", metrics.tlsHandshake)
        record("first_byte", metrics.firstByte)
        record("total", metrics.total)
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        if let factory { return Counter(label: label, dimensions: dimensions, factory: factory) }
        return Counter(label: label, dimensions: dimensions)
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        if let factory { return CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory) }
        return CoreMetrics.Timer(label: label, dimensions: dimensions)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}

extension Interceptor where Self == MetricsInterceptor {
    /// Records swift-metrics counters and timers for every call; see ``MetricsInterceptor``.
    /// - Throws: `RunwayError` `.configuration` for an invalid prefix.
    public static func metrics(prefix: String = "runway", factory: (any MetricsFactory)? = nil) throws(RunwayError) -> MetricsInterceptor {
        try MetricsInterceptor(prefix: prefix, factory: factory)
    }
}
