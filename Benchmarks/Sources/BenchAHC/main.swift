// AsyncHTTPClient, one client with a pool of c connections (HTTP/2 over TLS when --h2), on its
// shared event loop group: `BenchAHC --url URL --c 16 --n 20000 [...]` (see BenchHarness).
import AsyncHTTPClient
import BenchHarness
import NIOCore
import NIOSSL

let options = Options()
var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.concurrency)
configuration.decompression = .enabled(limit: .none)
configuration.httpVersion = options.http2 ? .automatic : .http1Only
if let caFile = options.caFile {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file(caFile)
    configuration.tlsConfiguration = tls
}
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let url = options.url
let gzip = options.gzip

await measure(client: "ahc", options) { _ in
    var request = HTTPClientRequest(url: url)
    if gzip { request.headers.add(name: "Accept-Encoding", value: "gzip") }
    let response = try await client.execute(request, timeout: .seconds(30))
    guard response.status == .ok else { throw HTTPClientError.invalidURL }
    return try await response.body.collect(upTo: 16 << 20).readableBytes
}
