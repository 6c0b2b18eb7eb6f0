import CCurl
import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// The libcurl dispatcher's loop with many transfers open at once, on both ways it waits
/// (epoll, `poll(2)`), counted by the server.
@Suite("libcurl loop")
struct CurlLoopTests {
    static let backends: [SocketWatch.Backend] = [.epoll, .poll]

    @Test("the platform's loop waits with epoll on Linux")
    func platformBackend() {
        #if os(Linux)
        #expect(CurlDispatcher().socketBackend == .epoll)
        #else
        #expect(CurlDispatcher().socketBackend == .poll)
        #endif
    }

    @Test("idle connections are kept for reuse however many long transfers are running", arguments: backends)
    func idleConnectionsSurviveLongTransfers(_ backend: SocketWatch.Backend) async throws {
        // libcurl's own cache limit counts busy connections too: with more long transfers
        // than the limit, each short request used to close its connection as it finished.
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 0, connectionCacheSize: 2), socketBackend: backend)
        try await withTestServer { server in
            // Long enough that the short ones finish first even on a loaded two-core machine (4 s was not).
            let long = makeRequest(server.url("/delay?ms=30000"))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await dispatcher.dispatch(long, context: RequestContext()).status }
                }
                #expect(await server.stats.wait { $0.requests(path: "/delay") == 6 })
                let short = makeRequest(server.url("/json"))
                for _ in 0..<30 {
                    #expect(try await dispatcher.dispatch(short, context: RequestContext()).status == 200)
                }
                // The six long ones and one for all the short ones.
                #expect(server.stats.connectionsAccepted == 7)
                for try await status in group { #expect(status == 200) }
            }
        }
    }

    @Test("short requests complete while 200 long ones stay open", arguments: backends)
    func manyOpenTransfers(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 0), socketBackend: backend)
        try await withTestServer { server in
            // A chunk every 100 ms: 200 connections of 10-ms chunks (60,000 writes in 3 s) kept the
            // in-process server from starting them all within a minute under the thread sanitizer.
            let long = makeRequest(server.url("/slow?ms=3000&every=100"))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await dispatcher.dispatch(long, context: RequestContext()).body.count }
                }
                // Generous: 200 connections under the thread sanitizer on a loaded machine take seconds.
                #expect(await server.stats.wait(timeout: .seconds(60)) { $0.requests(path: "/slow") == 200 })
                let short = makeRequest(server.url("/json"))
                for _ in 0..<200 {
                    #expect(try await dispatcher.dispatch(short, context: RequestContext()).status == 200)
                }
                for try await count in group { #expect(count == 30 * 64) }
            }
            #expect(server.stats.aborts == 0)
        }
    }

    /// libcurl 7.88 keeps one queue of transfers waiting for a connection, for every host, and
    /// takes only its head when a transfer ends: a call to a host with free connections waited
    /// behind those queued for a full one (a dead host, a slow API, long polls), and timed out
    /// unsent. Each host's calls now wait only for that host's connections.
    @Test("calls waiting for a busy host's connections never hold up calls to another host", arguments: backends)
    func busyHostDoesNotHoldUpAnother(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 2), socketBackend: backend)
        let blackhole = try BlackholeListener.start()
        try await withTestServer { slow in
            try await withTestServer { healthy in
                // Host A never connects, host B answers in 30 s: each has 2 calls running, 10 waiting.
                let waiting = Task {
                    await withTaskGroup { group in
                        for _ in 0..<12 {
                            group.addTask {
                                _ = try? await dispatcher.dispatch(makeRequest(blackhole.url("/json")), context: RequestContext())
                            }
                            group.addTask {
                                _ = try? await dispatcher.dispatch(makeRequest(slow.url("/delay?ms=30000")), context: RequestContext())
                            }
                        }
                    }
                }
                #expect(await slow.stats.wait { $0.requests(path: "/delay") == 2 })
                let json = makeRequest(healthy.url("/json")) { $0.timeout = .seconds(25) }
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await dispatcher.dispatch(json, context: RequestContext()).status }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                #expect(healthy.stats.requests(path: "/json") == 20)
                #expect(healthy.stats.connectionsAccepted <= 2)
                #expect(slow.stats.requests(path: "/delay") == 2)
                waiting.cancel()
                await waiting.value
            }
        }
    }

    @Test("after calls to more hosts than the loop remembers, a busy host's waiting calls still hold up no other", arguments: backends)
    func limitsHoldPastManyHosts(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 1), socketBackend: backend)
        try await withTestServer { busy in
            try await withTestServer { many in
                try await withTestServer { other in
                    // The busy host's one connection stays taken by a long call, to the end (it is
                    // cancelled there): under the thread sanitizer on a loaded machine, the rest
                    // took over 30 s, and a call that had ended let the waiting ones go.
                    let long = Task {
                        _ = try? await dispatcher.dispatch(
                            makeRequest(busy.url("/delay?ms=600000")) { $0.timeout = nil }, context: RequestContext())
                    }
                    #expect(await busy.stats.wait { $0.requests(path: "/delay") == 1 })
                    // Calls to 80 other origins, one after another: the loop forgets idle origins past 64.
                    for index in 0..<80 {
                        let host = "h\(index).runway.test"
                        let url = try #require(URL(string: "http://\(host):\(many.port)/json"))
                        let request = makeRequest(url) {
                            $0.connectOverrides = [ConnectOverride(host: host, connectHost: "127.0.0.1")]
                        }
                        #expect(try await dispatcher.dispatch(request, context: RequestContext()).status == 200)
                    }
                    #expect(many.stats.requests(path: "/json") == 80)
                    // More calls to the busy host: they wait for its connection. Had the loop lost
                    // its count of them, libcurl would queue them in the one queue it has for every
                    // host, and a call another host has to wait for would wait behind them.
                    let waiting = Task {
                        await withTaskGroup { group in
                            for _ in 0..<4 {
                                group.addTask {
                                    _ = try? await dispatcher.dispatch(
                                        makeRequest(busy.url("/json")) { $0.timeout = .seconds(40) }, context: RequestContext())
                                }
                            }
                        }
                    }
                    let otherLong = Task {
                        try await dispatcher.dispatch(makeRequest(other.url("/delay?ms=500")), context: RequestContext()).status
                    }
                    #expect(await other.stats.wait { $0.requests(path: "/delay") == 1 })
                    let next = makeRequest(other.url("/json")) { $0.timeout = .seconds(20) }
                    #expect(try await dispatcher.dispatch(next, context: RequestContext()).status == 200)
                    #expect(try await otherLong.value == 200)
                    #expect(other.stats.connectionsAccepted == 1)
                    #expect(busy.stats.requests(path: "/json") == 0)
                    waiting.cancel()
                    long.cancel()
                    await waiting.value
                    await long.value
                }
            }
        }
    }

    @Test("sockets closed under the loop and their numbers reused never stall it", arguments: backends)
    func closedAndReusedSockets(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(socketBackend: backend)
        // Every reset closes a connection; the next request opens one, usually with the same
        // descriptor number. Interleaved with keep-alive requests on another server whose idle
        // connection stays open the whole time.
        // A stalled loop never sees the socket again: the request times out. Two minutes, as the
        // thread sanitizer and the 200 slow transfers of the test beside this one can keep the
        // in-process servers from answering for more than ten seconds.
        try await withTestServer { resetting in
            try await withTestServer { steady in
                let reset = makeRequest(resetting.url("/reset")) { $0.timeout = .seconds(120) }
                let json = makeRequest(steady.url("/json")) { $0.timeout = .seconds(120) }
                for _ in 0..<40 {
                    let error = await runwayError { try await dispatcher.dispatch(reset, context: RequestContext()) }
                    #expect(error?.code == .connectionLost)
                    let status = try await dispatcher.dispatch(json, context: RequestContext()).status
                    #expect(status == 200)
                }
                #expect(resetting.stats.connectionsAccepted == 40)
                #expect(steady.stats.connectionsAccepted == 1)
            }
        }
    }

    @Test("an idle connection the server closed is noticed and replaced", arguments: backends)
    func serverClosesIdleConnection(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(socketBackend: backend)
        let port: Int
        do {
            let server = try await TestServer.start()
            port = server.port
            #expect(try await dispatcher.dispatch(makeRequest(server.url("/json")), context: RequestContext()).status == 200)
            // Shutting down closes the idle keep-alive connection the loop still has.
            await server.shutdown()
        }
        try await withTestServer { other in
            for _ in 0..<20 {
                let status = try await dispatcher.dispatch(makeRequest(other.url("/json")), context: RequestContext()).status
                #expect(status == 200)
            }
            #expect(other.stats.connectionsAccepted == 1)
        }
        let gone = makeRequest(URL(string: "http://127.0.0.1:\(port)/json")!)
        let error = await runwayError { try await dispatcher.dispatch(gone, context: RequestContext()) }
        #expect(error?.code == .cannotConnect)
    }

    @Test("the loop runs on a thread of its own named runway.curl, which has ended when the dispatcher's release returns")
    func loopThread() async throws {
        #if os(Linux)
        var dispatcher: CurlDispatcher? = CurlDispatcher()
        var id: Int?
        for _ in 0..<3000 where id == nil {
            id = dispatcher?.loopThreadID
            if id == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let thread = "/proc/self/task/\(try #require(id))"
        #expect((try? String(contentsOfFile: thread + "/comm", encoding: .utf8)) == "runway.curl\n")
        let status = try await withTestServer { server in
            try await dispatcher?.dispatch(makeRequest(server.url("/json")), context: RequestContext()).status
        }
        #expect(status == 200)
        dispatcher = nil
        // Gone when the release returns, not later: a process may exit right after, and a loop
        // thread still ending then would free OpenSSL's per-thread state while exit frees the rest.
        #expect(!FileManager.default.fileExists(atPath: thread))
        #endif
    }
}

/// ``SocketWatch`` against a socket pair: what it reports, and what it stops reporting.
@Suite("libcurl loop: socket watch")
struct SocketWatchTests {
    /// A connected pair of stream sockets; `[0]` is watched, `[1]` writes to it.
    private func socketPair() throws -> [Int32] {
        var fds: [Int32] = [-1, -1]
        #if os(Linux)
        let type = Int32(SOCK_STREAM.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return fds
    }

    /// `idle`: whether the loop would say no transfer is paused (unwatched sockets are idle).
    private func ready(_ watch: SocketWatch, within milliseconds: Int32 = 200, idle: Bool = false) -> [Int32: Int32] {
        var seen: [Int32: Int32] = [:]
        let isIdle = { idle }
        watch.wait(upTo: milliseconds, connectionsAreIdle: isIdle) { fd, readiness in seen[fd, default: 0] |= readiness }
        return seen
    }

    private func send(_ fd: Int32) {
        var byte: UInt8 = 1
        #expect(write(fd, &byte, 1) == 1)
    }

    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = read(fd, &buffer, buffer.count)
    }

    @Test("a readable socket is reported once wanted, and not after", arguments: CurlLoopTests.backends)
    func reportsWhatIsWanted(_ backend: SocketWatch.Backend) throws {
        let watch = try SocketWatch(backend: backend)
        let pair = try socketPair()
        defer { for fd in pair { close(fd) } }
        watch.opened(pair[0])
        send(pair[1])
        #expect(ready(watch, within: 0).isEmpty)
        watch.update(pair[0], what: CURL_POLL_IN)
        #expect(ready(watch)[pair[0]] == CURL_CSELECT_IN)
        // Left registered after libcurl stops watching: a readable socket is not handed over.
        watch.update(pair[0], what: CURL_POLL_REMOVE)
        #expect(ready(watch, within: 0).isEmpty)
        // Watching it again (after the unwanted event took it off epoll) reports it again.
        watch.update(pair[0], what: CURL_POLL_IN)
        #expect(ready(watch)[pair[0]] == CURL_CSELECT_IN)
        drain(pair[0])
        #expect(ready(watch, within: 0).isEmpty)
        watch.update(pair[0], what: CURL_POLL_INOUT)
        #expect(ready(watch)[pair[0]] == CURL_CSELECT_OUT)
    }

    @Test("bytes arriving on an idle connection end it; on a paused transfer's or an HTTP/2 one they are left alone (epoll)")
    func unaskedBytesEndAnIdleConnection() throws {
        #if os(Linux)
        for (idle, http2) in [(true, false), (false, false), (true, true)] {
            let watch = try SocketWatch(backend: .epoll)
            let pair = try socketPair()
            defer { for fd in pair { close(fd) } }
            watch.opened(pair[0])
            if http2 { watch.multiplexed(pair[0]) }
            // A response read, then libcurl stops watching the connection.
            watch.update(pair[0], what: CURL_POLL_IN)
            send(pair[1])
            #expect(ready(watch)[pair[0]] == CURL_CSELECT_IN)
            drain(pair[0])
            watch.update(pair[0], what: CURL_POLL_REMOVE)
            // The server writes on the connection nobody uses.
            send(pair[1])
            #expect(ready(watch, idle: idle).isEmpty)
            var byte: UInt8 = 0
            let peeked = recv(pair[0], &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            // Ended: the descriptor now reads as a connection at its end, which libcurl's check
            // before reusing it finds closed. Otherwise the byte is still there to read.
            #expect(peeked == (idle && !http2 ? 0 : 1), "idle: \(idle), HTTP/2: \(http2)")
        }
        #endif
    }

    @Test("a socket registered during a wait is reported by it, and a timer set then that ends sooner is seen (epoll)")
    func driversChangesDuringAWait() throws {
        #if os(Linux)
        let watch = try SocketWatch(backend: .epoll)
        let pair = try socketPair()
        defer { for fd in pair { close(fd) } }
        // What a caller driving libcurl while the loop waits does: the wait is already under way.
        let timeout = watch.beginWait(upTo: 1000)
        #expect(timeout == 1000)
        #expect(!watch.timerEndsBeforeWait())
        watch.setTimer(milliseconds: 5000)
        #expect(!watch.timerEndsBeforeWait())
        watch.setTimer(milliseconds: 0)
        #expect(watch.timerEndsBeforeWait())
        watch.setTimer(milliseconds: -1)
        #expect(!watch.timerEndsBeforeWait())
        // Another thread registers a socket (and makes it readable) while this one blocks.
        let (socket, writer) = (pair[0], pair[1])
        let driver = Thread {
            usleep(50_000)
            watch.opened(socket)
            watch.update(socket, what: CURL_POLL_IN)
            var byte: UInt8 = 1
            _ = write(writer, &byte, 1)
        }
        driver.start()
        let started = ContinuousClock.now
        var seen: [Int32: Int32] = [:]
        let isIdle = { false }
        watch.handleEvents(watch.waitForEvents(timeout), connectionsAreIdle: isIdle) { fd, readiness in seen[fd, default: 0] |= readiness }
        watch.endWait()
        #expect(seen[socket] == CURL_CSELECT_IN)
        #expect(ContinuousClock.now - started < .milliseconds(900))
        watch.setTimer(milliseconds: 0)
        #expect(!watch.timerEndsBeforeWait())  // no wait under way
        #endif
    }

    @Test("a descriptor number closed and reused is watched afresh", arguments: CurlLoopTests.backends)
    func reusedNumbers(_ backend: SocketWatch.Backend) throws {
        let watch = try SocketWatch(backend: backend)
        // `dup2` puts a new socket on the old number at once (closing the old one), as the
        // system does when it hands out the lowest free number, without racing other threads.

        // A connection socket: opened and closed through libcurl's callbacks.
        let first = try socketPair()
        let number = first[0]
        watch.opened(number)
        watch.update(number, what: CURL_POLL_IN)
        watch.update(number, what: CURL_POLL_REMOVE)
        watch.closed(number)
        let second = try socketPair()
        #expect(dup2(second[0], number) == number)
        close(second[0])
        watch.opened(number)
        watch.update(number, what: CURL_POLL_IN)
        send(second[1])
        #expect(ready(watch)[number] == CURL_CSELECT_IN)
        watch.update(number, what: CURL_POLL_REMOVE)
        watch.closed(number)

        // A socket libcurl never opened through the callback (its resolver's pair) is closed
        // unseen: dropping it leaves epoll at once, so its number is clean for the next one.
        let third = try socketPair()
        #expect(dup2(third[0], number) == number)
        close(third[0])
        watch.update(number, what: CURL_POLL_IN)
        watch.update(number, what: CURL_POLL_REMOVE)
        let fourth = try socketPair()
        #expect(dup2(fourth[0], number) == number)
        close(fourth[0])
        watch.update(number, what: CURL_POLL_IN)
        send(fourth[1])
        #expect(ready(watch)[number] == CURL_CSELECT_IN)
        for fd in [number, first[1], second[1], third[1], fourth[1]] { close(fd) }
    }

    @Test("the timer and wake-ups end a wait early", arguments: CurlLoopTests.backends)
    func timerAndWake(_ backend: SocketWatch.Backend) throws {
        let watch = try SocketWatch(backend: backend)
        watch.setTimer(milliseconds: 0)
        #expect(watch.takeExpiredTimer())
        #expect(!watch.takeExpiredTimer())
        watch.setTimer(milliseconds: -1)
        #expect(!watch.takeExpiredTimer())

        let clock = ContinuousClock()
        watch.setTimer(milliseconds: 50)
        // Bounds far from both the timer (50 ms) and the wait's own limit (two minutes), for a
        // busy machine.
        let timed = clock.measure { _ = ready(watch, within: 120_000) }
        #expect(timed < .seconds(60))
        #expect(watch.takeExpiredTimer())

        watch.wake()
        let woken = clock.measure { _ = ready(watch, within: 120_000) }
        #expect(woken < .seconds(60))
        // The wake-up is used up: the next wait sleeps its time.
        let slept = clock.measure { _ = ready(watch, within: 100) }
        #expect(slept >= .milliseconds(90))
    }

}

/// Requests one after another on one dispatcher, each with other options: nothing of one
/// request's options may reach the next (each gets an easy handle of its own).
@Suite("libcurl easy handles")
struct EasyHandleReuseTests {
    /// Each request gets an easy handle of its own, and libcurl keeps TLS sessions per handle
    /// unless the handles share a cache, as the dispatcher's do: a new connection to a host then
    /// resumes the session of an earlier one (an abbreviated handshake).
    @Test("a new connection to a host resumes the TLS session of an earlier one")
    func tlsSessionsAreResumed() async throws {
        let pki = try await TestPKI.load()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Scripts/tls_resumption_server.py")
        let server = try await PythonServer.start(script, [pki.server.certificatePath, pki.server.privateKeyPath])
        defer { server.stop() }
        let dispatcher = CurlDispatcher()
        var answers: [String] = []
        for _ in 0..<4 {
            // The server closes each connection, so every request makes a new one.
            let request = makeRequest(URL(string: "https://127.0.0.1:\(server.port)/")!) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
            }
            answers.append(String(decoding: try await dispatcher.dispatch(request, context: RequestContext()).body, as: UTF8.self))
        }
        #expect(answers == ["new", "resumed", "resumed", "resumed"])
    }

    @Test func nothingOfOneRequestsOptionsReachesTheNext() async throws {
        let dispatcher = CurlDispatcher()
        func send(_ request: Request) async throws -> Response {
            try await dispatcher.dispatch(request, context: RequestContext())
        }
        let pki = try await TestPKI.load()
        try await withTestServer { server in
            // A POST, then GETs: the method and body do not stay.
            let post = try decodeEcho(try await send(makeRequest(.post, server.url("/echo"), body: Data("a=1".utf8))))
            #expect(post.method == "POST" && post.body == "a=1")
            for _ in 0..<3 {
                let get = try decodeEcho(try await send(makeRequest(server.url("/echo"))))
                #expect(get.method == "GET" && get.bodyLength == 0)
            }
            // The same options again: a second POST gets its own body.
            let again = try decodeEcho(try await send(makeRequest(.post, server.url("/echo"), body: Data("b=22".utf8))))
            #expect(again.method == "POST" && again.body == "b=22")
            // HEAD, then GET: the body comes back.
            #expect(try await send(makeRequest(.head, server.url("/json"))).body.isEmpty)
            #expect(try await send(makeRequest(server.url("/json"))).body == TestServer.fixedJSON)
            // Redirects followed once, then not.
            let followed = try await send(makeRequest(server.url("/redirect/1")) { $0.redirects = .follow(max: 3) })
            #expect(followed.status == 200)
            #expect(try await send(makeRequest(server.url("/redirect/1"))).status == 302)
            // A short timeout, then the default.
            let slow = await runwayError { try await send(makeRequest(server.url("/slow?ms=2000")) { $0.timeout = .milliseconds(100) }) }
            #expect(slow?.code == .timeout)
            #expect(try await send(makeRequest(server.url("/slow?ms=50"))).status == 200)
        }
        try await withTestServer(tls: pki.server) { server in
            // Verification off for one request; the next, with default options, must verify
            // (and fail: the test CA is not trusted by default).
            let unverified = try await send(makeRequest(server.url("/json")) { $0.tls.verifyPeer = false })
            #expect(unverified.status == 200)
            let verified = await runwayError { try await send(makeRequest(server.url("/json"))) }
            #expect(verified?.code == .tls)
            // A custom CA for one request; the next without it must fail again.
            let trusted = try await send(makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) })
            #expect(trusted.status == 200)
            #expect(await runwayError { try await send(makeRequest(server.url("/json"))) }?.code == .tls)
            // Equal TLS settings keep the handle's options: the CA twice, then pinned to the
            // server's key; a pin to another key must fail even though the CA is the same, and the
            // CA alone then passes again (the failed pin did not stay).
            func withCA(_ pins: [String] = []) -> Request {
                makeRequest(server.url("/json")) {
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    $0.tls.pinnedPublicKeys = pins
                }
            }
            for _ in 0..<2 { #expect(try await send(withCA()).status == 200) }
            for _ in 0..<2 { #expect(try await send(withCA([pki.serverKeyPin])).status == 200) }
            #expect(await runwayError { try await send(withCA([pki.otherKeyPin])) }?.code == .tls)
            #expect(try await send(withCA()).status == 200)
            // A CA in memory, twice; the next request without it must fail (the CA did not stay).
            let pem = try Data(contentsOf: URL(fileURLWithPath: pki.caCertificatePath))
            let inMemory = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .pem(pem) }
            for _ in 0..<2 { #expect(try await send(inMemory).status == 200) }
            #expect(await runwayError { try await send(makeRequest(server.url("/json"))) }?.code == .tls)
        }
    }
}
