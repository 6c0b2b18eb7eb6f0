import Foundation
import Runway
import RunwayCurl

let url = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:8000/"
let dispatcher = CurlDispatcher()
let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
for _ in 0..<3 {
    do {
        let response = try await pipeline.send(try Request(url))
        print(response.status, response.body.count, response.metrics)
    } catch {
        print(error)
    }
}
await withTaskGroup(of: String.self) { group in
    for _ in 0..<20 {
        group.addTask {
            do { return "\(try await pipeline.send(try Request(url)).metrics.remoteAddress)" } catch { return "\(error)" }
        }
    }
    for await r in group { print(r, terminator: " ") }
}
print()
do { _ = try await pipeline.send(try Request("http://127.0.0.1:1/")) } catch { print(error) }
do { _ = try await pipeline.send(try Request("ftp://127.0.0.1:1/")) } catch { print(error) }
do { _ = try await pipeline.send(try Request(url, headers: ["X": "a\r\nB: c"])) } catch { print(error) }
