import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The events of a Server-Sent Events endpoint, as an `AsyncSequence` that reconnects: each
/// connection is a call through a `Pipeline` (so every reconnection is signed again, routed by
/// the DNS bypass and logged, like any call), and the events arrive as the server sends them.
///
/// ```swift
/// let request = try Request("https://example.com/prices/stream")
/// for try await event in pipeline.events(for: request) {
///     print(event.type, event.data)
/// }
/// ```
/// - **Reconnection.** When the server ends the stream, or the connection is lost or times out,
///   the sequence connects again after the reconnection time (the server's latest `retry:`, else
///   ``Configuration/reconnectionTime``, at most ``Configuration/maxReconnectionTime``; doubled,
///   counted from at least 100 ms, for each further reconnection in a row that brought no event:
///   with `retry: 0`, 0, then 200 ms, 400 ms...), sending
///   `Last-Event-ID` with the last event ID it saw, so the server can resume. An event cut by the
///   end of a connection is dropped, its `id:` with it (it never had its blank line).
/// - **Resuming.** A `Last-Event-ID` on the request (an ID the app stored from an earlier run)
///   is sent by the first connection and is the last event ID until the server sends another:
///   the events carry it, and reconnections send it.
/// - **The end.** A `204 No Content` ends the sequence, as a server's way of saying there is no
///   more; so does reaching ``Configuration/maxReconnections``, with the last error (or normally
///   when the last connection ended normally).
/// - **Sent once.** A request that is not safe to repeat (a POST or PATCH without an
///   `Idempotency-Key` header) is never sent again once it may have reached the server: the end
///   of its connection ends the sequence (normally, or with the connection's error). Only a
///   failure to connect that sent nothing (`RunwayError.neverSent`) is followed by another
///   connection.
/// - **Failures.** A status other than 200 is `.serverError`, and a `Content-Type` other than
///   `text/event-stream` or a `Content-Encoding` (gzip, ...) is `.responseInvalid`, each with the
///   response and without reconnecting; so is any error the pipeline throws that is not a lost
///   connection, a timeout or a failure to connect (a `.tls` failure, a signing `.configuration`,
///   ...).
/// - **Cancellation.** Cancelling the reading task, or leaving the loop, aborts the current
///   transfer (the server sees the connection close or the stream reset) and never reconnects.
///
/// Each connection is the request as given with `Accept: text/event-stream` and
/// `Cache-Control: no-cache` (replacing its own), `Last-Event-ID` when there is one, no total timeout
/// (`RequestOptions.timeout` `nil`: a stream lasts), and `Request.streamsResponseBody`. Its
/// `RequestOptions.idleTimeout` stays: set it above the server's heartbeat interval, and a
/// connection that goes silent that long is left and reconnected (without it, a server that
/// stops sending but keeps the connection open is never left). The
/// dispatcher must stream response bodies (`CurlDispatcher` does; `URLSessionDispatcher` refuses).
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = RunwayError

    /// How the stream reconnects and what it holds.
    public struct Configuration: Sendable {
        /// The wait before reconnecting until the server sends `retry:` (3 s, as browsers).
        public var reconnectionTime: Duration
        /// The longest wait, whatever the server asks for (a year at most).
        public var maxReconnectionTime: Duration
        /// How many times to reconnect in a row without an event in between; `nil` for no limit.
        public var maxReconnections: Int?
        /// The most bytes an event may hold, its data and type (`.responseTooLarge` above, once
        /// the events before it are handed over), wherever the reads cut it; also the longest
        /// line of another field (a comment, an `id:`), which the parser holds whole.
        public var maxEventSize: Int

        /// Creates a configuration.
        public init(
            reconnectionTime: Duration = .seconds(3), maxReconnectionTime: Duration = .seconds(60), maxReconnections: Int? = nil,
            maxEventSize: Int = 16 << 20
        ) {
            self.reconnectionTime = reconnectionTime
            self.maxReconnectionTime = maxReconnectionTime
            self.maxReconnections = maxReconnections
            self.maxEventSize = maxEventSize
        }
    }

    private let request: Request
    private let pipeline: Pipeline
    private let context: RequestContext
    private let configuration: Configuration

    /// The events of `request`'s endpoint, each connection sent through `pipeline` with `context`.
    public init(
        request: Request, pipeline: Pipeline, context: RequestContext = RequestContext(), configuration: Configuration = Configuration()
    ) {
        self.request = request
        self.pipeline = pipeline
        self.context = context
        self.configuration = configuration
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// Reads events, connecting and reconnecting as needed.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = ServerSentEvent
        public typealias Failure = RunwayError

        private let stream: EventStream
        private var parser = ServerSentEventParser()
        private var pending: [ServerSentEvent] = []
        private var body: ResponseBodyStream.Iterator?
        private var connections = 0
        /// Reconnections since the last event.
        private var reconnections = 0
        private var lastError: RunwayError?
        /// Whether the request may have reached the server (a connection answered, or failed
        /// after something of it may have left): one that is not safe to repeat is then never
        /// sent again.
        private var maybeSent = false
        /// Ends the sequence once the events that came before it are handed over.
        private var failure: RunwayError?
        private var finished = false

        init(stream: EventStream) {
            self.stream = stream
            // An ID the app stored (from an earlier run) resumes the stream from there.
            parser = ServerSentEventParser(lastEventID: stream.request.headers["Last-Event-ID"] ?? "")
            parser.lineLimit = stream.configuration.maxEventSize
        }

        public mutating func next() async throws(RunwayError) -> ServerSentEvent? {
            do throws(RunwayError) {
                return try await nextEvent()
            } catch {
                // Thrown once: the sequence has ended, and a later call returns nil (never an
                // earlier connection's error).
                finished = true
                lastError = nil
                throw error
            }
        }

        private mutating func nextEvent() async throws(RunwayError) -> ServerSentEvent? {
            while !finished {
                if !pending.isEmpty {
                    reconnections = 0
                    return pending.removeFirst()
                }
                if let failure {
                    finished = true
                    throw failure
                }
                if body == nil {
                    try await connect()
                    continue
                }
                do throws(RunwayError) {
                    guard let chunk = try await body?.next() else {
                        endConnection(nil)
                        continue
                    }
                    pending = parser.parse(chunk)
                    // A chunk may complete events and start one: each is held to the limit, and
                    // those before one over it are still handed over. So are those before a line
                    // over it (the parser stops there), however the reads cut the stream.
                    let limit = stream.configuration.maxEventSize
                    if let index = pending.firstIndex(where: { $0.data.utf8.count + $0.type.utf8.count > limit }) {
                        pending.removeSubrange(index...)
                    } else if !parser.lineOverLimit, parser.pendingByteCount <= limit {
                        continue
                    }
                    body = nil  // aborts the transfer
                    failure = RunwayError(.responseTooLarge, "an event or a line of the stream is over the \(limit)-byte limit")
                } catch {
                    guard Self.reconnects(after: error) else {
                        finished = true
                        body = nil
                        throw error
                    }
                    endConnection(error)
                }
            }
            if let lastError { throw lastError }
            return nil
        }

        /// The connection ended (normally, or with a lost connection or a timeout): the next one
        /// starts a fresh stream.
        private mutating func endConnection(_ error: RunwayError?) {
            body = nil
            lastError = error
            parser.reset()
        }

        /// Opens the next connection, after the reconnection time unless it is the first.
        private mutating func connect() async throws(RunwayError) {
            if connections > 0 {
                // A POST or PATCH without an `Idempotency-Key` goes once: sending it again could
                // have the server act on it again (a second order, a second paid completion).
                guard !maybeSent || Self.repeatable(stream.request) else {
                    finished = true
                    return
                }
                if let limit = stream.configuration.maxReconnections, reconnections >= limit {
                    finished = true
                    return
                }
                reconnections += 1
                let wait = EventStream.reconnectionWait(
                    asked: parser.reconnectionTime ?? stream.configuration.reconnectionTime,
                    limit: stream.configuration.maxReconnectionTime, reconnections: reconnections)
                do {
                    try await Task.sleep(for: wait)
                } catch {
                    finished = true
                    throw RunwayError(.cancelled, "cancelled while waiting to reconnect to the event stream")
                }
            }
            connections += 1
            var request = stream.request
            request.streamsResponseBody = true
            request.options.timeout = nil
            request.headers["Accept"] = "text/event-stream"
            request.headers["Cache-Control"] = "no-cache"
            request.headers["Last-Event-ID"] = parser.lastEventID.isEmpty ? nil : parser.lastEventID
            let response: Response
            do {
                response = try await stream.pipeline.send(request, context: stream.context)
            } catch {
                if error.code == .requestTooLarge, let id = request.headers["Last-Event-ID"], id != stream.request.headers["Last-Event-ID"]
                {
                    // The server's own `id:` is what cannot go back: the stream cannot resume.
                    finished = true
                    throw RunwayError(
                        .responseTooLarge,
                        "the stream's last event ID takes \(id.utf8.count) bytes, too many to send back as Last-Event-ID in a request "
                            + "head (\(Request.maxHeadSize) bytes at most): the stream cannot resume", underlying: error)
                }
                guard Self.reconnects(after: error) else {
                    finished = true
                    throw error
                }
                if !error.neverSent { maybeSent = true }
                lastError = error
                return
            }
            maybeSent = true
            if response.status == 204 {
                response.bodyStream?.cancel()
                finished = true
                lastError = nil
                return
            }
            guard response.status == 200 else {
                response.bodyStream?.cancel()
                finished = true
                throw RunwayError(.serverError, "the event stream answered HTTP \(response.status)", response: response)
            }
            let type = response.headers["Content-Type"] ?? ""
            guard type.split(separator: ";").first?.trimmingBlanks().lowercased() == "text/event-stream" else {
                response.bodyStream?.cancel()
                finished = true
                throw RunwayError(
                    .responseInvalid, "the event stream's Content-Type is \"\(type)\", not text/event-stream", response: response)
            }
            // The body is handed over as sent: an encoded one would be parsed as garbage, silently.
            let encoding = response.headers["Content-Encoding"] ?? ""
            let codings = encoding.split(separator: ",").map { $0.trimmingBlanks().lowercased() }
            guard codings.allSatisfy({ $0.isEmpty || $0 == "identity" }) else {
                response.bodyStream?.cancel()
                finished = true
                throw RunwayError(
                    .responseInvalid,
                    "the event stream is \(encoding)-encoded, which its parser cannot read (do not ask for it with Accept-Encoding)",
                    response: response)
            }
            guard let bodyStream = response.bodyStream else {
                finished = true
                throw RunwayError(.configuration, "the dispatcher did not stream the response body (use CurlDispatcher)")
            }
            body = bodyStream.makeAsyncIterator()
        }

        /// Whether `request` may be sent again: an idempotent method, or an `Idempotency-Key` (the
        /// server acts on a key once), as the retry interceptor and the dispatcher take it.
        private static func repeatable(_ request: Request) -> Bool {
            request.method.isIdempotent || request.headers["Idempotency-Key"] != nil
        }

        /// A lost connection, a timeout or a failure to connect is worth another connection;
        /// nothing else is (a cancellation least of all).
        private static func reconnects(after error: RunwayError) -> Bool {
            [.connectionLost, .timeout, .cannotConnect, .dnsFailure].contains(error.code)
        }
    }
}

extension EventStream {
    /// The longest wait before a reconnection, whatever the configuration says: a year (a longer
    /// one would overflow the sleep's nanoseconds).
    package static let longestWait = Duration.seconds(365 * 86_400)

    /// The wait before reconnection number `reconnections` in a row: the time `asked` (the
    /// server's `retry:` or the configured one), at most `limit`; from the second reconnection
    /// without an event, doubled each time from at least 100 ms, so a server that closes at once
    /// (`retry: 0`, say) is not hammered. Never overflows, whatever the durations.
    package static func reconnectionWait(asked: Duration, limit: Duration, reconnections: Int) -> Duration {
        let limit = Swift.max(Swift.min(limit, longestWait), .zero)
        let wait = Swift.min(Swift.max(asked, .zero), limit)
        guard reconnections > 1 else { return wait }
        let factor = 1 << Swift.min(reconnections - 1, 20)
        let base = Swift.max(wait, .milliseconds(100))
        return base > limit / factor ? limit : base * factor
    }
}

extension Pipeline {
    /// The events of `request`'s Server-Sent Events endpoint, each connection sent through this
    /// pipeline (see ``EventStream``).
    public func events(
        for request: Request, context: RequestContext = RequestContext(), configuration: EventStream.Configuration = .init()
    ) -> EventStream {
        EventStream(request: request, pipeline: self, context: context, configuration: configuration)
    }
}
