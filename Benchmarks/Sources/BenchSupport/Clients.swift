import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Runway
import RunwayCurl
import RunwayURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a client under test is set up.
public struct ClientSetup: Sendable {
    public var connections: Int
    public var caFile: String?
    public var http1Only = false
    /// Who inflates compressed responses in Runway's libcurl dispatcher.
    public var responseDecoding = CurlDispatcher.Configuration.ResponseDecoding.awaitingTask

    public init(
        connections: Int, caFile: String? = nil, http1Only: Bool = false,
        responseDecoding: CurlDispatcher.Configuration.ResponseDecoding = .awaitingTask
    ) {
        self.connections = connections
        self.caFile = caFile
        self.http1Only = http1Only
        self.responseDecoding = responseDecoding
    }
}

/// One HTTP client under test: GET a URL, return the body size.
public protocol BenchClient: Sendable {
    func get(_ url: String) async throws -> Int
}

public struct NoOp: Interceptor {
    public let name: String

    public init(name: String) {
        self.name = name
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await next(request, context)
    }
}

/// Runway's full stack: six no-op interceptors and the libcurl dispatcher.
public struct RunwayClient: BenchClient {
    let pipeline: Pipeline
    let options: RequestOptions

    public init(_ setup: ClientSetup) {
        let dispatcher = CurlDispatcher(
            configuration: .init(maxConnectionsPerHost: setup.connections, responseDecoding: setup.responseDecoding))
        pipeline = Pipeline(interceptors: (1...6).map { NoOp(name: "noop\($0)") }, dispatcher: dispatcher)
        var options = RequestOptions()
        if let caFile = setup.caFile { options.tls.certificateAuthorities = .file(caFile) }
        if setup.http1Only { options.httpVersion = .http1 }
        self.options = options
    }

    public func get(_ url: String) async throws -> Int {
        let request = try Request(url, options: options)
        let response = try await pipeline.send(request)
        guard response.status == 200 else { throw RunwayError(.serverError, "status \(response.status)") }
        return response.body.count
    }
}

public struct RawCurlClient: BenchClient {
    let multi: RawCurlMulti
    let setup: ClientSetup

    public init(_ setup: ClientSetup) {
        multi = RawCurlMulti(maxConnectionsPerHost: setup.connections)
        self.setup = setup
    }

    public func get(_ url: String) async throws -> Int {
        try await multi.get(url, caFile: setup.caFile, http1Only: setup.http1Only)
    }
}

public struct AHCClient: BenchClient {
    let client: HTTPClient

    public init(_ setup: ClientSetup) throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: setup.connections)
        configuration.decompression = .enabled(limit: .none)
        if setup.http1Only { configuration.httpVersion = .http1Only }
        if let caFile = setup.caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func get(_ url: String) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept-Encoding", value: "gzip")
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        return body.readableBytes
    }
}

public struct URLSessionClient: BenchClient {
    let session: URLSession

    public init(_ setup: ClientSetup) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = setup.connections
        session = URLSession(configuration: configuration)
    }

    public func get(_ url: String) async throws -> Int {
        let (data, _) = try await session.data(from: URL(string: url)!)
        return data.count
    }
}

/// Runs `total` calls of `body` with `concurrency` calls in flight at once.
public func run(_ total: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let share = total / concurrency + (worker < total % concurrency ? 1 : 0)
            group.addTask {
                for _ in 0..<share { try await body() }
            }
        }
        try await group.waitForAll()
    }
}
