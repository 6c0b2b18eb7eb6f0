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
struct ClientSetup: Sendable {
    var connections: Int
    var caFile: String?
    var http1Only = false
}

/// One HTTP client under test: GET a URL, return the body size.
protocol BenchClient: Sendable {
    func get(_ url: String) async throws -> Int
}

struct NoOp: Interceptor {
    let name: String
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await next(request, context)
    }
}

/// Runway's full stack: six no-op interceptors and the libcurl dispatcher.
struct RunwayClient: BenchClient {
    let pipeline: Pipeline
    let options: RequestOptions

    init(_ setup: ClientSetup) {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: setup.connections))
        pipeline = Pipeline(interceptors: (1...6).map { NoOp(name: "noop\($0)") }, dispatcher: dispatcher)
        var options = RequestOptions()
        if let caFile = setup.caFile { options.tls.certificateAuthorities = .file(caFile) }
        if setup.http1Only { options.httpVersion = .http1 }
        self.options = options
    }

    func get(_ url: String) async throws -> Int {
        let request = try Request(url, options: options)
        let response = try await pipeline.send(request)
        guard response.status == 200 else { throw RunwayError(.serverError, "status \(response.status)") }
        return response.body.count
    }
}

struct RawCurlClient: BenchClient {
    let multi: RawCurlMulti
    let setup: ClientSetup

    init(_ setup: ClientSetup) {
        multi = RawCurlMulti(maxConnectionsPerHost: setup.connections)
        self.setup = setup
    }

    func get(_ url: String) async throws -> Int {
        try await multi.get(url, caFile: setup.caFile, http1Only: setup.http1Only)
    }
}

struct AHCClient: BenchClient {
    let client: HTTPClient

    init(_ setup: ClientSetup) throws {
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

    func get(_ url: String) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept-Encoding", value: "gzip")
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        return body.readableBytes
    }
}

struct URLSessionClient: BenchClient {
    let session: URLSession

    init(_ setup: ClientSetup) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = setup.connections
        session = URLSession(configuration: configuration)
    }

    func get(_ url: String) async throws -> Int {
        let (data, _) = try await session.data(from: URL(string: url)!)
        return data.count
    }
}

/// Runs `total` calls of `body` with `concurrency` calls in flight at once.
func run(_ total: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
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
