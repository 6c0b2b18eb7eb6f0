import Foundation

/// An nginx started for the benchmarks on 127.0.0.1, with a test CA and certificate made by
/// `openssl`: plain HTTP/1.1 on one port, TLS with HTTP/1.1 and HTTP/2 (ALPN) on another.
///
/// Endpoints: `/json` (a 300-byte JSON), `/gzip` (a 64 KiB JSON served gzip-compressed), and
/// on the plain port `/post` (any method; the body is read and dropped, a small JSON answers).
public final class Nginx: Sendable {
    public let directory: URL
    public let plainPort: Int
    public let tlsPort: Int
    public let caFile: String
    private let process: Process

    static let jsonBody: String = {
        let head = #"{"id":42,"title":"Two-bedroom flat near the river","price":5200,"currency":"CNY","city":"sh","kind":"rent","area":68.5,"rooms":2,"tags":["metro","south"],"pad":""#
        return head + String(repeating: "x", count: max(0, 300 - head.utf8.count - 2)) + "\"}"
    }()

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-bench-nginx-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("www"), withIntermediateDirectories: true)
        plainPort = Self.freePort()
        tlsPort = Self.freePort()
        let d = directory.path
        try Self.shell("""
            cd \(d) && \
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=RunwayBenchCA 2>/dev/null && \
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null && \
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && \
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext 2>/dev/null
            """)
        caFile = "\(d)/ca.pem"
        try Data(Self.jsonBody.utf8).write(to: directory.appendingPathComponent("www/json"))
        var big = "["
        var i = 0
        while big.utf8.count < 64 * 1024 - 400 {
            big += (i == 0 ? "" : ",") + #"{"id":\#(i),"title":"Listing \#(i)","price":\#(1000 + i * 7),"city":"sh"}"#
            i += 1
        }
        big += "]"
        try Data(big.utf8).write(to: directory.appendingPathComponent("www/gzip"))
        try Self.shell("cd \(d)/www && gzip -k -9 gzip")
        let config = """
            worker_processes 1;
            daemon off;
            error_log \(d)/error.log warn;
            pid \(d)/nginx.pid;
            events { worker_connections 4096; }
            http {
                access_log off;
                client_body_temp_path \(d)/tmp;
                proxy_temp_path \(d)/tmp;
                fastcgi_temp_path \(d)/tmp;
                uwsgi_temp_path \(d)/tmp;
                scgi_temp_path \(d)/tmp;
                keepalive_requests 1000000;
                keepalive_timeout 120s;
                default_type application/json;
                gzip_static on;
                server {
                    listen 127.0.0.1:\(plainPort) backlog=4096;
                    root \(d)/www;
                    location = /post { return 200 '{"ok":true}'; }
                }
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2 backlog=4096;
                    ssl_certificate \(d)/server.pem;
                    ssl_certificate_key \(d)/server.key;
                    http2_max_concurrent_streams 1000;
                    root \(d)/www;
                }
            }
            """
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        try Data(config.utf8).write(to: directory.appendingPathComponent("nginx.conf"))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", d, "-c", "\(d)/nginx.conf"]
        try process.run()
        try Self.waitForPort(plainPort)
        try Self.waitForPort(tlsPort)
    }

    public func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    public var plainURL: String { "http://127.0.0.1:\(plainPort)" }
    public var tlsURL: String { "https://127.0.0.1:\(tlsPort)" }

    private static func shell(_ command: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw NSError(domain: "nginx-setup", code: Int(p.terminationStatus)) }
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func waitForPort(_ port: Int) throws {
        for _ in 0..<200 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if ok == 0 { return }
            usleep(20_000)
        }
        throw NSError(domain: "nginx did not start", code: port)
    }
}
