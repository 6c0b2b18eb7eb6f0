import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sockets libcurl asks the loop to watch, the multi handle's timer, and the wait for
/// either (or a wake-up from another thread).
///
/// Driving the multi handle through `curl_multi_socket_action` rather than
/// `curl_multi_perform` + `curl_multi_poll` makes a turn of the loop cost what is ready, not
/// what is open: `curl_multi_perform` visits every transfer and checks each one's socket with
/// a `poll` call of its own, and `curl_multi_poll` rebuilds the descriptor list every turn.
/// Here libcurl reports the sockets it cares about as they change (``update(_:what:)``), the
/// loop waits on them (epoll on Linux, `poll(2)` elsewhere) and hands libcurl only the ready
/// ones, with their readiness, so it does not check them again.
///
/// On epoll a connection socket libcurl stops watching (an idle keep-alive connection) stays
/// registered until it closes (``closed(_:)``) or reports an event nobody wants: the next
/// request on that connection usually wants the same event again, so steady keep-alive traffic
/// makes no `epoll_ctl` calls at all. That is only safe for sockets whose opening and closing
/// the loop sees (libcurl's open- and close-socket callbacks, ``opened(_:)``); any other
/// socket libcurl reports (its resolver's wake-up pair) leaves the interest list at once, as
/// its number may be closed and reused unseen.
///
/// Used only by whoever drives libcurl (the loop thread, or a caller while the loop waits; see
/// ``CurlMulti``), apart from ``wake()``: libcurl calls the callbacks from inside the calls the
/// driver makes. `@unchecked Sendable` so that ``wake()`` can be called from any thread: it only
/// writes to a pipe that lives as long as this object.
final class SocketWatch: @unchecked Sendable {
    enum Backend: Sendable {
        /// epoll (Linux): the kernel keeps the interest list.
        case epoll
        /// `poll(2)` over the wanted sockets: every POSIX system.
        case poll

        static var platformDefault: Backend {
            #if os(Linux)
            .epoll
            #else
            .poll
            #endif
        }
    }

    let backend: Backend
    // The driver's state, as ``CurlMulti``'s: exclusivity is not checked at run time (one thread
    // at a time uses it, and no access to it spans a call into libcurl, whose callbacks update it).

    /// Per descriptor: the events libcurl wants (``inbound``/``outbound``), 0 for none.
    @exclusivity(unchecked) private var wanted: [UInt8] = []
    /// Per descriptor (epoll): the events registered with the kernel, ``registeredFlag`` if any.
    @exclusivity(unchecked) private var registered: [UInt8] = []
    /// Per descriptor: opened through ``opened(_:)``, so its close is seen too.
    @exclusivity(unchecked) private var connection: [Bool] = []
    /// Per descriptor: a connection that carried HTTP/2 (``multiplexed(_:)``), on which a server
    /// may send frames while no request runs.
    @exclusivity(unchecked) private var carriesHTTP2: [Bool] = []
    /// Per descriptor (poll): an idle connection socket that became ready, not polled again until
    /// libcurl watches it, or the number names another socket (``waitPoll(_:connectionsAreIdle:_:)``).
    @exclusivity(unchecked) private var idleReported: [Bool] = []
    /// Per descriptor: the easy handle libcurl last asked to watch it for (`nil` once it stops).
    @exclusivity(unchecked) private var owner: [UnsafeMutableRawPointer?] = []
    /// Per descriptor: when it was last handed to libcurl readable (``now()``'s nanoseconds),
    /// while ``recordsActivity``; 0 for never. Writable does not count: a socket stays writable
    /// while an HTTP/2 upload waits for a flow-control window that never opens, and bytes that
    /// do leave show in libcurl's callbacks (the read and progress callbacks).
    @exclusivity(unchecked) private var lastReady: [UInt64] = []
    /// Whether a wait notes when each socket was ready (``lastReady(of:)``): set by the driver
    /// while a running transfer has an idle timeout, so other traffic pays nothing for it.
    @exclusivity(unchecked) var recordsActivity = false
    /// When libcurl wants `CURL_SOCKET_TIMEOUT`, in `CLOCK_MONOTONIC` nanoseconds.
    @exclusivity(unchecked) private var deadline: UInt64?
    private let epollFD: Int32
    private let wakeReader: Int32
    private let wakeWriter: Int32
    // Reused between turns.
    @exclusivity(unchecked) private var readyFDs = [Int32](repeating: 0, count: 64)
    @exclusivity(unchecked) private var readyEvents = [UInt32](repeating: 0, count: 64)
    @exclusivity(unchecked) private var pollFDs: [pollfd] = []

    static let inbound: UInt8 = 1
    static let outbound: UInt8 = 2
    private static let registeredFlag: UInt8 = 0x80

    /// - Throws: when the system is out of descriptors.
    init(backend: Backend = .platformDefault) throws(RunwayError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw RunwayError(.transport, "cannot create the dispatcher's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeReader = fds[0]
        wakeWriter = fds[1]
        var selected = backend
        #if os(Linux)
        if backend == .epoll {
            epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
            if epollFD < 0 || runway_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeReader, EPOLLIN.rawValue) != 0 {
                selected = .poll
            }
        } else {
            epollFD = -1
        }
        #else
        epollFD = -1
        selected = .poll
        #endif
        self.backend = selected
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
        if epollFD >= 0 { close(epollFD) }
    }

    /// Makes a current or the next ``wait`` return at once. Any thread.
    func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up; nothing else can fail here.
        _ = write(wakeWriter, &byte, 1)
    }

    // MARK: What libcurl asks for (the driver, from inside libcurl's calls)

    /// libcurl's socket callback: watch `fd` for `what` (`CURL_POLL_IN`, `_OUT`, `_INOUT`), or
    /// stop (`CURL_POLL_REMOVE`), for the transfer on `easy`.
    func update(_ fd: Int32, what: Int32, easy: UnsafeMutableRawPointer? = nil) {
        guard fd >= 0 else { return }
        grow(to: fd)
        let index = Int(fd)
        let want: UInt8 = what == CURL_POLL_REMOVE ? 0 : UInt8(truncatingIfNeeded: what) & (Self.inbound | Self.outbound)
        wanted[index] = want
        owner[index] = want != 0 ? easy : nil
        if want != 0 { idleReported[index] = false }
        #if os(Linux)
        if backend == .epoll {
            if want != 0 {
                register(fd, want)
            } else if registered[index] != 0, !connection[index] {
                _ = runway_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0)
                registered[index] = 0
            }
        }
        #endif
    }

    /// libcurl opened `fd` for a connection (through the open-socket callback): whatever was
    /// registered under that number before is gone with the socket that had it.
    func opened(_ fd: Int32) {
        guard fd >= 0 else { return }
        grow(to: fd)
        let index = Int(fd)
        wanted[index] = 0
        registered[index] = 0
        connection[index] = true
        carriesHTTP2[index] = false
        idleReported[index] = false
        owner[index] = nil
        lastReady[index] = 0
    }

    /// The connection on `fd` carried an HTTP/2 response: bytes on it while it is idle are frames
    /// of its own (a ping, settings), not a response nobody asked for.
    func multiplexed(_ fd: Int32) {
        guard fd >= 0, Int(fd) < carriesHTTP2.count else { return }
        carriesHTTP2[Int(fd)] = true
    }

    /// libcurl closed `fd` (through the close-socket callback): forget it before the number
    /// is reused.
    func closed(_ fd: Int32) {
        guard fd >= 0, Int(fd) < wanted.count else { return }
        let index = Int(fd)
        wanted[index] = 0
        #if os(Linux)
        if registered[index] != 0 { _ = runway_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0) }
        #endif
        registered[index] = 0
        connection[index] = false
        carriesHTTP2[index] = false
        idleReported[index] = false
        owner[index] = nil
        lastReady[index] = 0
    }

    /// When a socket libcurl watches for the transfer on `easy` was last handed to it readable, as
    /// recorded while ``recordsActivity``; `nil` when none was, or when its connection is known
    /// to carry HTTP/2 (another stream's frames would count as this transfer's).
    ///
    /// Bytes that end no line or record (a long header line, a TLS record, a chunk's size coming
    /// slowly) reach libcurl without any callback of the transfer's: this is how the idle timeout
    /// sees them move. Only the driver's slow path asks, so it looks through every descriptor.
    func lastReady(of easy: UnsafeMutableRawPointer) -> UInt64? {
        var latest: UInt64?
        for index in owner.indices where owner[index] == easy && lastReady[index] != 0 && !carriesHTTP2[index] {
            latest = max(latest ?? 0, lastReady[index])
        }
        return latest
    }

    /// libcurl's timer callback: call `CURL_SOCKET_TIMEOUT` in `milliseconds` (0: at once),
    /// or never (-1).
    func setTimer(milliseconds: Int) {
        deadline = milliseconds < 0 ? nil : Self.now() &+ UInt64(milliseconds) &* 1_000_000
    }

    /// Whether the timer has run out; clears it (libcurl sets the next one as it runs).
    func takeExpiredTimer() -> Bool {
        guard let deadline, deadline <= Self.now() else { return false }
        self.deadline = nil
        return true
    }

    // MARK: Waiting (the loop thread)

    /// Waits up to `limit` milliseconds (0: just looks), less if the timer runs out sooner,
    /// and calls `ready` with each wanted socket that is ready and its `CURL_CSELECT_*` bits.
    func wait(upTo limit: Int32, connectionsAreIdle: () -> Bool, _ ready: (Int32, Int32) -> Void) {
        let timeout = timeout(upTo: limit)
        #if os(Linux)
        if backend == .epoll {
            handleEvents(waitForEvents(timeout), connectionsAreIdle: connectionsAreIdle, ready)
            return
        }
        #endif
        waitPoll(timeout, connectionsAreIdle: connectionsAreIdle, ready)
    }

    /// `limit` milliseconds, or less if the timer runs out sooner.
    private func timeout(upTo limit: Int32) -> Int32 {
        guard limit != 0, let deadline else { return limit }
        let now = Self.now()
        return deadline <= now ? 0 : Int32(clamping: min(Int64(limit), Int64((deadline - now + 999_999) / 1_000_000)))
    }

    // MARK: Waiting while callers drive (epoll)
    //
    // The loop thread lets go of libcurl while it blocks (``CurlMulti``): a caller may then add
    // its transfer and run libcurl itself. epoll sees the sockets such a caller registers during
    // the wait; the timer it changes is checked against the wait's end (``timerEndsBeforeWait()``).

    /// When the loop's blocking wait ends at the latest (`CLOCK_MONOTONIC` nanoseconds), from
    /// ``beginWait(upTo:)`` to ``endWait()``.
    @exclusivity(unchecked) private var waitEnd: UInt64?

    /// The timeout of a wait of up to `limit` milliseconds, remembered as the wait's end.
    func beginWait(upTo limit: Int32) -> Int32 {
        let timeout = timeout(upTo: limit)
        waitEnd = Self.now() &+ UInt64(max(0, timeout)) &* 1_000_000
        return timeout
    }

    /// The loop drives libcurl again.
    func endWait() {
        waitEnd = nil
    }

    /// Whether libcurl's timer runs out before the loop's current wait ends: a caller that drove
    /// libcurl meanwhile then wakes the loop, so the timer is not missed.
    func timerEndsBeforeWait() -> Bool {
        guard let waitEnd, let deadline else { return false }
        return deadline < waitEnd
    }

    /// Whether `time` (``now()``'s nanoseconds) comes before the loop's current wait ends.
    func endsBeforeWait(_ time: UInt64) -> Bool {
        guard let waitEnd else { return false }
        return time < waitEnd
    }

    #if os(Linux)
    private func register(_ fd: Int32, _ want: UInt8) {
        let index = Int(fd)
        let have = registered[index]
        guard have != want | Self.registeredFlag else { return }
        let events = Self.epollEvents(want)
        if have != 0 {
            if runway_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events) != 0, errno == ENOENT {
                _ = runway_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events)
            }
        } else if runway_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events) != 0, errno == EEXIST {
            _ = runway_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events)
        }
        registered[index] = want | Self.registeredFlag
    }

    private static func epollEvents(_ want: UInt8) -> UInt32 {
        (want & inbound != 0 ? EPOLLIN.rawValue : 0) | (want & outbound != 0 ? EPOLLOUT.rawValue : 0)
    }

    /// Blocks in `epoll_wait` up to `timeout` milliseconds; the events stay in this object's
    /// buffers, which only the loop thread uses, for ``handleEvents(_:connectionsAreIdle:_:)``.
    /// Touches nothing else, so the loop calls it without holding libcurl.
    func waitForEvents(_ timeout: Int32) -> Int {
        let count = readyFDs.withUnsafeMutableBufferPointer { fds in
            readyEvents.withUnsafeMutableBufferPointer { events in
                runway_epoll_wait(epollFD, fds.baseAddress, events.baseAddress, Int32(fds.count), timeout)
            }
        }
        return Int(max(0, count))
    }

    /// Calls `ready` for each of the `count` events ``waitForEvents(_:)`` kept whose socket is
    /// still wanted. A socket a caller closed meanwhile is not wanted; one opened since under the
    /// same number may get a readiness it does not have, which libcurl reads as nothing to do.
    ///
    /// A connection socket libcurl does not watch is idle in its connection cache, or a paused
    /// transfer's. One that becomes readable while `connectionsAreIdle` says no transfer is
    /// paused is idle, and a byte on an idle HTTP/1 connection is one nobody asked for: libcurl
    /// 7.88 reuses such a connection and reads those bytes as the next request's response (and
    /// every later response as the one before's). The connection is ended (``discardIfUnasked(_:)``).
    func handleEvents(_ count: Int, connectionsAreIdle: () -> Bool, _ ready: (Int32, Int32) -> Void) {
        guard count > 0 else { return }
        let now = recordsActivity ? Self.now() : 0
        for i in 0..<count {
            let fd = readyFDs[i]
            let events = readyEvents[i]
            if fd == wakeReader {
                drainWakeups()
                continue
            }
            let index = Int(fd)
            guard index < wanted.count, wanted[index] != 0 else {
                // Left registered when libcurl stopped watching it, and now readable (the
                // server closed the idle connection) or writable: stop hearing about it.
                _ = runway_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0)
                if index < registered.count { registered[index] = 0 }
                if index < connection.count, connection[index], !carriesHTTP2[index], events & EPOLLIN.rawValue != 0,
                    connectionsAreIdle()
                {
                    discardIfUnasked(fd)
                }
                continue
            }
            var mask: Int32 = 0
            if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue) != 0 { mask |= CURL_CSELECT_IN }
            if events & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
            if events & EPOLLERR.rawValue != 0 { mask |= CURL_CSELECT_ERR }
            if now != 0, mask & CURL_CSELECT_IN != 0 { lastReady[index] = now }
            ready(fd, mask)
        }
    }

    #endif

    /// `poll(2)` over the wanted sockets and the idle connection sockets, which are handled as
    /// on epoll (``handleEvents(_:connectionsAreIdle:_:)``): an idle one is polled until it
    /// becomes ready once, and bytes nobody asked for end its connection.
    private func waitPoll(_ timeout: Int32, connectionsAreIdle: () -> Bool, _ ready: (Int32, Int32) -> Void) {
        pollFDs.removeAll(keepingCapacity: true)
        pollFDs.append(pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0))
        for index in wanted.indices {
            let want = wanted[index]
            if want != 0 {
                let events = (want & Self.inbound != 0 ? Int16(POLLIN) : 0) | (want & Self.outbound != 0 ? Int16(POLLOUT) : 0)
                pollFDs.append(pollfd(fd: Int32(index), events: events, revents: 0))
            } else if connection[index], !carriesHTTP2[index], !idleReported[index] {
                pollFDs.append(pollfd(fd: Int32(index), events: Int16(POLLIN), revents: 0))
            }
        }
        let count = pollFDs.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
        guard count > 0 else { return }
        let now = recordsActivity ? Self.now() : 0
        if pollFDs[0].revents != 0 { drainWakeups() }
        for entry in pollFDs.dropFirst() where entry.revents != 0 {
            let index = Int(entry.fd)
            guard wanted[index] != 0 else {
                // Idle (or dropped by libcurl during an earlier callback of this turn): not
                // handed back; a connection socket is not polled again until libcurl wants it.
                if connection[index], !idleReported[index] {
                    idleReported[index] = true
                    if !carriesHTTP2[index], entry.revents & Int16(POLLIN) != 0, connectionsAreIdle() { discardIfUnasked(entry.fd) }
                }
                continue
            }
            var mask: Int32 = 0
            if entry.revents & Int16(POLLIN | POLLHUP) != 0 { mask |= CURL_CSELECT_IN }
            if entry.revents & Int16(POLLOUT) != 0 { mask |= CURL_CSELECT_OUT }
            if entry.revents & Int16(POLLERR | POLLNVAL) != 0 { mask |= CURL_CSELECT_ERR }
            if now != 0, mask & CURL_CSELECT_IN != 0 { lastReady[index] = now }
            ready(entry.fd, mask)
        }
    }

    /// Ends the idle connection on `fd` if bytes wait on it (at its end, the server closed it,
    /// which libcurl finds itself). The descriptor stays libcurl's: it is made to name a socket
    /// at its end, which libcurl's check before reusing a connection finds closed, so libcurl
    /// closes it and opens another. The TCP connection goes with the old socket.
    private func discardIfUnasked(_ fd: Int32) {
        var byte: UInt8 = 0
        guard recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0 else { return }
        var pair: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else {
            // No descriptor left for the pair: the server still learns of it, and sends no more.
            _ = shutdown(fd, Int32(SHUT_RDWR))
            return
        }
        close(pair[1])
        if dup2(pair[0], fd) >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        close(pair[0])
    }
    private func drainWakeups() {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &buffer, { read(wakeReader, $0.baseAddress, $0.count) }) > 0 {}
    }

    private func grow(to fd: Int32) {
        let needed = Int(fd) + 1
        guard needed > wanted.count else { return }
        let size = max(needed, wanted.count * 2, 64)
        wanted.append(contentsOf: repeatElement(0, count: size - wanted.count))
        registered.append(contentsOf: repeatElement(0, count: size - registered.count))
        connection.append(contentsOf: repeatElement(false, count: size - connection.count))
        carriesHTTP2.append(contentsOf: repeatElement(false, count: size - carriesHTTP2.count))
        idleReported.append(contentsOf: repeatElement(false, count: size - idleReported.count))
        owner.append(contentsOf: repeatElement(nil, count: size - owner.count))
        lastReady.append(contentsOf: repeatElement(0, count: size - lastReady.count))
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

// MARK: C callbacks

let curlSocketCallback: runway_socket_callback = { easy, fd, what, user, _ in
    guard let user else { return 0 }
    Unmanaged<SocketWatch>.fromOpaque(user).takeUnretainedValue().update(fd, what: what, easy: easy)
    return 0
}

let curlTimerCallback: runway_timer_callback = { _, milliseconds, user in
    guard let user else { return 0 }
    Unmanaged<SocketWatch>.fromOpaque(user).takeUnretainedValue().setTimer(milliseconds: milliseconds)
    return 0
}

let curlOpenSocketCallback: runway_opensocket_callback = { user, purpose, address in
    guard purpose == CURLSOCKTYPE_IPCXN, let address else { return CURL_SOCKET_BAD }
    #if os(Linux)
    let fd = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    #else
    let fd = socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    #endif
    guard fd >= 0 else { return CURL_SOCKET_BAD }
    if let user { Unmanaged<SocketWatch>.fromOpaque(user).takeUnretainedValue().opened(fd) }
    return fd
}

let curlCloseSocketCallback: runway_closesocket_callback = { user, fd in
    if let user { Unmanaged<SocketWatch>.fromOpaque(user).takeUnretainedValue().closed(fd) }
    return close(fd)
}
