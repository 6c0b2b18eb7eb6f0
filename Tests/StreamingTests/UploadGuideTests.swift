import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

// The code the "Streaming request bodies" guide (Sources/RunwayCurl/RunwayCurl.docc/StreamingUploads.md)
// quotes, compiled and run here.

// BEGIN guide: Streaming request bodies
/// Uploads a recording from disk: read as it is sent, never held whole in memory.
func uploadRecording(_ file: URL, to url: URL, pipeline: Pipeline) async throws -> Response {
    var request = Request(method: .put, url: url, headers: ["Content-Type": "audio/wav"])
    request.bodyStream = try .file(file)  // Content-Length is the file's size
    request.options.timeout = nil  // a large file may take long; the connect timeout stays
    request.options.idleTimeout = .seconds(30)  // but a server that stops reading ends it
    return try await pipeline.send(request)
}

/// Sends rows as they are made, as CSV of unknown length: HTTP/1.1 sends it chunked.
func exportRows(_ rows: [[String]], to url: URL, pipeline: Pipeline) async throws -> Response {
    var request = Request(method: .post, url: url, headers: ["Content-Type": "text/csv"])
    // A closure makes the sequence anew for each send, so retry may send it again.
    request.bodyStream = .sequence {
        AsyncStream<Data> { continuation in
            for row in rows { continuation.yield(Data((row.joined(separator: ",") + "\n").utf8)) }
            continuation.finish()
        }
    }
    return try await pipeline.send(request)
}

/// Posts a listing with its photos as multipart/form-data: the photos are read as they are sent.
func postListing(title: String, photos: [URL], to url: URL, pipeline: Pipeline) async throws -> Response {
    var form = MultipartForm()
    form.append(title, name: "title")
    for photo in photos { try form.append(contentsOf: photo, name: "photos", contentType: "image/jpeg") }
    var request = Request(method: .post, url: url)
    request.setBody(form)  // Content-Type: multipart/form-data; boundary=…, and the body's length
    return try await pipeline.send(request)
}
// END guide: Streaming request bodies

@Suite("Streaming request bodies: the guide's examples")
struct UploadGuideTests {
    @Test func uploadsARecordingAndExportsRows() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-recording-\(UUID().uuidString)")
        try DeterministicBytes.data(count: 1_000_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let uploaded = try JSONDecoder().decode(
                SinkReport.self, from: try await uploadRecording(file, to: server.url("/sink"), pipeline: pipeline).body)
            #expect(uploaded.received == 1_000_000 && uploaded.matches && uploaded.contentLength == "1000000")

            let rows = (0..<1_000).map { ["\($0)", "row \($0)"] }
            let echo = try decodeEcho(try await exportRows(rows, to: server.url("/echo"), pipeline: pipeline))
            #expect(echo.body == rows.map { $0.joined(separator: ",") + "\n" }.joined())
            #expect(echo.headers["transfer-encoding"]?.lowercased() == "chunked")
        }
        let parser = try await MultipartTests.startParser()
        let listing = try await postListing(
            title: "Loft", photos: [file, file], to: URL(string: "http://127.0.0.1:\(parser.port)/form")!, pipeline: pipeline)
        let parts = try JSONDecoder().decode([ParsedPart].self, from: listing.body)
        #expect(parts.map(\.name) == ["title", "photos", "photos"])
        #expect(parts.map(\.size) == [4, 1_000_000, 1_000_000])
    }
}
