import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One send of a ``RequestBodyStream``: where a dispatcher takes the bytes from, on its own
/// thread, without blocking. A file is read as it is asked for; a sequence is read ahead by a
/// task into a bounded buffer (``UploadChannel``), and ``read(upTo:)`` says `.wait` while it is
/// empty, then the `onReadable` callback runs when bytes come.
///
/// Closing it (or releasing it) stops the task that reads a sequence and closes a file.
package final class RequestBodyReader: Sendable {
    /// What ``read(upTo:)`` found.
    package enum Read: Sendable {
        /// The next bytes, at most the count asked for.
        case data(Data)
        /// The whole body has been read.
        case end
        /// Nothing yet: `onReadable` runs when there is (a sequence only).
        case wait
        /// The body cannot be read to its end: the call fails with this error.
        case failed(RunwayError)
    }

    private enum Source: Sendable {
        case file(Locked<FileState>, path: String, length: Int)
        /// The channel of this send's sequence; `restart` makes and starts another from the
        /// sequence's start (a sequence made by a closure), or is `nil` (one passed as a value).
        case channel(Locked<ChannelState>, restart: (@Sendable () -> UploadChannel)?)
    }

    private struct FileState {
        var handle: FileReader?
        var sent = 0
    }

    private struct ChannelState {
        var channel: UploadChannel
        var readable: (@Sendable () -> Void)?
        var closed = false
    }

    private let source: Source

    init(file: FileReader, path: String, length: Int) {
        source = .file(Locked(FileState(handle: file)), path: path, length: length)
    }

    /// - Parameter restart: Makes a channel fed by the sequence made anew, started; `nil` for a
    ///   sequence that can be read once.
    init(channel: UploadChannel, restart: (@Sendable () -> UploadChannel)?) {
        source = .channel(Locked(ChannelState(channel: channel)), restart: restart)
    }

    deinit {
        close()
    }

    /// The channel bytes are read from now.
    private var channel: UploadChannel? {
        guard case .channel(let state, _) = source else { return nil }
        return state.withLock { $0.channel }
    }

    /// Sets what runs when a read that said `.wait` can go on (from the sequence's task; must not
    /// block). Set it before the first read.
    package func onReadable(_ callback: @escaping @Sendable () -> Void) {
        guard case .channel(let state, _) = source else { return }
        let channel = state.withLock { state in
            state.readable = callback
            return state.channel
        }
        channel.onReadable(callback)
    }

    /// The next bytes of the body, at most `count`.
    package func read(upTo count: Int) -> Read {
        switch source {
        case .channel:
            return channel?.read(upTo: count) ?? .end
        case .file(let state, let path, let length):
            return state.withLock { state -> Read in
                guard let handle = state.handle else {
                    return .failed(RunwayError(.cancelled, "the request body's file was closed"))
                }
                let remaining = length - state.sent
                if remaining <= 0 { return Self.checkEnd(of: handle, path: path, length: length) ?? .end }
                let data: Data
                do throws(POSIXError) {
                    data = try handle.read(upTo: Swift.min(count, remaining))
                } catch {
                    return .failed(RunwayError(.fileIO, "cannot read \(path): \(error.message)", underlying: error))
                }
                guard !data.isEmpty else {
                    return .failed(
                        RunwayError(
                            .fileIO, "\(path) ended after \(state.sent) of its \(length) bytes: it changed while it was being sent"))
                }
                state.sent += data.count
                // The body's last bytes (libcurl asks no more once it has the length): the file must end there.
                if state.sent == length, let failure = Self.checkEnd(of: handle, path: path, length: length) { return failure }
                return .data(data)
            }
        }
    }

    /// `nil` when `handle`, read to its `length`, ends there; else the failure: a file that grew
    /// while it was sent would go out cut short, as complete.
    private static func checkEnd(of handle: FileReader, path: String, length: Int) -> Read? {
        do throws(POSIXError) {
            guard try handle.read(upTo: 1).isEmpty else {
                return .failed(
                    RunwayError(.fileIO, "\(path) holds more than its \(length) bytes: it changed while it was being sent"))
            }
            return nil
        } catch {
            return .failed(RunwayError(.fileIO, "cannot read \(path): \(error.message)", underlying: error))
        }
    }

    /// Starts the body over, for a send on a new connection or after a redirect: always for a
    /// file and for a sequence made by a closure (made anew: the next reads wait for its first
    /// bytes), for one passed as a value only while none of it has been read. Does not block.
    package func rewind() -> Bool {
        switch source {
        case .channel(let state, let restart):
            let (rewound, replaced) = state.withLock { state -> (Bool, UploadChannel?) in
                if state.closed { return (false, nil) }
                if state.channel.rewind() { return (true, nil) }
                guard let restart else { return (false, nil) }
                let replaced = state.channel
                state.channel = restart()
                if let readable = state.readable { state.channel.onReadable(readable) }
                return (true, replaced)
            }
            // Stops the task that read the first sequence.
            replaced?.close()
            return rewound
        case .file(let state, _, _):
            return state.withLock { state in
                guard let handle = state.handle, (try? handle.rewind()) != nil else { return false }
                state.sent = 0
                return true
            }
        }
    }

    /// Waits until a read would not say `.wait` (for a reader that is a task, not a dispatcher's
    /// loop). Cancelling the waiting task closes this send (the next read fails with
    /// `.cancelled`): a sequence that never yields would otherwise hold the task forever.
    package func waitUntilReadable() async {
        guard let channel else { return }
        await withTaskCancellationHandler {
            await channel.waitUntilReadable()
        } onCancel: {
            channel.close()
        }
    }

    /// Waits for a sequence that was read to its declared length to end, and throws how it went
    /// wrong, if it did: for a body declared empty, which no dispatcher reads (libcurl never
    /// does), and after a transfer that sent the declared length, when the sequence may still
    /// throw or yield more. A sequence not read that far (the server answered before it took the
    /// whole body) is not waited for. A file read to its length must end there (it did not grow).
    /// - Parameter timeout: The longest wait: a sequence that does not end by then fails the call
    ///   with `.timeout`, as a transfer that does not end does. Cancelling the waiting task stops
    ///   the sequence and throws `.cancelled`.
    package func waitForEnd(timeout: Duration?) async throws(RunwayError) {
        if case .file = source {
            if case .failed(let error) = read(upTo: 1) { throw error }
            return
        }
        guard let channel, !channel.hasEnded, channel.handedOutDeclaredLength else {
            if let failure { throw failure }
            return
        }
        let timedOut = Locked(false)
        let timer = timeout.map { timeout in
            Task {
                // At most a century: `.seconds(.max)` (meant as no limit) would trap in the clock.
                try? await Task.sleep(for: min(timeout, .longestSleep))
                guard !Task.isCancelled else { return }
                timedOut.withLock { $0 = true }
                channel.close()
            }
        }
        await withTaskCancellationHandler {
            await channel.waitUntilEnded()
        } onCancel: {
            channel.close()
        }
        timer?.cancel()
        if timedOut.withLock({ $0 }), let timeout {
            throw RunwayError(
                .timeout, "the request body sequence did not end within the timeout of \(timeout) (a stream never finished?)",
                field: "bodyStream")
        }
        if Task.isCancelled { throw RunwayError(.cancelled, "reading the request body was cancelled") }
        if let failure = channel.failure { throw failure }
    }

    /// How the sequence read so far went wrong, if it did (yielded more than its declared length,
    /// or threw): a dispatcher whose transfer read all the declared bytes checks this before it
    /// calls the send a success. `nil` for a file.
    package var failure: RunwayError? {
        channel?.failure
    }

    /// Ends this send: stops reading the sequence, closes the file. Later reads fail.
    package func close() {
        switch source {
        case .channel(let state, _):
            let channel = state.withLock { state in
                state.closed = true
                state.readable = nil
                return state.channel
            }
            channel.close()
        case .file(let state, _, _):
            let handle = state.withLock { state in
                defer { state.handle = nil }
                return state.handle
            }
            handle?.close()
        }
    }
}

/// A sequence's bytes on their way to a dispatcher: a task reads the sequence ahead into a
/// buffer of at most `highWaterMark` bytes, and the dispatcher takes them from it.
final class UploadChannel: Sendable {
    private struct State {
        var chunks: [Data] = []
        /// Index of the next chunk to hand out (the array is emptied when it is all taken).
        var head = 0
        var buffered = 0
        /// Bytes the sequence has yielded, and bytes handed to the dispatcher.
        var received = 0
        var taken = 0
        /// The sequence's end: `.some(nil)` complete, `.some(error)` failed.
        var end: RunwayError??
        var closed = false
        /// Whether the dispatcher was told `.wait` and waits for `onReadable`.
        var readerWaits = false
        var readable: (@Sendable () -> Void)?
        var readerWaiter: CheckedContinuation<Void, Never>?
        var pumpWaiter: CheckedContinuation<Void, Never>?
        /// A wait for the sequence's end (``UploadChannel/waitUntilEnded()``).
        var endWaiter: CheckedContinuation<Void, Never>?
        var task: Task<Void, Never>?

        var hasSomething: Bool { head < chunks.count || end != nil || closed }

        /// The dispatcher's wake-up, once, if it waits for bytes.
        mutating func takeReaderWake() -> (@Sendable () -> Void)? {
            guard readerWaits else { return nil }
            readerWaits = false
            return readable
        }

        mutating func takeReaderWaiter() -> CheckedContinuation<Void, Never>? {
            defer { readerWaiter = nil }
            return readerWaiter
        }

        mutating func takeEndWaiter() -> CheckedContinuation<Void, Never>? {
            defer { endWaiter = nil }
            return endWaiter
        }
    }

    private let length: Int?
    private let highWaterMark: Int
    private let lowWaterMark: Int
    private let state = Locked(State())

    init(length: Int?, highWaterMark: Int) {
        self.length = length
        self.highWaterMark = Swift.max(1, highWaterMark)
        lowWaterMark = self.highWaterMark / 4
    }

    /// Starts the task that feeds the channel.
    func start(_ pump: @escaping @Sendable (UploadChannel) async -> Void) {
        let task = Task { await pump(self) }
        let closed = state.withLock { state in
            state.task = task
            return state.closed
        }
        if closed { task.cancel() }
    }

    /// Reads `sequence` into the channel until its end, an error, or the channel closes.
    func pump<S: AsyncSequence & Sendable>(_ sequence: S) async where S.Element == Data {
        do {
            var iterator = sequence.makeAsyncIterator()
            while let chunk = try await iterator.next() {
                guard await push(chunk) else {
                    // Closed while waiting for room (the call ended): this task is cancelled. Ask
                    // once more, so the sequence sees its reader cancelled as it would have inside
                    // `next()`: an `AsyncStream` runs its `onTermination` then (its producer
                    // stops), not when an iterator is dropped while the stream itself lives on in
                    // the request.
                    if Task.isCancelled { _ = try? await iterator.next() }
                    return
                }
            }
            finish(nil)
        } catch let error as RunwayError {
            finish(error)
        } catch is CancellationError {
            finish(RunwayError(.cancelled, "reading the request body was cancelled"))
        } catch {
            finish(RunwayError(.invalidRequest, "the request body sequence failed: \(error)", underlying: error))
        }
    }

    func onReadable(_ callback: @escaping @Sendable () -> Void) {
        state.withLock { $0.readable = callback }
    }

    /// Adds a chunk, then waits while the buffer is full; false once the channel is closed (stop).
    private func push(_ chunk: Data) async -> Bool {
        guard !chunk.isEmpty else { return true }
        let length = length
        let (open, notify, waiter, ended) = state.withLock {
            state -> (Bool, (@Sendable () -> Void)?, CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) in
            guard !state.closed, state.end == nil else { return (false, nil, nil, nil) }
            state.received += chunk.count
            if let length, state.received > length {
                state.end = .some(
                    RunwayError(
                        .invalidRequest, "the request body sequence yielded more than the \(length) bytes it declared", field: "bodyStream")
                )
            } else {
                state.chunks.append(chunk)
                state.buffered += chunk.count
            }
            return (state.end == nil, state.takeReaderWake(), state.takeReaderWaiter(), state.end != nil ? state.takeEndWaiter() : nil)
        }
        notify?()
        waiter?.resume()
        ended?.resume()
        guard open else { return false }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.closed || state.buffered < highWaterMark { return true }
                state.pumpWaiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        return state.withLock { !$0.closed }
    }

    private func finish(_ error: RunwayError?) {
        let length = length
        let (notify, waiter, ended) = state.withLock {
            state -> ((@Sendable () -> Void)?, CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) in
            guard !state.closed, state.end == nil else { return (nil, nil, nil) }
            var error = error
            if error == nil, let length, state.received != length {
                error = RunwayError(
                    .invalidRequest, "the request body sequence ended after \(state.received) of the \(length) bytes it declared",
                    field: "bodyStream")
            }
            state.end = .some(error)
            return (state.takeReaderWake(), state.takeReaderWaiter(), state.takeEndWaiter())
        }
        notify?()
        waiter?.resume()
        ended?.resume()
    }

    func read(upTo count: Int) -> RequestBodyReader.Read {
        let (read, pumpWaiter) = state.withLock { state -> (RequestBodyReader.Read, CheckedContinuation<Void, Never>?) in
            if state.closed { return (.failed(RunwayError(.cancelled, "the request body stream was closed")), nil) }
            if case .some(.some(let error)) = state.end { return (.failed(error), nil) }
            guard state.head < state.chunks.count else {
                if state.end != nil { return (.end, nil) }
                state.readerWaits = true
                return (.wait, nil)
            }
            var chunk = state.chunks[state.head]
            if chunk.count > count {
                state.chunks[state.head] = chunk.dropFirst(count)
                chunk = chunk.prefix(count)
            } else {
                state.head += 1
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                }
            }
            state.buffered -= chunk.count
            state.taken += chunk.count
            var waiter: CheckedContinuation<Void, Never>?
            if state.buffered <= lowWaterMark {
                waiter = state.pumpWaiter
                state.pumpWaiter = nil
            }
            return (.data(chunk), waiter)
        }
        pumpWaiter?.resume()
        return read
    }

    /// Only while nothing has been handed out: the bytes are all still here.
    func rewind() -> Bool {
        state.withLock { $0.taken == 0 && !$0.closed }
    }

    var failure: RunwayError? {
        state.withLock { state in
            if case .some(.some(let error)) = state.end { return error }
            return nil
        }
    }

    /// Whether every byte the sequence declared was handed out (never, when it declared none).
    var handedOutDeclaredLength: Bool {
        guard let length else { return false }
        return state.withLock { $0.taken == length }
    }

    /// Whether the sequence ended (or failed), or the channel was closed.
    var hasEnded: Bool {
        state.withLock { $0.end != nil || $0.closed }
    }

    /// Waits until the sequence ends (or fails), or the channel is closed.
    func waitUntilEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.end != nil || state.closed { return true }
                state.endWaiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func waitUntilReadable() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.hasSomething { return true }
                state.readerWaiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func close() {
        let (task, waiters) = state.withLock { state -> (Task<Void, Never>?, [CheckedContinuation<Void, Never>]) in
            guard !state.closed else { return (nil, []) }
            state.closed = true
            state.chunks = []
            state.head = 0
            state.buffered = 0
            state.readable = nil
            defer {
                state.task = nil
                state.pumpWaiter = nil
                state.readerWaiter = nil
                state.endWaiter = nil
            }
            return (state.task, [state.pumpWaiter, state.readerWaiter, state.endWaiter].compactMap { $0 })
        }
        task?.cancel()
        for waiter in waiters { waiter.resume() }
    }
}
