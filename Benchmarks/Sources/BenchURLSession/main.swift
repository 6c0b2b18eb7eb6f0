// URLSession (FoundationNetworking on Linux), an ephemeral session with c connections per host:
// `BenchURLSession --url URL --c 16 --n 20000 [...]` (see BenchHarness). Plain HTTP only: on
// Linux it does not take a custom CA, so it sits out the TLS rows.
import BenchHarness
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let options = Options()
let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = options.concurrency
let session = URLSession(configuration: configuration)
guard let url = URL(string: options.url) else { fail("bad URL \(options.url)") }

await measure(client: "urlsession", options) { _ in
    let (data, response) = try await session.data(from: url)
    guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
    return data.count
}
