#if Logging  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Logging  // the package trait that brings this dependency (TraitCheck.swift)
import Logging
#endif

/// Logs every call through swift-log, observing only: it never changes a request or a response.
///
/// ```swift
/// let pipeline = Pipeline(
///     interceptors: [.logging(logger, redacting: try .standard(parameters: ["id_card"]))],
///     dispatcher: CurlDispatcher())
/// ```
/// For each call it logs
/// - at ``Configuration/dumpLevel`` (debug): the request as a `curl` command line, then the
///   response's status line, headers and body (bodies cut at ``Configuration/bodyLimit``);
/// - at ``Configuration/summaryLevel`` (info): one line — method, URL, status, wall time,
///   where the response came from (`network`, `memory-cache`, ...) and the transfer timings;
/// - at ``Configuration/failureLevel`` (warning): the error code, stage and message;
/// - for a streamed body (`Request.streamsResponseBody`): the head when it arrives (the dump
///   shows `<body streamed>`, the summary `[body streamed]`), and one more line when the reader
///   is done with the body: its byte count, at the summary level, or the error that ended it
///   early (a cut connection, the reader cancelling) at the failure level. It never reads the
///   body itself;
/// - at ``Configuration/summaryLevel``: each attempt a `RetryInterceptor` further down makes
///   again, with the status or error of the one before and the delay (through
///   `RetryInterceptor.Observers` in the context: no wiring), and each redirect a
///   `RedirectInterceptor` follows, with its status and where it leads (`RedirectInterceptor.Observers`).
///
/// Secrets never reach the log (`Redaction`), and what a request or a response holds cannot
/// forge a line of it: control characters in the dumps (header names and values, bodies) and
/// in failure messages are written as escapes (`\r`, `\n`, `\u{1B}`; in the `curl` line, bash's
/// `$'…'` quoting, so the command still sends the same bytes). **Nothing is logged unless a
/// `Logger` is handed over**, at construction or per call in the context
/// (`context[LoggingInterceptor.Key.self]`, which wins); without one the interceptor only forwards.
///
/// ## Where it belongs
/// Near the front, after tracing and metrics (see `DefaultOrder`): before the cache, so cache
/// hits are logged, and
/// outside retry, so a call is one entry with its final outcome, preceded by a line for each
/// retry. The dump therefore shows the request as the application
/// built it — before signing and compression — which is also what a person wants to read.
public struct LoggingInterceptor: Interceptor {
    /// Levels, body size and redaction.
    public struct Configuration: Sendable {
        /// The level of the one-line summary of each call.
        public var summaryLevel: Logger.Level
        /// The level of the request and response dumps.
        public var dumpLevel: Logger.Level
        /// The level of failures.
        public var failureLevel: Logger.Level
        /// The most body bytes shown in a dump; 0 (or less) shows only sizes. A body over 64 KiB
        /// is read only as far as that needs, rather than parsed whole (JSON is then shown in its
        /// own spacing and member order).
        public var bodyLimit: Int
        /// What is hidden.
        public var redaction: Redaction

        /// Creates a configuration.
        public init(
            summaryLevel: Logger.Level = .info, dumpLevel: Logger.Level = .debug, failureLevel: Logger.Level = .warning,
            bodyLimit: Int = 4096, redaction: Redaction = .standard
        ) {
            self.summaryLevel = summaryLevel
            self.dumpLevel = dumpLevel
            self.failureLevel = failureLevel
            self.bodyLimit = bodyLimit
            self.redaction = redaction
        }
    }

    /// A per-call logger in the `RequestContext`; it replaces the interceptor's own.
    public enum Key: ContextKey {
        public typealias Value = Logger
    }

    /// The logger used when the context carries none; `nil` logs nothing.
    public let logger: Logger?
    /// The configuration in force.
    public let configuration: Configuration

    /// `"logging"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "logging" }

    /// Creates a logging interceptor; a negative body limit counts as 0 (sizes only).
    public init(logger: Logger?, configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.bodyLimit = max(0, configuration.bodyLimit)
        self.logger = logger
        self.configuration = configuration
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        guard let logger = context[Key.self] ?? logger else { return try await next(request, context) }
        // What the logger's level lets through, read once: a line that would be dropped is never
        // built (no redaction, no formatting), so a logger at `.warning` costs a successful call
        // a clock read.
        let level = logger.logLevel
        let dumps = level <= configuration.dumpLevel
        let summaries = level <= configuration.summaryLevel
        let failures = level <= configuration.failureLevel
        guard dumps || summaries || failures else { return try await next(request, context) }
        let call = Call(request: request, redaction: configuration.redaction)
        var context = context
        if summaries {
            var observers = context[RetryInterceptor.Observers.self] ?? []
            observers.append(Self.retryObserver(logger, level: configuration.summaryLevel, call: call))
            context[RetryInterceptor.Observers.self] = observers
            var redirectObservers = context[RedirectInterceptor.Observers.self] ?? []
            redirectObservers.append(Self.redirectObserver(logger, level: configuration.summaryLevel, call: call))
            context[RedirectInterceptor.Observers.self] = redirectObservers
        }
        let dump = HTTPDump(redaction: configuration.redaction, bodyLimit: configuration.bodyLimit)
        if dumps { Self.tagged(logger, context, configuration.redaction).log(level: configuration.dumpLevel, "→ \(dump.curl(request))") }
        let start = ContinuousClock.now
        do {
            var response = try await next(request, context)
            if let stream = response.bodyStream, summaries || failures {
                response.bodyStream = stream.observingEnd(
                    Self.streamEndObserver(
                        Self.tagged(logger, context, configuration.redaction), configuration: configuration, call: call, start: start))
            }
            guard dumps || summaries else { return response }
            let tagged = Self.tagged(logger, context, configuration.redaction)
            if dumps { tagged.log(level: configuration.dumpLevel, "← \(dump.response(response))") }
            if summaries { Self.logSummary(of: response, call: call, elapsed: ContinuousClock.now - start, to: tagged, configuration) }
            return response
        } catch {
            if failures { Self.logFailure(error, call: call, elapsed: ContinuousClock.now - start, to: logger, context, configuration) }
            throw error
        }
    }

    /// The logger with the call's metadata: its ID, API and service.
    private static func tagged(_ logger: Logger, _ context: RequestContext, _ redaction: Redaction) -> Logger {
        var logger = logger
        logger[metadataKey: "runway.call"] = "\(context.callID)"
        if let api = context.apiName { logger[metadataKey: "runway.api"] = "\(redaction.apply(toAPIName: api))" }
        if let service = context.serviceID { logger[metadataKey: "runway.service"] = "\(service)" }
        return logger
    }

    /// The one-line summary of a call that returned a response.
    private static func logSummary(
        of response: Response, call: Call, elapsed: Duration, to logger: Logger, _ configuration: Configuration
    ) {
        var metadata: Logger.Metadata = [
            "runway.status": "\(response.status)", "runway.origin": "\(response.origin)",
            "runway.duration_ms": "\(milliseconds(elapsed))",
        ]
        let cached = response.origin != .network && response.origin != .stub
        var summary = "\(call.text) → \(response.status) in \(milliseconds(elapsed)) ms"
        if cached {
            summary += " [\(response.origin) hit]"
            metadata["runway.cache_hit"] = "true"
        } else {
            summary += " [\(response.origin)] \(response.metrics)"
        }
        if response.bodyStream != nil {
            summary += " [body streamed]"
            metadata["runway.streamed"] = "true"
        }
        logger.log(level: configuration.summaryLevel, "\(summary)", metadata: metadata)
    }

    /// The line of a call that failed: code, stage, message, field.
    private static func logFailure(
        _ error: any Error, call: Call, elapsed: Duration, to logger: Logger, _ context: RequestContext, _ configuration: Configuration
    ) {
        let failure = RunwayError.attributing(error, to: .interceptor("logging"), fallback: .transport)
        var line = "\(call.text) ✗ \(failure.code)"
        if let stage = failure.stage { line += " at \(stage)" }
        if !failure.message.isEmpty { line += ": \(failure.message)" }
        if let field = failure.field { line += " [field \(field)]" }
        line += " after \(milliseconds(elapsed)) ms"
        tagged(logger, context, configuration.redaction).log(
            level: configuration.failureLevel, "\(HTTPDump.escapingControlCharacters(line))",
            metadata: ["runway.error": "\(failure.code)", "runway.duration_ms": "\(milliseconds(elapsed))"])
    }

    /// How a line names the call (`GET https://…`, secrets redacted), made when a line needs it.
    struct Call: Sendable {
        let request: Request
        let redaction: Redaction

        var text: String { "\(request.method) \(redaction.apply(to: request.url))" }
    }

    /// Logs the end of a streamed body: the bytes the reader took, and how it ended (at the
    /// summary level when whole, the failure level otherwise).
    private static func streamEndObserver(
        _ logger: Logger, configuration: Configuration, call: Call, start: ContinuousClock.Instant
    ) -> @Sendable (ResponseBodyStream.End) -> Void {
        { end in
            guard end.error != nil || logger.logLevel <= configuration.summaryLevel else { return }
            let elapsed = milliseconds(ContinuousClock.now - start)
            var metadata: Logger.Metadata = ["runway.body_bytes": "\(end.byteCount)", "runway.duration_ms": "\(elapsed)"]
            guard let error = end.error else {
                logger.log(
                    level: configuration.summaryLevel, "\(call.text) body streamed: \(end.byteCount) bytes in \(elapsed) ms",
                    metadata: metadata)
                return
            }
            metadata["runway.error"] = "\(error.code)"
            var line = "\(call.text) body stream ✗ \(error.code) after \(end.byteCount) bytes"
            if !error.message.isEmpty { line += ": \(error.message)" }
            line += " after \(elapsed) ms"
            logger.log(level: configuration.failureLevel, "\(HTTPDump.escapingControlCharacters(line))", metadata: metadata)
        }
    }

    static func milliseconds(_ duration: Duration) -> String {
        let micros = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let fraction = String(micros % 1000 / 100)
        return "\(micros / 1000).\(fraction)"
    }
}

extension Interceptor where Self == LoggingInterceptor {
    /// Logs each call to `logger`, secrets redacted (see ``LoggingInterceptor``); `nil` logs
    /// nothing. Belongs near the front of the chain, before the cache.
    public static func logging(_ logger: Logger?, redacting redaction: Redaction = .standard, bodyLimit: Int = 4096) -> LoggingInterceptor {
        LoggingInterceptor(logger: logger, configuration: .init(bodyLimit: bodyLimit, redaction: redaction))
    }
}

extension LoggingInterceptor {
    /// A `RetryInterceptor` observer that logs each retry, for a logger of its own
    /// (`.retry(policy, onRetry: LoggingInterceptor.retryObserver(logger))`); a logging
    /// interceptor before retry logs them anyway.
    /// - Parameters:
    ///   - logger: Where the lines go.
    ///   - level: The level of each line.
    ///   - call: What the line names the call by (`GET https://…`); empty leaves it out.
    public static func retryObserver(
        _ logger: Logger, level: Logger.Level = .notice, call: String = ""
    ) -> @Sendable (RetryInterceptor.Event) -> Void {
        retryObserver(logger, level: level, redaction: .standard) { call }
    }

    /// The interceptor's own observer: the call is named (and its URL redacted) only when a retry happens.
    static func retryObserver(_ logger: Logger, level: Logger.Level, call: Call) -> @Sendable (RetryInterceptor.Event) -> Void {
        retryObserver(logger, level: level, redaction: call.redaction) { call.text }
    }

    /// The interceptor's observer of redirects: the call and where each redirect leads, redacted.
    static func redirectObserver(_ logger: Logger, level: Logger.Level, call: Call) -> @Sendable (RedirectInterceptor.Event) -> Void {
        { event in
            guard logger.logLevel <= level else { return }
            var logger = logger
            logger[metadataKey: "runway.call"] = "\(event.context.callID)"
            if let api = event.context.apiName { logger[metadataKey: "runway.api"] = "\(call.redaction.apply(toAPIName: api))" }
            logger.log(
                level: level,
                "\(call.text) redirect \(event.redirect): \(event.status) → \(event.method) \(call.redaction.apply(to: event.url))",
                metadata: ["runway.redirect": "\(event.redirect)", "runway.status": "\(event.status)"])
        }
    }

    private static func retryObserver(
        _ logger: Logger, level: Logger.Level, redaction: Redaction, call: @escaping @Sendable () -> String
    ) -> @Sendable (RetryInterceptor.Event) -> Void {
        { event in
            guard logger.logLevel <= level else { return }
            let call = call()
            var logger = logger
            logger[metadataKey: "runway.call"] = "\(event.context.callID)"
            if let api = event.context.apiName { logger[metadataKey: "runway.api"] = "\(redaction.apply(toAPIName: api))" }
            let cause = event.status.map { "status \($0)" } ?? event.error.map { "\($0.code)" } ?? "failure"
            let subject = call.isEmpty ? "" : "\(call) "
            let retrying = "retrying in \(milliseconds(event.delay)) ms (attempt \(event.failedAttempt + 1))"
            logger.log(
                level: level,
                "\(subject)attempt \(event.failedAttempt) ✗ \(cause), \(retrying)",
                metadata: [
                    "runway.attempt": "\(event.failedAttempt)", "runway.retry_delay_ms": "\(milliseconds(event.delay))",
                    event.status == nil ? "runway.error" : "runway.status":
                        "\(event.status.map(String.init) ?? event.error.map { "\($0.code)" } ?? "")",
                ])
        }
    }
}

#endif
