import Runway
import RunwayURLSession
import Testing

@testable import RunwayCurl

/// A dispatcher the suite runs against, and what it can do.
///
/// To test another dispatcher, add one line to ``all``. A test that needs a capability takes
/// `DispatcherUnderTest.all(supporting: ...)` as its arguments, so a dispatcher without it is
/// left out of that test (and checked by the "refuses unsupported options" test instead).
struct DispatcherUnderTest: Sendable, CustomTestStringConvertible {
    /// Something a dispatcher may or may not support.
    struct Capability: Hashable, Sendable, CustomStringConvertible {
        let description: String

        /// Trusting a custom CA bundle (``TLSOptions/certificateAuthorities``).
        static let customCA = Capability(description: "custom CA")
        /// Public-key pinning (``TLSOptions/pinnedPublicKeys``).
        static let pinning = Capability(description: "public-key pinning")
        /// HTTP/2 over TLS with multiplexing (needs `customCA` to reach the test server).
        static let http2 = Capability(description: "HTTP/2 multiplexing")
        /// A connect timeout enforced apart from the total timeout.
        static let connectTimeout = Capability(description: "connect timeout")
        /// ``RequestOptions/connectOverrides``.
        static let connectOverrides = Capability(description: "connect overrides")
        /// ``RequestOptions/proxy``: HTTP (and `CONNECT`) and SOCKS5 proxies.
        static let proxies = Capability(description: "proxies")
        /// Sending a request's body again on a 307 or 308 redirect (FoundationNetworking sends
        /// it empty; `URLSessionDispatcher` refuses there).
        static let bodyOnRedirect = Capability(description: "body sent again on a 307/308 redirect")
        /// Closing an HTTP/1 connection whose framing a response made untrustworthy (a 204 that
        /// announces a body) rather than reading what follows as the next response
        /// (FoundationNetworking keeps the connection).
        static let closesUntrustedConnections = Capability(description: "closes a connection with untrusted framing")
        /// Reaching a host written as an IPv6 address (`http://[::1]:8080/`); FoundationNetworking
        /// fails every such request, and `URLSessionDispatcher` refuses them on Linux.
        static let ipv6Literals = Capability(description: "IPv6 address hosts")
        /// Presenting a client certificate (``TLSOptions/clientCertificate``).
        static let clientCertificates = Capability(description: "client certificates")
        /// Sending a GET with a body (FoundationNetworking refuses it; `URLSessionDispatcher`
        /// refuses it first, on Linux).
        static let bodyWithGET = Capability(description: "GET with a body")
    }

    /// The name shown in test results.
    let name: String
    /// What it supports.
    let capabilities: Set<Capability>
    /// Makes a fresh dispatcher (one per test, so connection counts are the test's own).
    let make: @Sendable () -> any Dispatcher

    var testDescription: String { name }

    /// Every dispatcher under test. One line each.
    static let all: [DispatcherUnderTest] = [
        DispatcherUnderTest(
            name: "libcurl",
            capabilities: [
                .customCA, .pinning, .http2, .connectTimeout, .connectOverrides, .proxies, .bodyOnRedirect, .closesUntrustedConnections,
                .ipv6Literals, .clientCertificates, .bodyWithGET,
            ],
            make: { CurlDispatcher() }),
        // The same loop waiting with poll(2), as it does where there is no epoll.
        DispatcherUnderTest(
            name: "libcurl (poll)",
            capabilities: [
                .customCA, .pinning, .http2, .connectTimeout, .connectOverrides, .proxies, .bodyOnRedirect, .closesUntrustedConnections,
                .ipv6Literals, .clientCertificates, .bodyWithGET,
            ],
            make: { CurlDispatcher(socketBackend: .poll) }),
        DispatcherUnderTest(name: "URLSession", capabilities: urlSessionCapabilities, make: { URLSessionDispatcher() }),
    ]

    #if canImport(FoundationNetworking)
    static let urlSessionCapabilities: Set<Capability> = []
    #else
    static let urlSessionCapabilities: Set<Capability> = [.bodyOnRedirect, .ipv6Literals, .bodyWithGET]
    #endif

    /// The dispatchers that support every capability in `required`.
    static func all(supporting required: Capability...) -> [DispatcherUnderTest] {
        all.filter { $0.capabilities.isSuperset(of: required) }
    }

    /// The dispatchers that lack `capability`.
    static func all(lacking capability: Capability) -> [DispatcherUnderTest] {
        all.filter { !$0.capabilities.contains(capability) }
    }

    func supports(_ capability: Capability) -> Bool {
        capabilities.contains(capability)
    }
}
