// The standard chain as an app registers it, shared by Runway's benchmark clients (BenchRunway's
// `chain`, `manager` and `one:<name>` modes, and BenchOpenAPI's `runway` mode).
import FoundationEssentials
import Logging
import Runway
import RunwayCache
import RunwayCompression
import RunwayDNSBypass
import RunwayLogging
import RunwayMetrics
import RunwaySigning
import RunwayTracing

/// The API name of the benchmarked calls.
public let benchAPIName = "bench.items"

/// The README's chain: logging at .warning, validation with one response rule, a cache in which
/// the API is not cached, retry, compression, HMAC signing, the DNS bypass.
public let standardChain = ["logging", "validation", "cache", "retry", "compression", "signing", "dns-bypass"]

/// The DNS bypass of the chain: `host` goes to 127.0.0.1, probed once before the run.
func bypass(_ host: String) async throws -> DNSBypassInterceptor {
    let bypass = try DNSBypass(.init(hosts: [host: ["127.0.0.1"]], fallsBackToDNS: false))
    await bypass.start()
    return .dnsBypass(bypass)
}

/// Each standard interceptor as an app registers it, in `DefaultOrder`; `nil` for an unknown name.
public func interceptor(_ name: String, bypassHost: String) async throws -> (any Interceptor)? {
    switch name {
    case "tracing": return TracingInterceptor.tracing()
    case "metrics": return try MetricsInterceptor.metrics()
    case "logging":
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        return .logging(logger)
    case "cookies":
        // A signed-in session: one cookie for every host the benchmark sends to.
        let jar = CookieJar()
        for host in [bypassHost, "localhost", "127.0.0.1"] {
            jar.store(setCookie: ["session=4f1c2b7e9a0d4c3b8e6f5a2d1c0b9e8f; Path=/; HttpOnly"], from: URL(string: "http://\(host)/")!)
        }
        return .cookies(jar)
    case "validation":
        return try .validation([benchAPIName: try APIValidation(response: ResponseRule(contentType: "application/json"))])
    case "cache":
        // A cache with policies for other APIs: the benchmarked one is not cached.
        return try ResponseCache(policies: ["bench.other": .memory()]).interceptor
    case "retry": return try .retry(maxAttempts: 3)
    case "compression": return try .compression(threshold: 1024)
    case "signing": return try .signing(secret: "bench-secret-0123456789abcdef", keyID: "bench")
    case "dns-bypass": return try await bypass(bypassHost)
    default: return nil
    }
}
