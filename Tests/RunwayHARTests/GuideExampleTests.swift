import Foundation
import Runway
import RunwayCache
import RunwayCurl
import RunwayHAR
import RunwayTestServer
import Testing

// The code between the BEGIN/END markers is quoted by the guide (Sources/RunwayHAR/RunwayHAR.docc/
// RecordingHAR.md), whose blocks the sample's ReadmeExcerptTests check line by line against this
// file; the test below runs it.

// BEGIN guide: Record a HAR file
/// One recorder for the app: the last 500 calls, bodies up to 16 KiB, the ID card number hidden
/// with the standard secrets.
func makeRecorder() throws -> HARRecorder {
    HARRecorder(maxEntries: 500, bodyLimit: 16 << 10, redacting: try .standard(parameters: ["id_card"]))
}

/// The chain with the recorder where logging goes: before the cache, so hits are recorded too.
func makeRecordingPipeline(recorder: HARRecorder, cache: ResponseCache) throws -> Pipeline {
    Pipeline(
        interceptors: [
            .har(recorder),
            cache.interceptor,
            try .retry(maxAttempts: 3),
        ], dispatcher: CurlDispatcher())
}

/// At exit, or from a debug menu: every kept call as a HAR 1.2 file.
func saveCalls(of recorder: HARRecorder, to path: String) throws {
    try recorder.write(to: URL(fileURLWithPath: path))
}
// END guide: Record a HAR file

@Suite(.timeLimit(.minutes(5))) struct GuideExampleTests {
    @Test func theGuidesChainRecordsAValidFile() async throws {
        try await withTestServer { server in
            let recorder = try makeRecorder()
            let cache = try ResponseCache(policies: ["doc": .memory()])
            let pipeline = try makeRecordingPipeline(recorder: recorder, cache: cache)
            for _ in 0..<2 {
                _ = try await pipeline.send(Request(url: server.url("/json?id_card=110105")), context: RequestContext(apiName: "doc"))
            }
            let file = HARCheck.temporaryFile()
            defer { try? FileManager.default.removeItem(at: file) }
            try saveCalls(of: recorder, to: file.path)
            let check = try await HARCheck.run(file)
            #expect(check.status == 0 && check.output.contains("ok: 2 entries"), "\(check)")
            let har = try JSONDecoder().decode(HAR.self, from: Data(contentsOf: file))
            #expect(har.log.entries.map(\.fromCache) == [nil, "memory"])
            #expect(har.log.entries.allSatisfy { $0.request.url.hasSuffix("id_card=<redacted>") })
        }
    }
}
