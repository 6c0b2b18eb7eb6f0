#if Tracing  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Tracing  // the package trait that brings this dependency (TraitCheck.swift)
import Tracing
#endif

/// Wraps every call in a swift-distributed-tracing span, and propagates the trace to the
/// server in the request headers (`traceparent` with a W3C tracer). The fields the tracer writes
/// replace the request's own; an app's `tracestate` goes with the `traceparent` the tracer
/// replaces unless the tracer writes one too (W3C Trace Context: it describes its own trace).
///
/// The span is named `"<METHOD> <api name>"`, or `"<METHOD>"` alone when the call has no API
/// name: a span name must be low-cardinality (OpenTelemetry's HTTP conventions forbid the URL
/// path there), and a path carries IDs (`/users/12345`), so it goes in `url.full` only. The span
/// is of kind `client`, with OpenTelemetry attributes: `http.request.method`, `url.full` (as
/// sent, without credentials, path segments' `;name=value` parameters, query and fragment,
/// which may carry secrets), `server.address`, `server.port`, `http.response.status_code`,
/// `network.protocol.version`, plus `runway.api`, `runway.service`, `runway.call_id` and
/// `runway.origin` (`memory-cache` for a cache hit). A thrown error is recorded and sets the
/// span's status to error; so does a 5xx status. The span of a streamed call
/// (`Response.bodyStream`) ends when its body does, with the body's failure recorded if it failed.
///
/// ## Position
/// First in the chain (before metrics is fine too), so the span covers cache hits, validation
/// failures and every retry; spans of later interceptors nest inside it.
public struct TracingInterceptor: Interceptor {
    private let tracer: (any Tracer)?
    /// Whether the span context is injected into the request headers.
    public let propagatesContext: Bool

    /// Creates the interceptor.
    /// - Parameters:
    ///   - tracer: The tracer; `nil` uses the process-wide `InstrumentationSystem.tracer`.
    ///   - propagatesContext: Inject the span context into the outgoing headers.
    public init(tracer: (any Tracer)? = nil, propagatesContext: Bool = true) {
        self.tracer = tracer
        self.propagatesContext = propagatesContext
    }

    public var name: String { "tracing" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let url = request.url
        let spanName = context.apiLabel.map { "\(request.method.rawValue) \($0)" } ?? request.method.rawValue
        let span = tracer.startSpan(spanName, context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
        // Attributes only for a span that records them: with no tracing backend (the no-op
        // tracer) a call builds none of them.
        let recording = span.isRecording
        if recording {
            span.attributes["http.request.method"] = request.method.rawValue
            span.attributes["url.full"] = Self.fullURL(url)
            span.attributes["server.address"] = url.host ?? ""
            // Always set for a client span (OpenTelemetry): the scheme's default when the URL names none.
            if let port = url.port ?? Self.defaultPort(of: url) { span.attributes["server.port"] = port }
            if let api = context.apiLabel { span.attributes["runway.api"] = api }
            if let service = context.serviceID { span.attributes["runway.service"] = service.rawValue }
            span.attributes["runway.call_id"] = Int64(truncatingIfNeeded: context.callID)
        }

        var request = request
        if propagatesContext {
            var carrier = PropagatedHeaders(headers: request.headers)
            tracer.inject(span.context, into: &carrier, using: HeadersInjector())
            request.headers = carrier.headers
            // A `tracestate` belongs to the `traceparent` it came with (W3C Trace Context): one
            // the app set goes when the tracer replaces its `traceparent` and sends none.
            if carrier.wrote.traceparent, !carrier.wrote.tracestate { request.headers.removeAll(named: "tracestate") }
        }
        do {
            var response = try await InstrumentationContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            if recording {
                span.attributes["http.response.status_code"] = response.status
                span.attributes["runway.origin"] = response.origin.name
                if !response.metrics.httpVersion.isEmpty {
                    span.attributes["network.protocol.version"] = response.metrics.httpVersion
                }
            }
            if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            guard let stream = response.bodyStream else {
                span.end()
                return response
            }
            // A streamed call ends with its body, which may still fail: the span ends then.
            response.bodyStream = stream.observingEnd { end in
                if let error = end.error {
                    span.recordError(error)
                    span.setStatus(SpanStatus(code: .error, message: error.code.description))
                }
                span.end()
            }
            return response
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: (error as? RunwayError)?.code.description))
            span.end()
            throw error
        }
    }

    /// The port a URL without one goes to: 443 for `https`, 80 for `http`.
    static func defaultPort(of url: URL) -> Int? {
        switch url.scheme?.lowercased() {
        case "https": 443
        case "http": 80
        default: nil
        }
    }

    /// `url.full`: the URL as sent (path percent-encoded, an IPv6 host in brackets), without
    /// credentials, the `;name=value` parameters of its path segments (`;jsessionid=`), query and
    /// fragment, which may carry secrets (as error messages leave them out).
    static func fullURL(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        let path = components.percentEncodedPath
        if path.contains(";") {
            components.percentEncodedPath = path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.prefix { $0 != ";" } }.joined(separator: "/")
        }
        return components.string ?? ""
    }
}

/// Request headers as the tracer writes its context into them, noting which W3C fields it wrote.
struct PropagatedHeaders {
    var headers: HTTPHeaders
    var wrote = (traceparent: false, tracestate: false)
}

/// Writes trace context into request headers, each field replacing the request's own.
struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout PropagatedHeaders) {
        carrier.headers[key] = value
        if key.caseInsensitiveEquals("traceparent") { carrier.wrote.traceparent = true }
        if key.caseInsensitiveEquals("tracestate") { carrier.wrote.tracestate = true }
    }
}

extension Interceptor where Self == TracingInterceptor {
    /// Wraps every call in a span; see ``TracingInterceptor``.
    public static func tracing(_ tracer: (any Tracer)? = nil, propagatesContext: Bool = true) -> TracingInterceptor {
        TracingInterceptor(tracer: tracer, propagatesContext: propagatesContext)
    }
}

#endif
