import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Routes requests for bypassed hosts to the best known address, failing over to the next
/// when a connection cannot be made.
///
/// For a request whose host the ``DNSBypass`` knows, each attempt adds a
/// `ConnectOverride(host:port:connectHost:connectPort:)`: the dispatcher connects to the
/// address but keeps the host name for SNI, the `Host` header and certificate verification
/// (libcurl's `CURLOPT_CONNECT_TO`), so a certificate that does not name the host is still
/// rejected. When the connection fails (`.cannotConnect` with `RunwayError.neverSent`, or
/// `.timeout` from the connect phase) the address is demoted and the next one is tried; each address gets
/// ``DNSBypass/Configuration/perAddressConnectTimeout`` and all of them together stay within
/// the request's `RequestOptions.connectTimeout`. Nothing was sent on a failed connection,
/// so failing over is safe for every method and needs no new signature. Other errors (TLS,
/// a lost connection, any response) end the failover. Hosts the bypass does not know pass
/// through untouched.
///
/// A request that follows redirects (`RequestOptions.redirects`) also carries an override for
/// every other bypassed host, to its best address: a redirect from one bypassed host to another
/// (`api.` to `cdn.`) connects where the bypass says, never by DNS, without failing over there.
/// A redirect from a host the bypass does not know is resolved by DNS.
///
/// ## Where it belongs
/// Last before the dispatcher, after retry and signing (see `DefaultOrder`): each retry
/// re-enters it and picks the best address still alive, and a failover reuses the signature,
/// which the server never saw.
public struct DNSBypassInterceptor: PerAttemptInterceptor {
    /// The shared address table.
    public let bypass: DNSBypass

    /// `"dns-bypass"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "dns-bypass" }

    /// Creates the interceptor for a bypass.
    public init(_ bypass: DNSBypass) {
        self.bypass = bypass
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        guard let urlHost = request.url.host else { return try await next(request, context) }
        // `api.test.` (fully qualified) is the host `api.test`: same addresses, same demotions.
        let host = DNSBypass.key(urlHost)
        let candidates = bypass.endpoints(forKey: host)
        guard !candidates.isEmpty else { return try await next(request, context) }

        let clock = ContinuousClock()
        // The clock read once per attempt, as it starts: the budget's start for the first.
        var started = clock.now
        // The options read out of the request once (each read copies them).
        let original = request.options
        let budgetEnd = started + original.connectTimeout
        // Where a followed redirect to another bypassed host connects; the request's own
        // overrides for such a host win.
        let elsewhere =
            original.redirects.maxRedirects > 0
            ? redirectOverrides(except: host).filter { other in
                !original.connectOverrides.contains { DNSBypass.key($0.host) == other.host }
            } : []
        var lastFailure: (any Error)?
        for (index, endpoint) in candidates.enumerated() {
            if index > 0 { started = clock.now }
            let remaining = budgetEnd - started
            guard remaining > .zero else { break }
            let isLast = index == candidates.count - 1
            // The options changed once and set once: each change through `attempt.options` would
            // copy them out of the request and back.
            var options = original
            options.connectTimeout = isLast ? remaining : min(remaining, bypass.configuration.perAddressConnectTimeout)
            // For the name as the URL writes it (trailing dot and all; libcurl matches overrides
            // against that, ignoring case). The request's own overrides for this host, however
            // spelt, give way.
            let override = ConnectOverride(host: urlHost, port: request.url.port, connectHost: endpoint.address, connectPort: endpoint.port)
            options.connectOverrides =
                options.connectOverrides.isEmpty
                ? [override] : [override] + options.connectOverrides.filter { DNSBypass.key($0.host) != host }
            options.connectOverrides += elsewhere
            var attempt = request
            attempt.options = options
            do {
                return try await next(attempt, context)
            } catch {
                guard Self.isConnectFailure(error, elapsed: clock.now - started, options: options) else { throw error }
                bypass.demote(endpoint, of: host)
                lastFailure = error
            }
        }
        if bypass.configuration.fallsBackToDNS {
            guard !elsewhere.isEmpty else { return try await next(request, context) }
            var fallback = request
            fallback.options.connectOverrides += elsewhere
            return try await next(fallback, context)
        }
        throw lastFailure
            ?? RunwayError(
                .cannotConnect, "no address of \(host) could be reached within the connect timeout", stage: .interceptor(name),
                neverSent: true)
    }

    /// An override for each bypassed host but `key`, to its best address, for any port (each
    /// host in its `DNSBypass.key(_:)` form, as the table keeps it).
    private func redirectOverrides(except key: String) -> [ConnectOverride] {
        bypass.routes.compactMap { other, endpoints in
            guard other != key, let best = endpoints.first else { return nil }
            return ConnectOverride(host: other, connectHost: best.address, connectPort: best.port)
        }.sorted { $0.host < $1.host }
    }

    /// Whether the error means no connection was made: refused, unreachable, or the connect
    /// timer (not the transfer timer) expired. A refusal after the request went out (the host
    /// a redirect leads to) is not: the address answered, and the request must not go again.
    static func isConnectFailure(_ error: any Error, elapsed: Duration, options: RequestOptions) -> Bool {
        guard let error = error as? RunwayError, error.response == nil else { return false }
        if error.code == .cannotConnect { return error.neverSent }
        guard error.code == .timeout else { return false }
        // The transfer timer is the only other one; if it cannot have fired yet, this was connect.
        guard let total = options.timeout else { return true }
        return options.connectTimeout < total && elapsed < total * 0.9
    }
}

extension Interceptor where Self == DNSBypassInterceptor {
    /// Routes the bypass's hosts to their fastest addresses (see ``DNSBypassInterceptor``).
    /// Belongs last before the dispatcher, after retry and signing.
    public static func dnsBypass(_ bypass: DNSBypass) -> DNSBypassInterceptor {
        DNSBypassInterceptor(bypass)
    }
}
