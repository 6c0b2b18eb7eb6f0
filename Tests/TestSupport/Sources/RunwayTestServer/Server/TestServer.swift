import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// An in-process Hummingbird server on a loopback address and a free port, for integration tests.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { await server.shutdown() } }
/// let response = try await dispatcher.dispatch(try Request(server.url("/json").absoluteString), ...)
/// #expect(server.stats.connectionsAccepted == 1)
/// ```
/// Built-in endpoints (see
/// ``TestServer/start(host:tls:http2:clientCertificateAuthority:responseDelay:port:builtInRoutes:routes:)``)
/// cover echo, status codes, slow and reset responses, large, gzip and otherwise encoded bodies, downloads with `Range`,
/// redirects and uploads. Tests add their own endpoints with the `routes` closure.
public final class TestServer: Sendable {
    /// Adds routes to the server's router before it starts.
    public typealias Routes = @Sendable (Router<TestRequestContext>) -> Void

    /// The address the server listens on, such as `127.0.0.1`.
    public let host: String
    /// The port it was given.
    public let port: Int
    /// Whether it speaks TLS (with HTTP/2 offered through ALPN, unless disabled).
    public let isTLS: Bool
    /// What the server has seen.
    public let stats: TestServerStats

    private let serviceGroup: ServiceGroup
    private let runTask: Task<Void, any Error>

    private init(
        host: String, port: Int, isTLS: Bool, stats: TestServerStats, serviceGroup: ServiceGroup,
        runTask: Task<Void, any Error>
    ) {
        self.host = host
        self.port = port
        self.isTLS = isTLS
        self.stats = stats
        self.serviceGroup = serviceGroup
        self.runTask = runTask
    }

    /// `http(s)://host:port`.
    public var baseURL: URL {
        url("")
    }

    /// The URL of `path` (which may carry a query) on this server; `hostName` replaces the
    /// listening address in the URL, e.g. `localhost` or `api.runway.test` for TLS name checks.
    public func url(_ path: String, hostName: String? = nil) -> URL {
        let scheme = isTLS ? "https" : "http"
        let name = hostName ?? host
        // Every piece is ours and well-formed; a malformed path is a bug in the calling test.
        guard let url = URL(string: "\(scheme)://\(name):\(port)\(path)") else {
            preconditionFailure("test server URL for path \"\(path)\" is malformed")
        }
        return url
    }

    /// Waits until the server has recorded at least one aborted response.
    /// - Returns: `true` if it did within `timeout`.
    public func waitForAbort(timeout: Duration = .seconds(60)) async -> Bool {
        await stats.waitForAborts(1, timeout: timeout)
    }

    /// Starts a server and returns once it is listening.
    ///
    /// - Parameters:
    ///   - host: A loopback address to bind (`127.0.0.1`, `127.0.0.2`, ...).
    ///   - tls: The certificate and key to serve, from ``TestPKI``; `nil` for plain HTTP.
    ///   - http2: With TLS, offer HTTP/2 through ALPN (HTTP/1.1 stays available as fallback).
    ///   - clientCertificateAuthority: With TLS, require a client certificate signed by the CA
    ///     in this PEM file (``TestPKI/clientCACertificatePath``); a client without one is
    ///     refused in the handshake.
    ///   - responseDelay: Extra time every request waits before it is handled.
    ///   - port: The port to bind; 0 (the default) takes a free one.
    ///   - builtInRoutes: Whether to serve the built-in test endpoints; a server with an API of
    ///     its own (the HouseHunter sample server) turns them off.
    ///   - routes: Adds endpoints of the calling test to the router.
    public static func start(
        host: String = "127.0.0.1",
        tls: TestPKI.Identity? = nil,
        http2: Bool = true,
        clientCertificateAuthority: String? = nil,
        responseDelay: Duration = .zero,
        port: Int = 0,
        builtInRoutes: Bool = true,
        routes: Routes? = nil
    ) async throws -> TestServer {
        let stats = TestServerStats()
        let router = Router(context: TestRequestContext.self)
        router.add(middleware: StatsMiddleware(stats: stats, responseDelay: responseDelay))
        if builtInRoutes { BuiltInRoutes.add(to: router) }
        routes?(router)

        let server = try makeServerBuilder(tls: tls, http2: http2, clientCA: clientCertificateAuthority, stats: stats)
        let ready = StartupSignal()
        let threads = ServerThreads.take()
        var logger = Logger(label: "runway.test-server")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in ready.succeed(port: channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(threads.eventLoops),
            logger: logger
        )
        // The application runs inside a service group of our own so `shutdown()` can stop it
        // gracefully. Cancelling the serving task instead races with connections that were
        // accepted but not yet handed to a handler: NIO then traps with "Deinited NIOAsyncWriter
        // without calling finish()" (swift-nio#3481). A graceful shutdown closes the listener,
        // serves what was accepted and only then escalates to cancellation.
        var groupConfiguration = ServiceGroupConfiguration(services: [app], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(2)
        let serviceGroup = ServiceGroup(configuration: groupConfiguration)
        let runTask = Task(executorPreference: threads.handlers) {
            // Once the server has stopped, however it stopped.
            defer { threads.giveBack() }
            do {
                try await serviceGroup.run()
                ready.fail(TestServerError("the server stopped before it was running"))
            } catch {
                ready.fail(error)
                throw error
            }
        }
        do {
            let boundPort = try await ready.wait()
            return TestServer(
                host: host, port: boundPort, isTLS: tls != nil, stats: stats, serviceGroup: serviceGroup, runTask: runTask)
        } catch {
            await serviceGroup.triggerGracefulShutdown()
            throw error
        }
    }

    /// Stops the server, closing every connection, and waits until it has stopped.
    ///
    /// The shutdown is graceful: the listener closes, idle connections close, requests in
    /// progress get up to two seconds to finish before their tasks are cancelled.
    public func shutdown() async {
        await serviceGroup.triggerGracefulShutdown()
        _ = await runTask.result
    }

    private static func makeServerBuilder(
        tls: TestPKI.Identity?, http2: Bool, clientCA: String?, stats: TestServerStats
    ) throws -> HTTPServerBuilder {
        guard let tls else {
            return HTTPServerBuilder { responder in
                ConnectionCountingChannel(base: HTTP1Channel(responder: responder), stats: stats)
            }
        }
        let certificates = try NIOSSLCertificate.fromPEMFile(tls.certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)
        var settings = TLSConfiguration.makeServerConfiguration(certificateChain: certificates, privateKey: .privateKey(key))
        if let clientCA {
            settings.certificateVerification = .noHostnameVerification
            settings.trustRoots = .file(clientCA)
        }
        let configuration = settings
        if http2 {
            return HTTPServerBuilder { responder in
                ConnectionCountingChannel(
                    base: try HTTP2UpgradeChannel(tlsConfiguration: configuration, responder: responder), stats: stats)
            }
        }
        var http1Configuration = configuration
        http1Configuration.applicationProtocols = ["http/1.1"]
        let fixedConfiguration = http1Configuration
        return HTTPServerBuilder { responder in
            ConnectionCountingChannel(
                base: try TLSChannel(HTTP1Channel(responder: responder), tlsConfiguration: fixedConfiguration), stats: stats)
        }
    }
}

/// A failure of the test server itself.
public struct TestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Hands the listening port from `onServerRunning` (or a start failure) to `start`.
private final class StartupSignal: Sendable {
    private struct State {
        var result: Result<Int, any Error>?
        var waiter: CheckedContinuation<Int, any Error>?
    }

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    func succeed(port: Int) { complete(.success(port)) }

    func fail(_ error: any Error) { complete(.failure(error)) }

    private func complete(_ result: Result<Int, any Error>) {
        let waiter: CheckedContinuation<Int, any Error>? = lock.withLock {
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let result: Result<Int, any Error>? = lock.withLock {
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
