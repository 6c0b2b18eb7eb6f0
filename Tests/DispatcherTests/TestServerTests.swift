import Foundation
import RunwayTestServer
import Testing

/// The test server itself, checked with the `curl` command line as an independent client:
/// TLS with the test CA, HTTP/2 through ALPN, the SPKI pin format, and the counters.
@Suite("Test server")
struct TestServerTests {
    @Test("TLS with the test CA negotiates HTTP/2, and the pin matches libcurl's")
    func tlsAndHTTP2() async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.server) { server in
            let output = try await curl([
                "--cacert", pki.caCertificatePath, "--pinnedpubkey", pki.serverKeyPin,
                "-w", "\n%{http_version}", server.url("/echo", hostName: "localhost").absoluteString,
            ])
            let lines = output.split(separator: "\n")
            #expect(lines.last == "2")
            let echo = try JSONDecoder().decode(EchoResponse.self, from: Data(lines.dropLast().joined(separator: "\n").utf8))
            #expect(echo.http2)
            #expect(server.stats.http2Requests == 1)

            let http1 = try await curl([
                "--http1.1", "--cacert", pki.caCertificatePath, "-w", "%{http_version}", "-o", "/dev/null",
                server.url("/json").absoluteString,
            ])
            #expect(http1 == "1.1")
            #expect(server.stats.connectionsAccepted == 2)

            await #expect(throws: CurlFailure.self) {
                try await curl(["--cacert", pki.caCertificatePath, "--pinnedpubkey", pki.otherKeyPin, server.url("/json").absoluteString])
            }
        }
    }

    @Test("a client that gives up on /slow is recorded as an abort, over HTTP/1.1 and HTTP/2")
    func abortsAreObserved() async throws {
        let pki = try await TestPKI.load()
        for http2 in [false, true] {
            try await withTestServer(tls: pki.server) { server in
                // The client goes away once the server has the request (a time limit on curl
                // raced its start-up and handshake on a loaded machine).
                let client = try ChildProcess(
                    "/usr/bin/env",
                    [
                        "curl", "-sS", http2 ? "--http2" : "--http1.1", "--cacert", pki.caCertificatePath,
                        server.url("/slow?ms=600000").absoluteString,
                    ], standardOutput: .null, standardError: .null)
                #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 }, "http2: \(http2)")
                client.signal(SIGKILL)
                #expect(await client.waitForExit() == .signalled(SIGKILL))
                #expect(await server.waitForAbort())
                #expect(server.stats.aborts(path: "/slow") == 1)
            }
        }
    }

    @Test("custom routes, the response delay and a second loopback address")
    func customRoutes() async throws {
        let routes: TestServer.Routes = { router in
            router.get("/token") { _, _ in "fresh-token" }
        }
        try await withTestServer(host: "127.0.0.2", responseDelay: .milliseconds(200), routes: routes) { server in
            #expect(server.baseURL.absoluteString == "http://127.0.0.2:\(server.port)")
            let start = ContinuousClock.now
            let body = try await curl([server.url("/token").absoluteString])
            #expect(body == "fresh-token")
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            #expect(server.stats.requests(path: "/token") == 1)
        }
    }

    @Test("the test CA's files are in place and the pins differ")
    func pki() async throws {
        let pki = try await TestPKI.load()
        #expect(pki.serverKeyPin.hasPrefix("sha256//"))
        #expect(pki.serverKeyPin != pki.otherKeyPin)
        #expect(try TestPKI.shared().directory == pki.directory)
        #expect(FileManager.default.fileExists(atPath: pki.otherName.certificatePath))
        for path in [pki.caCertificatePath, pki.server.certificatePath, pki.ipOnly.privateKeyPath] {
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }
}

/// `curl` exited with a non-zero status.
struct CurlFailure: Error {
    let exit: ChildProcess.Exit
}

/// Runs the `curl` command line silently, on a thread outside Swift's cooperative pool (the
/// in-process server needs that pool to answer), and returns what it printed.
@discardableResult
func curl(_ arguments: [String]) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try runCurl(arguments) })
        }
    }
}

private func runCurl(_ arguments: [String]) throws -> String {
    let curl = try ChildProcess("/usr/bin/env", ["curl", "-sS"] + arguments, standardOutput: .pipe, standardError: .null)
    let data = curl.standardOutput.map(readToEnd) ?? Data()
    let exit = curl.waitForExitBlocking()
    guard case .exited(0) = exit else { throw CurlFailure(exit: exit) }
    return String(decoding: data, as: UTF8.self)
}
