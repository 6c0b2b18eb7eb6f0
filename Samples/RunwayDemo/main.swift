import Foundation
import Runway
import RunwayCurl
import RunwayTestServer

// The main job until the HouseHunter sample lands: start an embedded server (plain HTTP/1.1 and
// TLS with HTTP/2), send requests through an interceptor chain and the libcurl dispatcher, and
// print what happened with per-phase timings.

/// Stamps every request with the app's user agent and a call ID.
struct UserAgent: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        request.headers["User-Agent"] = "runway-demo/1.0"
        request.headers["X-Call-ID"] = String(context.callID)
        return try await next(request, context)
    }
}

/// Prints one line per call on the way back: status, size, origin, timings.
struct PrintTimings: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        do {
            let response = try await next(request, context)
            print("  \(request.method) \(request.url.path) → \(response.status), \(response.body.count) bytes")
            print("    \(response.metrics)")
            return response
        } catch let error as RunwayError {
            print("  \(request.method) \(request.url.path) → \(error)")
            throw error
        }
    }
}

func step(_ title: String) { print("\n== \(title)") }

let pki = try await TestPKI.shared()
let plain = try await TestServer.start()
let secure = try await TestServer.start(tls: pki.server, http2: true)
print("embedded server: \(plain.baseURL.absoluteString) and \(secure.baseURL.absoluteString) (HTTP/2 over TLS)")
print("libcurl \(CurlDispatcher.libcurlVersion)")

let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
    UserAgent()
    PrintTimings()
}
var tls = RequestOptions()
tls.tls.certificateAuthorities = .file(pki.caCertificatePath)

step("three calls on one keep-alive connection (HTTP/1.1)")
for _ in 0..<3 {
    _ = try await pipeline.send(Request(url: plain.url("/json")))
}

step("HTTP/2 over TLS: the first call pays for TCP + TLS, the next reuse the connection")
for _ in 0..<2 {
    _ = try await pipeline.send(Request(url: secure.url("/json"), options: tls))
}

step("50 concurrent calls multiplexed over HTTP/2")
let before = secure.stats.connectionsAccepted
let started = ContinuousClock.now
let silent = Pipeline(interceptors: [UserAgent()], dispatcher: pipeline.dispatcher)
try await withThrowingTaskGroup(of: Int.self) { group in
    for _ in 0..<50 { group.addTask { try await silent.send(Request(url: secure.url("/json"), options: tls)).status } }
    var ok = 0
    for try await status in group where status == 200 { ok += 1 }
    print("  \(ok)/50 succeeded in \(ContinuousClock.now - started), new connections: \(secure.stats.connectionsAccepted - before)")
}

step("gzip is decompressed transparently")
_ = try await pipeline.send(Request(url: plain.url("/gzip/65536")))

step("what goes wrong is a typed error naming the stage")
var short = RequestOptions()
short.timeout = .milliseconds(200)
_ = try? await pipeline.send(Request(url: plain.url("/slow?ms=2000"), options: short))
_ = try? await pipeline.send(Request(url: secure.url("/json")))  // no CA given: untrusted
var small = RequestOptions()
small.maxResponseSize = 1024
_ = try? await pipeline.send(Request(url: plain.url("/bytes/100000"), options: small))

await plain.shutdown()
await secure.shutdown()
print("\ndone")
