import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

// The code the "Streaming responses" guide (Sources/RunwayCurl/RunwayCurl.docc/Streaming.md)
// quotes, compiled and run here.

// BEGIN guide: Streaming responses
/// Saves a large export to `file` as it arrives: memory holds about a megabyte of it at most.
func saveExport(from url: URL, to file: URL, pipeline: Pipeline) async throws -> Int {
    var request = Request(url: url)
    request.streamsResponseBody = true
    request.options.timeout = nil  // the whole transfer may take long; the connect timeout stays
    request.options.idleTimeout = .seconds(30)  // but a server silent that long ends it
    let response = try await pipeline.send(request)  // returns with the head: status, headers
    guard response.isSuccess, let body = response.bodyStream else {
        throw RunwayError(.serverError, "the export answered \(response.status)", response: response)
    }
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
        throw RunwayError(.fileIO, "cannot create \(file.path)")
    }
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    var written = 0
    // A slow disk slows the server down: the dispatcher stops reading while the buffer is full.
    // A cut connection throws here (.connectionLost); leaving the loop early aborts the transfer.
    for try await chunk in body {
        try handle.write(contentsOf: chunk)
        written += chunk.count
    }
    return written
}
// END guide: Streaming responses

@Suite("Streaming responses: the guide's example")
struct StreamingGuideTests {
    @Test func savesAnExport() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        try await withTestServer { server in
            let written = try await saveExport(from: server.url("/bytes/300000"), to: file, pipeline: pipeline)
            #expect(written == 300_000)
            #expect(try Data(contentsOf: file) == DeterministicBytes.data(count: 300_000))
        }
    }
}
