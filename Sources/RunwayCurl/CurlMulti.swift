import CCurl
import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One libcurl multi handle and the thread that drives it.
///
/// The thread drives the handle through its socket interface (`curl_multi_socket_action`):
/// libcurl says which sockets it wants watched and when its timer runs out, ``SocketWatch``
/// waits for them (epoll on Linux) and for wake-ups from callers, and libcurl is handed only
/// the sockets that are ready. A turn of the loop so costs what is ready, not what is open.
///
/// `@unchecked Sendable` because each part of its state has one owner:
/// - `pending`, `cancels` and `stopping` are shared between callers and the loop thread and live
///   in `shared`, behind its lock;
/// - the multi handle and `active` (and every `CurlTransfer` from its submission until it is
///   handed back) are touched only by the **driver**: whoever holds `driver`. That is the loop
///   thread, except while it blocks waiting for sockets (epoll) with no transfer running: a
///   caller that then submits a transfer takes the lock and runs the turn itself (``drive()``),
///   so a request on a kept-alive connection is sent from the caller's thread, without a wake-up
///   of the loop and two thread switches. Other threads only call ``SocketWatch/wake()``, a write
///   to a pipe;
/// - a transfer's easy handle is its caller's until the hand-over (made and set up in
///   ``prepare(_:)``) and again once the transfer is handed back, which frees it.
final class CurlMulti: @unchecked Sendable {
    private let configuration: CurlDispatcher.Configuration
    /// `User-Agent: <configuration.userAgent>`, made once.
    private let userAgentHeader: String
    private let handle: UnsafeMutableRawPointer
    /// Nil when the system had no descriptors left for it: every request then fails.
    private let watch: SocketWatch?
    private let shared = Locked(Shared())
    /// Held by the driver (see above): the loop thread but while it blocks in its wait.
    private let driver = Lock()
    /// The TLS session cache every transfer's handle uses.
    private let share = CurlShare()
    /// Nil when the loop could not start. Written once by `init` (after the thread starts, which
    /// never reads it) and read by ``stop()``, which only the dispatcher's `deinit` calls.
    private var thread: LoopThread?

    private struct Shared {
        var pending: [CurlTransfer] = []
        var cancels: [CurlTransfer] = []
        /// Paused streamed transfers whose reader has drained its buffer.
        var resumes: [CurlTransfer] = []
        /// Jobs of tasks that run on the loop thread (``LoopExecutor``), in the order they came.
        var jobs: [LoopJob] = []
        var stopping = false
        /// The loop thread's kernel ID, once it runs (Linux; for tests).
        var loopThreadID: Int?
        /// Whether the loop is (about to be) blocked waiting for sockets. While it is not, it will
        /// look at `pending` and `cancels` again before it blocks, so callers skip the wake-up (a
        /// syscall, and a spurious wake of the loop, per request under load).
        var polling = false
        /// Whether a caller has taken on the turn the waiting loop would otherwise be woken for
        /// (``drive()``); others only queue meanwhile, and it takes their transfers too.
        var driving = false
        /// Whether the waiting loop has no transfer running: only then does a caller drive. With
        /// transfers running, the loop wakes for their responses anyway and its thread does the
        /// turn in parallel with the callers' own work (driving from callers there was measured
        /// slower: the callers' threads are the busier ones).
        var quiet = false
    }

    // The driver's only. Exclusivity is not checked at run time on the driver's state (about
    // 25 checks a send): one thread at a time has it (`driver`), libcurl's callbacks never touch
    // it, and no access to it spans a call into libcurl or a job.
    @exclusivity(unchecked) private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Per origin (``CurlTransfer/origin``), the transfers in the multi handle and those held
    /// back for one of its connections; see ``holdsBack(_:)``. A transfer keeps its origin's
    /// entry from its start (``CurlTransfer/originCount``), so the origin is hashed once per
    /// request. The driver's only.
    @exclusivity(unchecked) private var origins: [Substring: OriginCount] = [:]
    /// How many transfers `origins` holds back, every origin's together. The driver's only.
    @exclusivity(unchecked) private var heldCount = 0
    /// How many transfers in the multi handle have an idle timeout: while any does, the wait
    /// notes when each socket is ready (``SocketWatch/recordsActivity``). The driver's only.
    @exclusivity(unchecked) private var idleWatched = 0
    /// The queues taken from callers, kept so their storage is reused (no allocation per batch).
    @exclusivity(unchecked) private var batch: [CurlTransfer] = []
    @exclusivity(unchecked) private var aborts: [CurlTransfer] = []
    @exclusivity(unchecked) private var unpauses: [CurlTransfer] = []
    @exclusivity(unchecked) private var jobBatch: [LoopJob] = []
    /// The sockets handed to libcurl as readable during the driver's current turn, and the
    /// transfers that took bytes from an HTTP/2 connection meanwhile: see ``redriveHTTP2()``.
    @exclusivity(unchecked) private var readSockets: [Int32] = []
    private let arrivals = HTTP2Arrivals()
    /// Whether ``redriveHTTP2()`` stopped with bytes still moving: the next turn does not block.
    @exclusivity(unchecked) private var redriveLeft = false
    /// The `CURLMOPT_MAXCONNECTS` in force; see ``keepIdleConnections()``.
    @exclusivity(unchecked) private var connectionLimit: Int
    /// CA bundle paths found readable; checked once each instead of per request (by callers,
    /// in ``prepare(_:)``).
    private let readableCAFiles = Locked(Set<String>())
    /// No later than the earliest ``CurlTransfer/deadline`` of the active transfers: when the
    /// loop looks for overdue ones (``expireOverdue()``). The driver's only.
    @exclusivity(unchecked) private var nextDeadline = UInt64.max
    /// How long after a transfer's total timeout the loop ends it, if libcurl has not: libcurl
    /// ends a running transfer on time itself, with its own words, but not one still waiting
    /// for a free connection (`maxConnectionsPerHost`), which libcurl 7.88 would keep waiting
    /// past its timeout for as long as the connections stay busy.
    private static let deadlineGrace: UInt64 = 250_000_000

    /// When a transfer still waiting for a free connection times out: its timeout exactly, with no
    /// grace, as nothing else will end it (``deadlineGrace``); `.max` without a timeout.
    private static func heldDeadline(_ transfer: CurlTransfer) -> UInt64 {
        transfer.deadline == .max ? .max : transfer.deadline &- deadlineGrace
    }

    init(configuration: CurlDispatcher.Configuration, backend: SocketWatch.Backend = .platformDefault) {
        CurlGlobal.initialize()
        self.configuration = configuration
        self.userAgentHeader = "User-Agent: \(configuration.userAgent)"
        handle = curl_multi_init()
        runway_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        runway_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        runway_multi_setopt_long(handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        runway_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, max(1, configuration.connectionCacheSize))
        connectionLimit = max(1, configuration.connectionCacheSize)
        do {
            watch = try SocketWatch(backend: backend)
        } catch {
            watch = nil
            shared.withLock { $0.stopping = true }
            return
        }
        let user = Unmanaged.passUnretained(watch!).toOpaque()
        runway_multi_setopt_socket_callback(handle, curlSocketCallback, user)
        runway_multi_setopt_timer_callback(handle, curlTimerCallback, user)
        // The thread holds the multi until its loop ends (`stop`).
        thread = LoopThread.start(name: "runway.curl") { [self] in run() }
        if thread == nil { shared.withLock { $0.stopping = true } }
    }

    deinit {
        // Only without a loop thread; otherwise the thread cleaned up before letting go.
        if thread == nil { curl_multi_cleanup(handle) }
    }

    /// Which wait the loop uses (tests run both).
    var backend: SocketWatch.Backend? { watch?.backend }

    /// Hands a transfer to the loop: queued for its next turn, or, when the loop is blocked in
    /// its wait (epoll) with no transfer running and no other caller driving, started on this
    /// thread (``drive()``).
    func submit(_ transfer: CurlTransfer) {
        let drives = watch?.backend == .epoll
        let action: Submission = shared.withLock { shared in
            guard !shared.stopping else { return .refused }
            shared.pending.append(transfer)
            // Awake, the loop looks at `pending` before it waits again; a driving caller takes it.
            guard shared.polling, !shared.driving else { return .queued }
            guard drives, shared.quiet else { return .wake }
            shared.driving = true
            // What this caller starts is running from now on: later callers wake the loop.
            shared.quiet = false
            return .drive
        }
        switch action {
        case .queued:
            break
        case .wake:
            watch?.wake()
        case .drive:
            drive()
        case .refused:
            // Never handed to libcurl: nothing of it was sent.
            let error =
                if watch == nil {
                    RunwayError(.transport, "the dispatcher could not start: no file descriptors left for its event loop", neverSent: true)
                } else if thread == nil {
                    RunwayError(
                        .transport, "the dispatcher could not start: the system refused a thread for its event loop", neverSent: true)
                } else {
                    RunwayError(.cancelled, "the dispatcher was shut down", neverSent: true)
                }
            abandon(transfer, error)
        }
    }

    private enum Submission {
        case queued, wake, drive, refused
    }

    /// Gives `transfer` a new easy handle with the request applied, on the caller's thread before
    /// the hand-over (``submit(_:)``): the one loop thread, which moves every transfer's bytes,
    /// then only adds it to the multi handle.
    ///
    /// A handle carries one transfer, never two: libcurl 7.88 keeps a pointer to the last header
    /// field it stored, which is freed when the handle's next transfer starts, and a reply whose
    /// first field line is folded (begins with a blank) is appended to it, a use after free in
    /// libcurl before Runway's header callback sees the line. `curl_easy_reset` keeps that
    /// pointer, and a copy of a used handle (`curl_easy_duphandle`) was measured to cost what a
    /// new one does; a new handle carries nothing of another request either. Connections belong
    /// to the multi handle, and TLS sessions to its share (``CurlShare``): both outlive handles.
    /// - Throws: what the request's options cannot be applied for (``RunwayError/Code/configuration``
    ///   and the like); the handle is freed then.
    func prepare(_ transfer: CurlTransfer) throws(RunwayError) {
        // Without a loop (no descriptors left) `submit` refuses the transfer.
        guard let watch else { return }
        guard let easy = curl_easy_init() else {
            throw RunwayError(.transport, "curl_easy_init failed")
        }
        do {
            try transfer.configure(
                easy, share: share, userAgentHeader: userAgentHeader, watch: watch, readableCAFiles: readableCAFiles)
        } catch {
            transfer.releaseResources()
            Self.discard(easy)
            throw error
        }
        transfer.easy = easy
    }

    /// One turn of the loop, run by a caller while the loop thread blocks in its wait: the handed-
    /// over transfers start (added to libcurl, which sends a request on a kept-alive connection at
    /// once), expired timers run. The loop thread is woken only if its wait must end sooner:
    /// libcurl's timer now runs out before it, or work came that this turn did not take.
    private func drive() {
        guard let watch else { return }
        driver.lock()
        let deadlineBefore = nextDeadline
        _ = takeHandedOver(awake: false)  // stopping: the loop, woken below, shuts down
        runHandedOver()
        if heldCount > 0 { startHeld() }
        var running: Int32 = 0
        if watch.takeExpiredTimer() {
            curl_multi_socket_action(handle, CURL_SOCKET_TIMEOUT, 0, &running)
            readCompletions()
        }
        keepIdleConnections()
        let more = shared.withLock { shared in
            shared.driving = false
            return shared.polling && (!shared.pending.isEmpty || !shared.cancels.isEmpty || !shared.resumes.isEmpty || shared.stopping)
        }
        // libcurl's timer, or a deadline of the loop's own (a timeout, an idle check) that now
        // comes before the loop's wait ends.
        let sooner = watch.timerEndsBeforeWait() || (nextDeadline < deadlineBefore && watch.endsBeforeWait(nextDeadline))
        driver.unlock()
        if more || sooner { watch.wake() }
    }

    /// Asks the loop thread to abort a transfer, whether it has started yet or not.
    func cancel(_ transfer: CurlTransfer) {
        let wake = shared.withLock { shared in
            transfer.cancelRequested = true
            shared.cancels.append(transfer)
            return shared.polling
        }
        if wake { watch?.wake() }
    }

    /// Asks the loop thread to unpause a streamed transfer (`curl_easy_pause` must run there):
    /// its reader has drained the buffer, or its request body has bytes again.
    func resume(_ transfer: CurlTransfer) {
        let wake = shared.withLock { shared in
            shared.resumes.append(transfer)
            return shared.polling
        }
        if wake { watch?.wake() }
    }

    /// Runs `job` on the loop thread in its next turn (waking it if it waits), or, once the loop
    /// is stopping, on the global executor: no task is ever left suspended on a loop that is gone.
    func enqueue(_ job: UnownedJob, on executor: UnownedTaskExecutor) {
        let queued: Bool? = shared.withLock { shared in
            guard !shared.stopping else { return nil }
            shared.jobs.append(LoopJob(job: job, executor: executor))
            return shared.polling
        }
        switch queued {
        case nil: Self.runElsewhere(job)
        case true?: watch?.wake()
        case false?: break
        }
    }

    /// A job the stopped loop will not run, handed to Swift's global executor.
    private static func runElsewhere(_ job: UnownedJob) {
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }

    /// Runs the jobs queued so far; those their tasks queue meanwhile wait for the next turn, so a
    /// task that keeps yielding cannot hold up the transfers.
    private func runJobs() {
        shared.withLock { shared in
            // Awake (as in `takeHandedOver`): a job's task that sends must never drive the turn.
            shared.polling = false
            swap(&jobBatch, &shared.jobs)
        }
        guard !jobBatch.isEmpty else { return }
        for queued in jobBatch { queued.job.runSynchronously(on: queued.executor) }
        jobBatch.removeAll(keepingCapacity: true)
    }

    /// Stops the loop: running and queued transfers fail with `.cancelled`. Returns once the loop
    /// thread has ended (at once when called from that thread).
    func stop() {
        shared.withLock { $0.stopping = true }
        watch?.wake()
        thread?.join()
    }

    // MARK: The driver (the loop thread, or a caller while the loop waits)

    /// The loop thread's kernel ID once it runs (Linux), for tests that watch it end.
    var loopThreadID: Int? { shared.withLock { $0.loopThreadID } }

    private func run() {
        guard let watch else { return }
        #if os(Linux)
        let id = runway_thread_id()
        shared.withLock { $0.loopThreadID = id }
        #endif
        var running: Int32 = 0
        driver.lock()
        defer { driver.unlock() }
        while true {
            // The jobs first: what their tasks send is started in this same turn.
            runJobs()
            let stop = takeHandedOver()
            runHandedOver()
            if stop { break }

            // New transfers set the timer to "now"; so do timeouts and transfers waiting
            // for a connection.
            if watch.takeExpiredTimer() {
                curl_multi_socket_action(handle, CURL_SOCKET_TIMEOUT, 0, &running)
                readCompletions()
            }
            if nextDeadline != .max, SocketWatch.now() >= nextDeadline { expireOverdue() }
            if heldCount > 0 { startHeld() }
            keepIdleConnections()
            // Block only when nothing was handed over meanwhile; from here on callers wake us,
            // or drive libcurl themselves while we wait (epoll).
            let idle = shared.withLock { shared in
                shared.polling =
                    shared.pending.isEmpty && shared.cancels.isEmpty && shared.resumes.isEmpty && shared.jobs.isEmpty && !shared.stopping
                    && !redriveLeft
                shared.quiet = active.isEmpty
                return shared.polling
            }
            if idle, watch.backend == .epoll {
                let timeout = watch.beginWait(upTo: waitLimit())
                driver.unlock()
                let count = watch.waitForEvents(timeout)
                shared.withLock { $0.polling = false }
                driver.lock()
                watch.endWait()
                watch.handleEvents(count, connectionsAreIdle: noTransferPaused, act)
            } else {
                watch.wait(upTo: idle ? waitLimit() : 0, connectionsAreIdle: noTransferPaused, act)
            }
            readCompletions()
            redriveHTTP2()
        }
        shutDown()
    }

    /// Hands a socket's readiness to libcurl, noting a readable one for ``redriveHTTP2()``.
    private func act(_ socket: Int32, _ readiness: Int32) {
        if readiness & CURL_CSELECT_IN != 0 { readSockets.append(socket) }
        var running: Int32 = 0
        curl_multi_socket_action(handle, socket, readiness, &running)
    }

    /// Hands the sockets read in this turn to libcurl as readable again, while that moves an
    /// HTTP/2 transfer still running.
    ///
    /// libcurl 7.88's HTTP/2 filter reads up to 32 KiB from a connection at a time, and hands a
    /// transfer at most its 16 KiB buffer of what it decoded per call: the rest of a larger header
    /// block, and the DATA after it, can stay in its buffers or OpenSSL's, with the socket no
    /// longer readable and no timer set. Nothing would then drive the transfer until the
    /// connection's next bytes, or its timeout.
    ///
    /// A round that gives a running transfer bytes calls for another. Inside a header section a
    /// round can move bytes unseen: libcurl hands on a header line once it has all of it, and a
    /// line has at most 100 KB (libcurl's limit; nghttp2's is 64 KiB), so up to
    /// ``unseenHeadRounds`` rounds in a row may show nothing there. Every small response ends in
    /// the turn it arrives, and costs nothing here. A transfer still moving after
    /// ``redriveRounds`` (a fast download) keeps the next turn from blocking, and is driven
    /// again there.
    private func redriveHTTP2() {
        defer {
            arrivals.clear()
            if !redriveLeft { readSockets.removeAll(keepingCapacity: true) }
        }
        guard redriveLeft || arrivals.transfers.contains(where: { $0.easy != nil }) else { return }
        redriveLeft = false
        var watched = arrivals.transfers.filter { $0.easy != nil }
        var misses = 0
        for _ in 0..<Self.redriveRounds {
            arrivals.clear()
            guard !readSockets.isEmpty else { return }
            var sockets = readSockets
            readSockets.removeAll(keepingCapacity: true)
            sockets.sort()
            var last: Int32 = -1
            for socket in sockets where socket != last {
                last = socket
                act(socket, CURL_CSELECT_IN)
            }
            readCompletions()
            var moved = false
            for transfer in arrivals.transfers where transfer.easy != nil {
                moved = true
                if !watched.contains(where: { $0 === transfer }) { watched.append(transfer) }
            }
            misses = moved ? 0 : misses + 1
            let insideHead = watched.contains { $0.easy != nil && $0.status != 0 && !$0.headerSectionEnded }
            if misses >= (insideHead ? Self.unseenHeadRounds : 1) { return }
        }
        redriveLeft = true
    }

    /// How many rounds ``redriveHTTP2()`` runs in one turn at most.
    private static let redriveRounds = 32
    /// How many rounds in a row may move a header section's bytes without a whole line: 100 KB
    /// in libcurl's 16 KiB buffer, and one more.
    private static let unseenHeadRounds = 8

    /// Swaps the shared queues with the driver's empty ones (both keep their storage); whether
    /// the dispatcher is stopping. The loop thread (`awake`) also marks itself not waiting; a
    /// caller driving while the loop waits leaves that as it is.
    private func takeHandedOver(awake: Bool = true) -> Bool {
        shared.withLock { shared in
            if awake { shared.polling = false }
            swap(&batch, &shared.pending)
            swap(&aborts, &shared.cancels)
            swap(&unpauses, &shared.resumes)
            return shared.stopping
        }
    }

    /// Starts the handed-over transfers, aborts the cancelled ones, unpauses the resumed ones.
    private func runHandedOver() {
        for transfer in batch {
            // `cancelRequested` is written under the lock by `cancel`; a cancel that comes
            // after this read is in `cancels` and handled on the next turn.
            if shared.withLock({ _ in transfer.cancelRequested }) {
                abandon(transfer, RunwayError(.cancelled, "cancelled before it started", neverSent: true))
            } else {
                start(transfer)
            }
        }
        batch.removeAll(keepingCapacity: true)
        for transfer in aborts {
            if let easy = transfer.easy, active[easy] === transfer {
                // Cancelled while it connected (no pre-transfer time, which libcurl sets as the
                // request is about to go and never clears): nothing was sent.
                var preTransfer: curl_off_t = 0
                runway_easy_getinfo_off_t(easy, CURLINFO_PRETRANSFER_TIME_T, &preTransfer)
                complete(easy, .failure(RunwayError(.cancelled, "cancelled", neverSent: preTransfer == 0)))
            } else if let origin = transfer.originCount, let index = origin.held.firstIndex(where: { $0 === transfer }) {
                origin.held.remove(at: index)
                heldCount -= 1
                abandon(transfer, RunwayError(.cancelled, "cancelled before it started", neverSent: true))
            }
        }
        aborts.removeAll(keepingCapacity: true)
        for transfer in unpauses {
            // Unpausing sets libcurl's timer to "now", so the transfer runs again this turn
            // (the write callback may take the chunk it kept right away, or pause again).
            if let easy = transfer.easy, active[easy] === transfer, transfer.paused || transfer.uploadPaused {
                transfer.paused = false
                transfer.uploadPaused = false
                // The idle clock stood while the caller's code held the transfer.
                if transfer.lastActivity != 0 { transfer.moved() }
                _ = runway_easy_unpause(easy)
            }
        }
        unpauses.removeAll(keepingCapacity: true)
    }

    /// Keeps `connectionCacheSize` *idle* connections, however many transfers are running.
    ///
    /// libcurl's `CURLMOPT_MAXCONNECTS` counts every open connection, busy or not, and closes
    /// the oldest idle one whenever a finished transfer brings the count over it: with more
    /// long requests in flight (long polls, downloads) than the limit, every short request
    /// would lose its connection as it finished and open a new one. So the limit follows the
    /// number of running transfers.
    private func keepIdleConnections() {
        let limit = max(1, configuration.connectionCacheSize) + active.count
        guard limit != connectionLimit else { return }
        connectionLimit = limit
        runway_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, limit)
    }

    /// Whether no running transfer is paused: then every connection socket libcurl does not watch
    /// is idle (see ``SocketWatch/handleEvents(_:connectionsAreIdle:_:)``).
    private func noTransferPaused() -> Bool {
        !active.values.contains { $0.paused || $0.uploadPaused }
    }

    /// Delivers the transfers libcurl reports done.
    private func readCompletions() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(handle, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = runway_msg_result(message)
            guard let transfer = active[easy] else { continue }
            var version = 0
            let multiplexed =
                runway_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK && version == CURL_HTTP_VERSION_2_0
            if multiplexed {
                // Its connection may hear from the server while idle (see `SocketWatch`).
                var socket = CURL_SOCKET_BAD
                if runway_easy_getinfo_socket(easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK { watch?.multiplexed(socket) }
            }
            if code == CURLE_OK, transfer.status != 0, let origin = transfer.originCount { origin.multiplexes = multiplexed }
            if transfer.streams {
                // Its caller left with the head: the body stream is ended from here.
                complete(easy, transfer.outcome(easy: easy, code: code))
            } else {
                active[easy] = nil
                curl_multi_remove_handle(handle, easy)
                left(transfer)
                transfer.easy = nil
                transfer.handOver(easy, code: code)
            }
        }
        if heldCount > 0 { startHeld() }
    }

    /// Whether `transfer` waits in Runway for one of its origin's connections rather than in
    /// libcurl: its origin has as many transfers running as `maxConnectionsPerHost` (or others
    /// held before it), and is not known to multiplex them on HTTP/2.
    ///
    /// libcurl 7.88 would keep it in the one queue it has for every host, and take only that
    /// queue's head when a transfer ends: a call to a host with free connections then waited
    /// behind every call queued for a busy one (a dead host, a slow API, long polls), and
    /// could time out unsent. Held here, each origin's calls wait for that origin alone.
    private func holdsBack(_ transfer: CurlTransfer) -> Bool {
        let limit = configuration.maxConnectionsPerHost
        guard limit > 0, let origin = transfer.originCount, !origin.multiplexes else { return false }
        return origin.running >= limit || !origin.held.isEmpty
    }

    /// Counts a transfer out of the multi handle; its origin's held transfers start in the
    /// driver's next ``startHeld()``.
    private func left(_ transfer: CurlTransfer) {
        if transfer.idleNanoseconds != nil {
            idleWatched -= 1
            if idleWatched == 0 { watch?.recordsActivity = false }
        }
        guard let origin = transfer.originCount else { return }
        transfer.originCount = nil
        origin.running -= 1
        // Forgotten once idle when many are remembered (an app may call a great many hosts).
        // The others stay: an app calls its few hosts again and again, and their entries (and
        // whether they multiplex) are then found rather than made anew for every call.
        if origin.running == 0, origin.held.isEmpty, origins.count > Self.originsKept {
            origins[transfer.origin] = nil
        }
    }

    /// How many idle origins are remembered.
    private static let originsKept = 64

    /// Starts the held transfers whose origin has a connection free, or has been found to
    /// multiplex (the head of one of its running transfers says HTTP/2, before any ends).
    private func startHeld() {
        let limit = configuration.maxConnectionsPerHost
        // Only the entries (objects) change below, not `origins` itself.
        for (key, origin) in origins where !origin.held.isEmpty {
            let (running, waiting) = (origin.running, origin.held.count)
            if !origin.multiplexes, running >= limit,
                active.values.contains(where: { $0.origin == key && $0.status != 0 && !$0.respondsOverHTTP1 })
            {
                origin.multiplexes = true
            }
            let count = origin.multiplexes ? waiting : min(waiting, max(0, limit - running))
            guard count > 0 else { continue }
            let starting = Array(origin.held.prefix(count))
            origin.held.removeFirst(count)
            heldCount -= count
            let now = SocketWatch.now()
            for transfer in starting {
                let deadline = Self.heldDeadline(transfer)
                if shared.withLock({ _ in transfer.cancelRequested }) {
                    abandon(transfer, RunwayError(.cancelled, "cancelled before it started", neverSent: true))
                } else if deadline <= now {
                    // Its timeout ran out while it waited: it is not sent now, late.
                    abandon(transfer, noConnectionInTime(transfer))
                } else {
                    // libcurl's timer starts when the handle is added: what is left of the timeout.
                    if deadline != .max, let easy = transfer.easy {
                        _ = runway_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(max(1, (deadline - now) / 1_000_000)))
                    }
                    add(transfer)
                }
            }
        }
    }

    /// Starts a handed-over transfer: adds it to the multi handle, where libcurl sends the
    /// request as soon as it has a connection (at once on a kept-alive one), or holds it back
    /// until its origin has one (``holdsBack(_:)``). Its deadline runs from now either way.
    private func start(_ transfer: CurlTransfer) {
        guard transfer.easy != nil else {
            transfer.finish(.failure(RunwayError(.transport, "the transfer was handed over without an easy handle")))
            return
        }
        if let timeout = transfer.timeoutNanoseconds {
            transfer.deadline = SocketWatch.now() &+ timeout &+ Self.deadlineGrace
            nextDeadline = min(nextDeadline, transfer.deadline)
        }
        if configuration.maxConnectionsPerHost > 0 {
            if let known = origins[transfer.origin] {
                transfer.originCount = known
            } else {
                let origin = OriginCount()
                origins[transfer.origin] = origin
                transfer.originCount = origin
            }
        }
        if holdsBack(transfer) {
            transfer.originCount?.held.append(transfer)
            heldCount += 1
            nextDeadline = min(nextDeadline, Self.heldDeadline(transfer))
        } else {
            add(transfer)
        }
    }

    /// Adds a transfer's handle to the multi handle.
    private func add(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy else { return }
        let code = curl_multi_add_handle(handle, easy)
        guard code == CURLM_OK else {
            abandon(
                transfer, RunwayError(.transport, "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))"))
            return
        }
        active[easy] = transfer
        transfer.arrivals = arrivals
        transfer.originCount?.running += 1
        // Its idle clock starts with its connection; the loop looks again an idle time from now.
        if let idle = transfer.idleNanoseconds {
            nextDeadline = min(nextDeadline, SocketWatch.now() &+ idle)
            idleWatched += 1
            watch?.recordsActivity = true
        }
    }

    /// Ends a transfer that never reached the multi handle, and frees its handle.
    private func abandon(_ transfer: CurlTransfer, _ error: RunwayError) {
        transfer.originCount = nil
        if let easy = transfer.easy {
            transfer.easy = nil
            transfer.releaseResources()
            Self.discard(easy)
        }
        transfer.finish(.failure(error))
    }

    /// The longest the loop waits: a second, or less to end an overdue transfer on time.
    private func waitLimit() -> Int32 {
        guard nextDeadline != .max else { return 1000 }
        let now = SocketWatch.now()
        guard nextDeadline > now else { return 0 }
        return Int32(min(1000, (nextDeadline - now) / 1_000_000 + 1))
    }

    /// Ends with `.timeout` the transfers past their deadline that libcurl has not ended (see
    /// ``deadlineGrace``), and finds the next deadline.
    private func expireOverdue() {
        let now = SocketWatch.now()
        var next = UInt64.max
        var overdue: [UnsafeMutableRawPointer] = []
        var idle: [UnsafeMutableRawPointer] = []
        for (easy, transfer) in active {
            if transfer.deadline <= now {
                overdue.append(easy)
                continue
            }
            next = min(next, transfer.deadline)
            guard let limit = transfer.idleNanoseconds else { continue }
            if transfer.lastActivity == 0 || transfer.paused || transfer.uploadPaused {
                // Still connecting (the connect timeout's), or held by the caller's code (a
                // reader that holds back, a producer with nothing yet): the clock stands.
                if transfer.lastActivity != 0 { transfer.lastActivity = now }
                next = min(next, now &+ limit)
            } else if now &- transfer.lastActivity >= limit {
                idle.append(easy)
            } else {
                next = min(next, transfer.lastActivity &+ limit)
            }
        }
        if heldCount > 0 {
            for origin in origins.values where !origin.held.isEmpty {
                let late = origin.held.filter { Self.heldDeadline($0) <= now }
                let waiting = origin.held.filter { Self.heldDeadline($0) > now }
                for transfer in waiting { next = min(next, Self.heldDeadline(transfer)) }
                guard !late.isEmpty else { continue }
                origin.held = waiting
                heldCount -= late.count
                for transfer in late { abandon(transfer, noConnectionInTime(transfer)) }
            }
        }
        if !idle.isEmpty { next = min(next, confirmIdle(&idle)) }
        nextDeadline = next
        for easy in overdue {
            guard let transfer = active[easy] else { continue }
            // Nothing was about to go (no pre-transfer time): it never had a connection.
            var preTransfer: curl_off_t = 0
            runway_easy_getinfo_off_t(easy, CURLINFO_PRETRANSFER_TIME_T, &preTransfer)
            let limit = transfer.request.options.timeout.map { "\($0)" } ?? "its timeout"
            let error =
                preTransfer == 0
                ? noConnectionInTime(transfer)
                : RunwayError(.timeout, "the transfer took longer than its timeout of \(limit) \(transfer.target)")
            complete(easy, .failure(error))
        }
        for easy in idle {
            guard let transfer = active[easy] else { continue }
            let limit = transfer.request.options.idleTimeout.map { "\($0)" } ?? "its idle timeout"
            complete(
                easy,
                .failure(
                    RunwayError(
                        .timeout, "nothing was sent or received for \(limit), the request's idle timeout \(transfer.target)")))
        }
    }

    /// Keeps in `idle` the transfers that are still idle once the bytes already waiting on their
    /// sockets are read, and returns when to look again at the others. The loop itself may have
    /// been held up past an idle timeout (a loaded machine, a long job on its executor) while the
    /// server kept sending: what waits unread moved in time, and the clock must not count the
    /// loop's own delay as the server's. Nor do bytes that made no callback go uncounted (part of
    /// a long header line, of a TLS record): a transfer whose socket was ready since its last
    /// callback moved then (``SocketWatch/lastReady(of:)``).
    private func confirmIdle(_ idle: inout [UnsafeMutableRawPointer]) -> UInt64 {
        guard let watch else { return .max }
        watch.wait(upTo: 0, connectionsAreIdle: noTransferPaused, act)
        readCompletions()
        let now = SocketWatch.now()
        var next = UInt64.max
        idle.removeAll { easy in
            guard let transfer = active[easy], let limit = transfer.idleNanoseconds else { return true }
            if transfer.paused || transfer.uploadPaused {
                transfer.lastActivity = now
                next = min(next, now &+ limit)
                return true
            }
            if let ready = watch.lastReady(of: easy), ready > transfer.lastActivity { transfer.lastActivity = ready }
            guard now &- transfer.lastActivity < limit else { return false }
            next = min(next, transfer.lastActivity &+ limit)
            return true
        }
        return next
    }

    /// The `.timeout` of a transfer that never had a connection.
    private func noConnectionInTime(_ transfer: CurlTransfer) -> RunwayError {
        let limit = transfer.request.options.timeout.map { "\($0)" } ?? "its timeout"
        return RunwayError(
            .timeout,
            "no connection was free or made within the timeout of \(limit) (every one this host may have, "
                + "maxConnectionsPerHost \(configuration.maxConnectionsPerHost), may be busy); nothing was sent \(transfer.target)",
            neverSent: true)
    }

    /// Removes a transfer from the multi handle and delivers its outcome.
    ///
    /// Removing an unfinished transfer closes its HTTP/1.1 connection or resets its HTTP/2
    /// stream, which is how a cancellation reaches the server.
    private func complete(_ easy: UnsafeMutableRawPointer, _ outcome: Result<Response, RunwayError>) {
        guard let transfer = active.removeValue(forKey: easy) else { return }
        curl_multi_remove_handle(handle, easy)
        left(transfer)
        transfer.easy = nil
        let result = transfer.settle(outcome)
        transfer.releaseResources()
        Self.discard(easy)
        transfer.finish(result)
    }

    /// Frees a handle out of the multi handle, without the transfer's error buffer (which may go
    /// first). Any thread: the handle has one owner at a time.
    static func discard(_ easy: UnsafeMutableRawPointer) {
        runway_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
        curl_easy_cleanup(easy)
    }

    private func shutDown() {
        let held = origins.values.flatMap(\.held)
        // A held transfer and its origin's entry point to each other.
        for origin in origins.values { origin.held = [] }
        origins = [:]
        heldCount = 0
        for transfer in held { abandon(transfer, RunwayError(.cancelled, "the dispatcher was shut down", neverSent: true)) }
        for easy in Array(active.keys) {
            complete(easy, .failure(RunwayError(.cancelled, "the dispatcher was shut down")))
        }
        let (leftovers, jobs) = shared.withLock { shared in
            let rest = (shared.pending, shared.jobs)
            shared.pending = []
            shared.cancels = []
            shared.resumes = []
            shared.jobs = []
            return rest
        }
        for transfer in leftovers {
            abandon(transfer, RunwayError(.cancelled, "the dispatcher was shut down", neverSent: true))
        }
        for queued in jobs { Self.runElsewhere(queued.job) }
        arrivals.clear()
        curl_multi_cleanup(handle)
    }
}

/// One origin's transfers in the loop (``CurlMulti``'s `origins`): a class, so that a transfer
/// keeps its origin's entry from its start to its end without hashing the origin again. The
/// driver's only, as are the transfers that point to it.
final class OriginCount {
    /// In the multi handle.
    var running = 0
    /// Waiting for one of the origin's connections, first come first.
    var held: [CurlTransfer] = []
    /// Whether it answered over HTTP/2 last: its transfers share connections, none is held back.
    var multiplexes = false
}

/// The transfers that took bytes from an HTTP/2 connection during the driver's current turn
/// (``CurlMulti``'s `redriveHTTP2()`). Added to by libcurl's callbacks, inside the driver's calls
/// into libcurl: the driver's only, as are the transfers that point to it.
final class HTTP2Arrivals {
    @exclusivity(unchecked) private(set) var transfers: [CurlTransfer] = []

    @inline(__always)
    func add(_ transfer: CurlTransfer) {
        transfer.arrived = true
        transfers.append(transfer)
    }

    func clear() {
        for transfer in transfers { transfer.arrived = false }
        transfers.removeAll(keepingCapacity: true)
    }
}

/// A job of a task that runs on the loop thread, and the executor it runs on.
struct LoopJob: Sendable {
    let job: UnownedJob
    let executor: UnownedTaskExecutor
}

/// `curl_global_init` once per process, before any handle exists.
enum CurlGlobal {
    private static let once: Void = {
        curl_global_init(Int(CURL_GLOBAL_ALL))
    }()

    static func initialize() {
        _ = once
    }
}
