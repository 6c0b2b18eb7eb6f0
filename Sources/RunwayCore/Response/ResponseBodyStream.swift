import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response body that arrives as it is received: an `AsyncSequence` of byte chunks, read once.
///
/// A dispatcher hands one over in ``Response/bodyStream`` for a request with
/// ``Request/streamsResponseBody`` set, as soon as the response's head (status and header
/// fields) is in. Reading it is what moves the transfer on:
/// ```swift
/// var request = try Request("https://example.com/export")
/// request.streamsResponseBody = true
/// let response = try await pipeline.send(request)
/// for try await chunk in response.bodyStream! { try file.write(contentsOf: chunk) }
/// ```
/// - **Backpressure.** The dispatcher keeps at most about ``defaultHighWaterMark`` bytes that
///   the reader has not taken yet; above that it stops reading from the connection until the
///   reader has drained the buffer below a low-water mark, so a slow reader holds the server
///   back instead of filling memory.
/// - **Failures.** A connection cut, reset or timed out before the body's end ends the
///   iteration with a `RunwayError` (`.connectionLost`, `.timeout`, ...): never a silent short
///   body.
/// - **Cancellation.** Cancelling the reading task, or dropping the stream (or its iterator)
///   before its end, aborts the transfer: the server sees the connection close or the stream
///   reset. Iteration then throws `.cancelled`.
/// - **Once.** A second iterator throws `.configuration` from its first `next()`.
///
/// ``observingEnd(_:)`` lets an interceptor learn the byte count and the outcome without
/// reading the body itself (logging does).
public struct ResponseBodyStream: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = RunwayError

    /// How the stream ended for its reader, as ``observingEnd(_:)`` reports it.
    public struct End: Sendable {
        /// The bytes handed to the reader.
        public var byteCount: Int
        /// Why the body ended early: the transfer failed (`.connectionLost`, `.timeout`, ...), or
        /// the reader stopped (`.cancelled`); `nil` when the reader got the whole body.
        public var error: RunwayError?

        /// Creates an end (dispatchers and tests make these).
        public init(byteCount: Int, error: RunwayError? = nil) {
            self.byteCount = byteCount
            self.error = error
        }
    }

    /// The bytes buffered for the reader above which a producer stops reading: 1 MiB.
    public static let defaultHighWaterMark = 1 << 20

    /// The reading side: when the last copy of the stream goes away unread, the transfer is
    /// aborted (see ``Reader`` for an iterator that stops early).
    private let handle: Handle

    private init(channel: Channel) {
        handle = Handle(channel: channel)
    }

    /// A stream and the producer that feeds it, for a dispatcher.
    ///
    /// - Parameters:
    ///   - highWaterMark: Above this many unread bytes, ``Producer/yield(_:)`` refuses chunks
    ///     (the producer pauses).
    ///   - lowWaterMark: Once a paused producer's unread bytes fall to this many, `onResume`
    ///     runs; by default a quarter of `highWaterMark`.
    ///   - onResume: Asks a paused producer to offer chunks again. Runs on the reader's thread,
    ///     outside any lock; must not block.
    ///   - onCancel: Aborts the transfer: the reader cancelled or dropped the stream before its
    ///     end. Runs at most once, on whatever thread let go; must not block.
    public static func makeStream(
        highWaterMark: Int = defaultHighWaterMark, lowWaterMark: Int? = nil,
        onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void
    ) -> (stream: ResponseBodyStream, producer: Producer) {
        let high = Swift.max(1, highWaterMark)
        let low = Swift.min(high - 1, Swift.max(0, lowWaterMark ?? high / 4))
        let channel = Channel(highWaterMark: high, lowWaterMark: low, onResume: onResume, onCancel: onCancel)
        return (ResponseBodyStream(channel: channel), Producer(channel: channel))
    }

    /// A stream of the given chunks, then the end (or `failure`): for stubs and tests.
    public init(chunks: [Data], failure: RunwayError? = nil) {
        let channel = Channel(highWaterMark: .max, lowWaterMark: 0, onResume: {}, onCancel: {})
        let producer = Producer(channel: channel)
        for chunk in chunks { _ = producer.yield(chunk) }
        producer.finish(throwing: failure)
        self.init(channel: channel)
    }

    /// This stream, calling `observer` once when it ends for its reader: the whole body read,
    /// the transfer failed, or the reader cancelled or dropped it. It reads nothing itself;
    /// the byte count is what the reader was handed. The observer runs on the reader's thread
    /// (or the one that dropped the stream) and must not block. It must not hold this stream (or
    /// a response that holds it): the stream would then never be dropped, and a reader's leaving
    /// it unread would not abort the transfer.
    public func observingEnd(_ observer: @escaping @Sendable (End) -> Void) -> ResponseBodyStream {
        handle.channel.observe(observer)
        return self
    }

    /// Aborts the transfer unless the body has already ended; the reader, if any, gets
    /// `.cancelled`. For an interceptor that drops a streamed response it will not hand up.
    public func cancel() {
        handle.channel.cancel(RunwayError(.cancelled, "the response body stream was cancelled"))
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: Reader(channel: handle.channel, claimed: handle.claim()))
    }

    /// Reads the stream's chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = Data
        public typealias Failure = RunwayError

        fileprivate let reader: Reader

        public mutating func next() async throws(RunwayError) -> Data? {
            try await reader.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RunwayError) -> Data? {
            try await reader.next()
        }
    }

    /// The producing side, held by a dispatcher.
    public struct Producer: Sendable {
        fileprivate let channel: Channel

        /// What became of a chunk offered with ``yield(_:)``.
        public enum YieldResult: Sendable, Equatable {
            /// Taken: offer the next one.
            case accepted
            /// **Not** taken: the buffer is at its high-water mark. Pause, and offer it again
            /// once `onResume` runs.
            case full
            /// Dropped: the reader cancelled or dropped the stream (or it was finished). Stop.
            case finished
        }

        /// Offers the next chunk.
        public func yield(_ chunk: Data) -> YieldResult {
            channel.yield(chunk)
        }

        /// Ends the body: normally, or with `error` (delivered after the chunks already taken).
        /// Later calls do nothing.
        public func finish(throwing error: RunwayError? = nil) {
            channel.finish(error)
        }

        /// Whether the reader cancelled or dropped the stream, or it has already finished.
        public var isFinished: Bool {
            channel.isFinished
        }
    }

    /// Owned by the stream's copies: the last one released without an iterator aborts the
    /// transfer.
    private final class Handle: Sendable {
        let channel: Channel

        init(channel: Channel) {
            self.channel = channel
        }

        /// Whether this is the first iterator (the one that reads).
        func claim() -> Bool {
            channel.claim()
        }

        deinit {
            if !channel.isClaimed {
                channel.cancel(RunwayError(.cancelled, "the response body stream was dropped unread"))
            }
        }
    }

    /// Owned by an iterator: released before the end, it aborts the transfer.
    fileprivate final class Reader: Sendable {
        let channel: Channel
        let claimed: Bool

        init(channel: Channel, claimed: Bool) {
            self.channel = channel
            self.claimed = claimed
        }

        func next() async throws(RunwayError) -> Data? {
            guard claimed else {
                throw RunwayError(
                    .configuration,
                    "a response body stream can be read once: this is its second iteration (keep the chunks, or "
                        + "send the request again)")
            }
            while true {
                // With chunks buffered the reader never waits, which is where a cancellation
                // would otherwise reach it: a cancelled task stops here, and the transfer too.
                if Task.isCancelled {
                    channel.cancel(RunwayError(.cancelled, "the task reading the response body was cancelled"))
                }
                switch channel.take() {
                case .chunk(let chunk): return chunk
                case .end: return nil
                case .failure(let error): throw error
                case .wait:
                    let channel = channel
                    await withTaskCancellationHandler {
                        await withCheckedContinuation { continuation in channel.park(continuation) }
                    } onCancel: {
                        channel.cancel(RunwayError(.cancelled, "the task reading the response body was cancelled"))
                    }
                }
            }
        }

        deinit {
            if claimed {
                channel.cancel(RunwayError(.cancelled, "the response body stream's iterator was dropped before the end"))
            }
        }
    }
}

/// What the producer and the reader share: the chunks not yet read, the end, who waits.
private final class Channel: Sendable {
    enum Taken {
        case chunk(Data)
        case end
        case failure(RunwayError)
        case wait
    }

    struct State {
        var chunks: [Data] = []
        /// Index of the next chunk to hand out; the slots before it are empty (the array is
        /// compacted when it is all read, or half of it).
        var head = 0
        var buffered = 0
        var delivered = 0
        /// The producer's end (nil error: complete); the reader gets it after the chunks.
        var end: RunwayError??
        /// Set by a cancel: the reader gets it at once, buffered chunks or not.
        var cancelled: RunwayError?
        /// Whether the reader has seen the end (observers told).
        var ended = false
        var paused = false
        var claimed = false
        var waiter: CheckedContinuation<Void, Never>?
        var observers: [@Sendable (ResponseBodyStream.End) -> Void] = []
        var onResume: (@Sendable () -> Void)?
        var onCancel: (@Sendable () -> Void)?
    }

    let highWaterMark: Int
    let lowWaterMark: Int
    private let state: Locked<State>

    init(highWaterMark: Int, lowWaterMark: Int, onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        self.highWaterMark = highWaterMark
        self.lowWaterMark = lowWaterMark
        state = Locked(State(onResume: onResume, onCancel: onCancel))
    }

    var isFinished: Bool { state.withLock { $0.end != nil || $0.cancelled != nil } }
    var isClaimed: Bool { state.withLock { $0.claimed } }

    func claim() -> Bool {
        state.withLock { state in
            defer { state.claimed = true }
            return !state.claimed
        }
    }

    func yield(_ chunk: Data) -> ResponseBodyStream.Producer.YieldResult {
        let (taken, waiter) = state.withLock { state -> (ResponseBodyStream.Producer.YieldResult, CheckedContinuation<Void, Never>?) in
            guard state.end == nil, state.cancelled == nil else { return (.finished, nil) }
            guard state.buffered < highWaterMark else {
                state.paused = true
                return (.full, nil)
            }
            if chunk.isEmpty { return (.accepted, nil) }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            defer { state.waiter = nil }
            return (.accepted, state.waiter)
        }
        waiter?.resume()
        return taken
    }

    func finish(_ error: RunwayError?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.end == nil, state.cancelled == nil else { return nil }
            state.end = .some(error)
            state.onResume = nil
            state.onCancel = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Ends the stream for the reader with `error` and aborts the producer, unless it has ended.
    func cancel(_ error: RunwayError) {
        let (abort, waiter, observers, end) = state.withLock {
            state -> (
                (@Sendable () -> Void)?, CheckedContinuation<Void, Never>?, [@Sendable (ResponseBodyStream.End) -> Void],
                ResponseBodyStream.End
            )
            in
            let end = ResponseBodyStream.End(byteCount: state.delivered, error: error)
            guard !state.ended, state.cancelled == nil else { return (nil, nil, [], end) }
            state.cancelled = error
            // The producer already finished: nothing to abort, but the reader still stops here.
            let abort = state.end == nil ? state.onCancel : nil
            state.onCancel = nil
            state.onResume = nil
            state.chunks = []
            state.head = 0
            state.buffered = 0
            let waiter = state.waiter
            state.waiter = nil
            // Told now: a dropped stream has no reader left to see the end.
            state.ended = true
            let observers = state.observers
            state.observers = []
            return (abort, waiter, observers, end)
        }
        abort?()
        waiter?.resume()
        for observer in observers { observer(end) }
    }

    func observe(_ observer: @escaping @Sendable (ResponseBodyStream.End) -> Void) {
        let ended: ResponseBodyStream.End? = state.withLock { state in
            guard state.ended else {
                state.observers.append(observer)
                return nil
            }
            let error: RunwayError? = state.cancelled ?? state.end.flatMap { $0 }
            return ResponseBodyStream.End(byteCount: state.delivered, error: error)
        }
        if let ended { observer(ended) }
    }

    func take() -> Taken {
        let (taken, resume, observers, end) = state.withLock {
            state -> (Taken, (@Sendable () -> Void)?, [@Sendable (ResponseBodyStream.End) -> Void], ResponseBodyStream.End?) in
            if let cancelled = state.cancelled { return (.failure(cancelled), nil, [], nil) }
            if state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                // Let go of the chunk here, or a reader the producer keeps ahead of would hold
                // every chunk it has read until it catches up, which a slow one never does.
                state.chunks[state.head] = Data()
                state.head += 1
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                } else if state.head >= 32, state.head * 2 >= state.chunks.count {
                    // The slots read so far go too: the array stays as long as what is unread.
                    state.chunks.removeFirst(state.head)
                    state.head = 0
                }
                state.buffered -= chunk.count
                state.delivered += chunk.count
                var resume: (@Sendable () -> Void)?
                if state.paused, state.buffered <= lowWaterMark {
                    state.paused = false
                    resume = state.onResume
                }
                return (.chunk(chunk), resume, [], nil)
            }
            guard let end = state.end else { return (.wait, nil, [], nil) }
            var observers: [@Sendable (ResponseBodyStream.End) -> Void] = []
            if !state.ended {
                state.ended = true
                observers = state.observers
                state.observers = []
            }
            let summary = ResponseBodyStream.End(byteCount: state.delivered, error: end)
            if let error = end { return (.failure(error), nil, observers, summary) }
            return (.end, nil, observers, summary)
        }
        resume?()
        if let end { for observer in observers { observer(end) } }
        return taken
    }

    /// Waits for a chunk, the end or a cancel; resumes at once if one came meanwhile.
    func park(_ continuation: CheckedContinuation<Void, Never>) {
        let ready = state.withLock { state -> Bool in
            if state.head < state.chunks.count || state.end != nil || state.cancelled != nil { return true }
            state.waiter = continuation
            return false
        }
        if ready { continuation.resume() }
    }
}
