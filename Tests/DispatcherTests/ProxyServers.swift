import Foundation
import RunwayTestServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A proxy server the tests run as a process of its own on 127.0.0.1: `tinyproxy` (HTTP and
/// `CONNECT`), `danted` (SOCKS5) or a small SOCKS5 server with username authentication in Python
/// (``socks5WithAuth(user:password:)``), each with its configuration and log in a temporary
/// directory, on a free port, stopped by ``stop()``.
final class ProxyProcess: Sendable {
    /// The port it listens on, on 127.0.0.1.
    let port: Int
    let directory: URL
    let logFile: URL
    private let process: ChildProcess

    private init(port: Int, directory: URL, logFile: URL, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.logFile = logFile
        self.process = process
    }

    /// The log as written so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits until the log holds `text` (proxies write a line per connection, a moment after it).
    func logEventually(contains text: String) async -> Bool {
        await eventually { log.contains(text) }
    }

    /// `tinyproxy` in the foreground, with `BasicAuth` when `credentials` are given. It adds a
    /// `Via` header to the requests it forwards, and logs every request and `CONNECT`.
    static func tinyproxy(credentials: (user: String, password: String)? = nil) async throws -> ProxyProcess {
        let binary = try requireExecutable("tinyproxy", in: ["/usr/bin", "/usr/sbin", "/usr/local/bin"])
        return try await start(name: "tinyproxy") { port, directory, log in
            var config = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 30
                LogFile "\(log.path)"
                LogLevel Connect
                MaxClients 50
                Allow 127.0.0.1

                """
            if let credentials { config += "BasicAuth \(credentials.user) \(credentials.password)\n" }
            let file = directory.appendingPathComponent("tinyproxy.conf")
            try config.write(to: file, atomically: true, encoding: .utf8)
            return [binary, "-d", "-c", file.path]
        }
    }

    /// `danted` (Dante) as a SOCKS5 proxy without authentication, logging each connection it
    /// makes. Its username method checks the system's users (PAM or passwd), which a test cannot
    /// add to without changing the machine; ``socks5WithAuth(user:password:)`` covers that.
    static func dante() async throws -> ProxyProcess {
        let binary = try requireExecutable("danted", in: ["/usr/sbin", "/usr/bin", "/usr/local/sbin"])
        return try await start(name: "danted") { port, directory, log in
            let config = """
                logoutput: \(log.path)
                internal: 127.0.0.1 port = \(port)
                external: 127.0.0.1
                socksmethod: none
                clientmethod: none
                client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 log: error connect }
                socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 log: error connect }

                """
            let file = directory.appendingPathComponent("danted.conf")
            try config.write(to: file, atomically: true, encoding: .utf8)
            return [binary, "-f", file.path, "-p", directory.appendingPathComponent("danted.pid").path]
        }
    }

    /// A SOCKS5 server (RFC 1928) that accepts only username/password authentication (RFC 1929)
    /// with `user` and `password`, in Python's standard library. It logs `auth ok <user>` or
    /// `auth refused <user>` and `connect <domain|ipv4|ipv6> <host> <port>` per connection, so a
    /// test sees whether the name was resolved by the client or sent to the proxy.
    static func socks5WithAuth(user: String, password: String) async throws -> ProxyProcess {
        let python = try requireExecutable("python3", in: ["/usr/bin", "/usr/local/bin"])
        return try await start(name: "socks5-auth") { port, directory, log in
            let script = directory.appendingPathComponent("socks5_auth.py")
            try socks5Script.write(to: script, atomically: true, encoding: .utf8)
            return [python, script.path, String(port), log.path, user, password]
        }
    }

    /// A TLS front for another proxy (an "HTTPS proxy"), in Python's standard library: it takes
    /// TLS on its port with `identity`'s certificate and relays the bytes inside to 127.0.0.1:
    /// `upstream`. It logs `tls ok` per handshake and `tls refused <reason>` when a client does
    /// not complete one (it did not trust the certificate).
    static func tlsFront(to upstream: Int, identity: TestPKI.Identity) async throws -> ProxyProcess {
        let python = try requireExecutable("python3", in: ["/usr/bin", "/usr/local/bin"])
        return try await start(name: "tls-front") { port, directory, log in
            let script = directory.appendingPathComponent("tls_front.py")
            try tlsFrontScript.write(to: script, atomically: true, encoding: .utf8)
            return [python, script.path, String(port), String(upstream), identity.certificatePath, identity.privateKeyPath, log.path]
        }
    }

    /// Stops it and removes its directory. SIGKILL: Dante's children leave with it.
    func stop() async {
        process.signal(SIGKILL)
        _ = await process.waitForExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes the configuration `arguments` makes, starts the command (its first element) and
    /// waits until it listens on its port. The port is free when chosen, but tests run in
    /// parallel and another one's server may take it before the proxy does: a proxy that exits
    /// without listening is started again on another port (three tries). Listening is checked
    /// as the proxy's own socket (``holdsListener(_:port:)``), not as a port that accepts
    /// connections: that could be the other test's server, which answers a SOCKS greeting with
    /// HTTP.
    private static func start(
        name: String, arguments: (_ port: Int, _ directory: URL, _ log: URL) throws -> [String]
    ) async throws -> ProxyProcess {
        var said = ""
        for _ in 1...3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-\(name)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let log = directory.appendingPathComponent("\(name).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let port = try freePort()
            let command = try arguments(port, directory, log)
            let output = directory.appendingPathComponent("\(name).out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let handle = try FileHandle(forWritingTo: output)
            let process = try ChildProcess(
                command[0], Array(command.dropFirst()), standardOutput: .file(handle), standardError: .file(handle))
            try handle.close()
            let proxy = ProxyProcess(port: port, directory: directory, logFile: log, process: process)
            let pid = process.processIdentifier
            // Seen once is enough: `/proc/net/tcp` is read a page at a time while parallel tests
            // open and close sockets, so a second read can miss the line the first one found.
            var listening = false
            _ = await eventually {
                listening = holdsListener(pid, port: port)
                return listening || !process.isRunning
            }
            if listening { return proxy }
            said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            let exited = !process.isRunning
            await proxy.stop()
            guard exited else { throw ProxyProcessError("\(name) did not start listening on 127.0.0.1:\(port): \(said)") }
        }
        throw ProxyProcessError("\(name) exited three times without listening: \(said)")
    }
}

/// Runs `body` with a started proxy, stopped after it whatever happens.
func withProxy<T>(_ proxy: ProxyProcess, _ body: (ProxyProcess) async throws -> T) async throws -> T {
    do {
        let result = try await body(proxy)
        await proxy.stop()
        return result
    } catch {
        await proxy.stop()
        throw error
    }
}

struct ProxyProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The path of `name` in one of `directories`, or an error saying how to install it: a test that
/// needs a proxy fails without it, it is never skipped.
func requireExecutable(_ name: String, in directories: [String]) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map(String.init) ?? []
    for directory in directories + path {
        let candidate = directory + "/" + name
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw ProxyProcessError("\(name) is not installed: run scripts/install-deps.sh (it installs tinyproxy, dante-server and python3)")
}

/// A TCP port on 127.0.0.1 that nothing listens on now (bound, then let go at once).
func freePort() throws -> Int {
    try RefusingPort().port
}

/// Runs `body` with a TCP port on 127.0.0.1 that refuses connections all along (``RefusingPort``).
/// A port from ``freePort()`` would not do: tests run in parallel, and another one's server or
/// proxy may take it meanwhile.
func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let held = try RefusingPort()
    defer { withExtendedLifetime(held) {} }
    return try await body(held.port)
}

/// Whether process `pid` holds a TCP socket listening on `port` (Linux: `/proc/net/tcp` names the
/// listening socket's inode, `/proc/PID/fd` the sockets the process holds).
func holdsListener(_ pid: pid_t, port: Int) -> Bool {
    guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return false }
    let suffix = String(format: ":%04X", port)
    var sockets: Set<String> = []
    for line in table.split(separator: "\n").dropFirst() {
        // sl, local address, remote address, state (0A: listening), ..., inode (the tenth field).
        let fields = line.split(separator: " ")
        guard fields.count > 9, fields[3] == "0A", fields[1].hasSuffix(suffix) else { continue }
        sockets.insert("socket:[\(fields[9])]")
    }
    let descriptors = "/proc/\(pid)/fd"
    guard !sockets.isEmpty, let names = try? FileManager.default.contentsOfDirectory(atPath: descriptors) else { return false }
    return names.contains { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name)).map(sockets.contains) ?? false
    }
}

/// The SOCKS5 server of ``ProxyProcess/socks5WithAuth(user:password:)``: arguments port, log
/// file, user, password. One thread per connection; it relays bytes both ways once connected.
private let socks5Script = #"""
    import socket, struct, sys, threading

    port, log_path, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
    lock = threading.Lock()

    def log(line):
        with lock, open(log_path, "a") as f:
            f.write(line + "\n")

    def read(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise EOFError()
            data += chunk
        return data

    def pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def handle(conn):
        try:
            version, count = read(conn, 2)
            methods = read(conn, count)
            if version != 5 or 2 not in methods:
                log("auth none-offered")
                conn.sendall(b"\x05\xff")
                return
            conn.sendall(b"\x05\x02")
            _, ulen = read(conn, 2)
            name = read(conn, ulen)
            plen = read(conn, 1)[0]
            secret = read(conn, plen)
            if name != user or secret != password:
                log("auth refused " + name.decode(errors="replace"))
                conn.sendall(b"\x01\x01")
                return
            log("auth ok " + name.decode(errors="replace"))
            conn.sendall(b"\x01\x00")
            _, command, _, atyp = read(conn, 4)
            if atyp == 1:
                kind, host = "ipv4", socket.inet_ntop(socket.AF_INET, read(conn, 4))
            elif atyp == 3:
                kind, host = "domain", read(conn, read(conn, 1)[0]).decode()
            elif atyp == 4:
                kind, host = "ipv6", socket.inet_ntop(socket.AF_INET6, read(conn, 16))
            else:
                return
            target_port = struct.unpack("!H", read(conn, 2))[0]
            log("connect %s %s %d" % (kind, host, target_port))
            try:
                upstream = socket.create_connection((host, target_port), timeout=10)
                upstream.settimeout(None)
            except OSError:
                conn.sendall(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
                return
            conn.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + struct.pack("!H", upstream.getsockname()[1]))
            threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()
            pipe(conn, upstream)
        except (EOFError, OSError):
            pass
        finally:
            conn.close()

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=handle, args=(connection,), daemon=True).start()
    """#

private let tlsFrontScript = #"""
    import socket
    import ssl
    import sys
    import threading

    port, upstream, certificate, key, log_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    lock = threading.Lock()


    def log(line):
        with lock, open(log_path, "a") as f:
            f.write(line + "\n")


    def relay(source, target):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
        except OSError:
            pass
        # Either side's end ends the connection: a client must not keep one whose proxy left.
        for side in (source, target):
            try:
                side.close()
            except OSError:
                pass


    def handle(client):
        try:
            secure = context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError) as error:
            log("tls refused %s" % error)
            client.close()
            return
        log("tls ok")
        backend = socket.create_connection(("127.0.0.1", upstream))
        threading.Thread(target=relay, args=(backend, secure), daemon=True).start()
        relay(secure, backend)


    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=handle, args=(connection,), daemon=True).start()
    """#
