import Foundation
import Runway
import RunwayCache
import RunwayCurl
import RunwayHAR
import RunwayTestServer
import Testing

/// The HAR recorder in front of the cache and libcurl, against the in-process server: every file
/// it writes passes the HAR 1.2 schema check (`Schema/check_har.py`) with timings that add up.
@Suite(.timeLimit(.minutes(5))) struct HARServerTests {
    /// Writes `recorder`'s archive, checks it with the schema, and reads it back.
    func writeAndCheck(_ recorder: HARRecorder, entries: Int) async throws -> HAR {
        let file = HARCheck.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)
        let check = try await HARCheck.run(file)
        #expect(check.status == 0, "\(check)")
        #expect(check.output.contains("ok: \(entries) entries"), "\(check)")
        let har = try JSONDecoder().decode(HAR.self, from: Data(contentsOf: file))
        for entry in har.log.entries {
            #expect(abs(entry.time - entry.timings.total) < 1e-9, "\(entry.request.url): \(entry.time) vs \(entry.timings)")
        }
        return har
    }

    /// A large JSON body is kept redacted as far as the body limit, never parsed whole (2.4 MB of
    /// it took seconds on the call's path), and nothing hidden shows.
    @Test func aLargeJSONBodyIsKeptAsFarAsTheLimit() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder(bodyLimit: 1024)
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            let items = (0..<40_000).map { #"{"id":\#($0),"token":"SECRET-\#($0)","name":"item \#($0)"}"# }.joined(separator: ",")
            let body = Data(#"{"session_id":"SECRET-top","items":[\#(items)]}"#.utf8)
            let response = try await pipeline.send(
                Request(method: .post, url: server.url("/echo"), headers: ["Content-Type": "application/json"], body: body))
            #expect(response.status == 200)
            let har = try await writeAndCheck(recorder, entries: 1)
            let entry = try #require(har.log.entries.first)
            let posted = try #require(entry.request.postData)
            let text = posted.text
            #expect(text.utf8.count <= 1024 && !text.contains("SECRET"))
            #expect(text.hasPrefix(#"{"session_id":"<redacted>","items":[{"id":0,"token":"<redacted>","name":"item 0"}"#))
            #expect(posted.comment == "cut at \(text.utf8.count) of \(body.count) bytes")
            #expect(entry.request.bodySize == body.count)
            // The echo is JSON of more than the limit too: cut as far as it.
            #expect((entry.response.content.text ?? "").utf8.count <= 1024)
            #expect(entry.response.content.comment?.hasPrefix("cut at ") == true)
        }
    }

    @Test func aSessionIsRecordedRedactedWithCacheHitsAndFailures() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            let cache = try ResponseCache(policies: ["doc": .memory()])
            let pipeline = Pipeline(interceptors: [.har(recorder), cache.interceptor], dispatcher: CurlDispatcher())
            let doc = server.url("/json?access_token=qwerty&page=2")
            let headers: HTTPHeaders = ["Authorization": "Bearer s3cret", "X-Trace": "t-1"]
            let first = try await pipeline.send(
                Request(url: doc, headers: headers), context: RequestContext(apiName: "doc", serviceID: "docs"))
            let hit = try await pipeline.send(
                Request(url: doc, headers: headers), context: RequestContext(apiName: "doc", serviceID: "docs"))
            #expect(first.origin == .network && hit.origin == .memoryCache)
            let json = Data(#"{"user":"demo","password":"hunter2","note":"hello"}"#.utf8)
            let posted = try await pipeline.send(
                Request(method: .post, url: server.url("/upload"), headers: ["Content-Type": "application/json"], body: json))
            // The recorder only observes: the server got the body as sent.
            #expect(String(decoding: posted.body, as: UTF8.self) == #"{"received":\#(json.count)}"#)
            let form = Data("user=demo&pin=1234".utf8)
            _ = try await pipeline.send(
                Request(
                    method: .post, url: server.url("/upload"), headers: ["Content-Type": "application/x-www-form-urlencoded"], body: form))
            let blob = Data((0..<64).map { UInt8($0) })
            let put = try await pipeline.send(
                Request(method: .put, url: server.url("/upload"), headers: ["Content-Type": "application/octet-stream"], body: blob))
            #expect(String(decoding: put.body, as: UTF8.self) == #"{"received":64}"#)
            let bytes = try await pipeline.send(Request(url: server.url("/bytes/300")))
            let missing = try await pipeline.send(Request(url: server.url("/status/404")))
            await #expect(throws: RunwayError.self) { try await pipeline.send(try Request("http://127.0.0.1:1/json")) }

            let har = try await writeAndCheck(recorder, entries: 8)
            #expect(har.log.version == "1.2" && har.log.creator.name == "Runway")
            let entries = har.log.entries
            try #require(entries.count == 8)

            // The network call: secrets hidden in the URL, the query and the headers.
            let network = entries[0]
            #expect(network.request.url.contains("access_token=<redacted>") && network.request.url.contains("page=2"))
            #expect(network.request.queryString == [.init(name: "access_token", value: "<redacted>"), .init(name: "page", value: "2")])
            #expect(network.request.headers == [.init(name: "Authorization", value: "<redacted>"), .init(name: "X-Trace", value: "t-1")])
            #expect(network.request.headersSize == -1 && network.request.bodySize == 0 && network.request.postData == nil)
            #expect(network.response.status == 200 && network.response.statusText == "OK")
            #expect(network.response.httpVersion == "HTTP/1.1" && network.request.httpVersion == "HTTP/1.1")
            // JSON is read to be redacted, and written back with its keys sorted.
            let recorded = try JSONSerialization.jsonObject(with: Data((network.response.content.text ?? "").utf8)) as? NSDictionary
            #expect(recorded == (try JSONSerialization.jsonObject(with: TestServer.fixedJSON) as? NSDictionary))
            #expect(network.response.content.size == TestServer.fixedJSON.count && network.response.bodySize == TestServer.fixedJSON.count)
            #expect(network.response.content.mimeType == "application/json" && network.response.content.encoding == nil)
            #expect(network.fromCache == nil && network.error == nil)
            #expect(network.serverIPAddress == "127.0.0.1")
            #expect(network.apiName == "doc" && network.serviceID == "docs")
            // A new connection: its phases are timed; the total is libcurl's.
            #expect(network.timings.connect >= 0 && network.timings.wait >= 0 && network.timings.receive >= 0)
            #expect(network.timings.ssl == -1)
            #expect(abs(network.time - first.metrics.total / .milliseconds(1)) < 0.002)

            // The cache hit: marked, no network phases, nothing received.
            let cached = entries[1]
            #expect(cached.fromCache == "memory")
            #expect(cached.response.status == 200 && cached.response.bodySize == 0 && cached.response.httpVersion == "")
            #expect(cached.response.content.text == network.response.content.text)
            #expect([cached.timings.blocked, cached.timings.dns, cached.timings.connect, cached.timings.ssl] == [-1, -1, -1, -1])
            #expect(cached.timings.send == 0 && cached.timings.receive == 0 && cached.time == cached.timings.wait)
            #expect(cached.serverIPAddress == nil)

            // The POSTs: bodies kept, secret parameters hidden, on a reused connection.
            let postedJSON = entries[2]
            #expect(postedJSON.request.method == "POST" && postedJSON.request.bodySize == json.count)
            #expect(postedJSON.request.postData?.mimeType == "application/json" && postedJSON.request.postData?.comment == nil)
            #expect(postedJSON.request.postData?.text == #"{"note":"hello","password":"<redacted>","user":"demo"}"#)
            #expect(postedJSON.response.content.text == #"{"received":\#(json.count)}"#)
            #expect(posted.metrics.connectionReused == (postedJSON.timings.connect == -1))
            #expect(entries[3].request.postData?.mimeType == "application/x-www-form-urlencoded")
            #expect(entries[3].request.postData?.text == "user=demo&pin=<redacted>")

            // Binary bytes: left out of a request (HAR has no encoding there), base64 in a response.
            #expect(entries[4].request.postData?.text == "" && entries[4].request.bodySize == 64)
            #expect(entries[4].request.postData?.comment == "64 bytes of binary, not recorded")
            let binary = entries[5]
            #expect(binary.response.content.encoding == "base64" && binary.response.content.mimeType == "application/octet-stream")
            #expect(binary.response.content.text.flatMap { Data(base64Encoded: $0) } == bytes.body)
            #expect(binary.response.content.size == 300 && binary.response.content.comment == nil)

            #expect(entries[6].response.status == 404 && entries[6].response.statusText == "Not Found" && missing.status == 404)
            #expect(entries[6].error == nil)

            // The failure: status 0 and the error, as browsers write one.
            let failed = entries[7]
            #expect(failed.response.status == 0 && failed.response.bodySize == -1)
            #expect(failed.error?.hasPrefix("cannotConnect at dispatcher") == true, "\(failed.error ?? "")")
            #expect(failed.timings.dns == -1 && failed.timings.connect == -1 && failed.time == failed.timings.wait)

            let file = try String(data: recorder.data(), encoding: .utf8) ?? ""
            for secret in ["qwerty", "s3cret", "hunter2", "1234"] { #expect(!file.contains(secret), "\(secret) in the HAR") }
            #expect(file.contains(#""_fromCache" : "memory""#) && file.contains(#""_error" : "cannotConnect"#))
        }
    }

    @Test("a streamed request body is recorded by its length, not its bytes, and the file still passes the schema")
    func streamedRequestBodies() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            let chunks = AsyncStream<Data> { continuation in
                for _ in 0..<4 { continuation.yield(Data(repeating: 1, count: 1_000)) }
                continuation.finish()
            }
            var known = Request(method: .post, url: server.url("/upload"), headers: ["Content-Type": "application/octet-stream"])
            known.bodyStream = .sequence(chunks, length: 4_000)
            #expect(String(decoding: try await pipeline.send(known).body, as: UTF8.self) == #"{"received":4000}"#)
            var unknown = known
            unknown.bodyStream = .sequence(length: nil) {
                AsyncStream<Data> {
                    $0.yield(Data("abc".utf8))
                    $0.finish()
                }
            }
            #expect(String(decoding: try await pipeline.send(unknown).body, as: UTF8.self) == #"{"received":3}"#)

            let entries = try await writeAndCheck(recorder, entries: 2).log.entries
            try #require(entries.count == 2)
            #expect(entries[0].request.bodySize == 4_000)
            #expect(entries[0].request.postData?.text == "")
            #expect(entries[0].request.postData?.comment?.contains("4000 bytes streamed") == true)
            #expect(entries[1].request.bodySize == -1)
        }
    }

    @Test func aStreamedResponseIsRecordedWhenItsBodyEndsWithItsSizeAndFailure() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            var whole = Request(url: server.url("/bytes/5000"))
            whole.streamsResponseBody = true
            let body = try #require(try await pipeline.send(whole).bodyStream)
            #expect(recorder.count == 0, "the entry is kept when the body ends, not with the head")
            var received = 0
            for try await chunk in body { received += chunk.count }
            #expect(received == 5000)
            // /reset sends 1,000 of the 100,000 bytes it announces, then resets the connection.
            var cut = Request(url: server.url("/reset"))
            cut.streamsResponseBody = true
            let failing = try #require(try await pipeline.send(cut).bodyStream)
            await #expect(throws: RunwayError.self) { for try await _ in failing {} }

            let entries = try await writeAndCheck(recorder, entries: 2).log.entries
            try #require(entries.count == 2)
            let complete = entries[0].response
            #expect(complete.status == 200 && complete.content.size == 5000 && complete.bodySize == 5000 && entries[0].error == nil)
            #expect(complete.content.text == nil && complete.content.comment == "5000 bytes streamed to the caller, not recorded")
            // A body cut short is a failure, not a clean 200 with what arrived.
            #expect(entries[1].response.status == 200 && entries[1].response.content.size <= 1000)
            #expect(entries[1].error?.hasPrefix("connectionLost") == true, "\(entries[1].error ?? "no error")")
        }
    }

    /// A body written to a file is recorded by the bytes this response wrote: all of them, or
    /// for a resumed download (`206`) those after the part the file held.
    @Test func aDownloadToAFileIsRecordedWithTheSizeItWrote() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("har-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let recorder = HARRecorder()
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            var whole = Request(url: server.url("/download/5000"))
            whole.download = DownloadTarget(file: directory.appendingPathComponent("whole.bin"))
            #expect(try await pipeline.send(whole).status == 200)
            // The first attempt is cut part way; the second resumes from the partial file.
            let size = 2_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("resumed.bin"), resume: true)
            var cut = Request(url: server.url("/download/\(size)?cut=\(UUID().uuidString)"))
            cut.download = target
            await #expect(throws: RunwayError.self) { try await pipeline.send(cut) }
            let partial = try Data(contentsOf: target.partialFile).count
            #expect(partial > 0 && partial < size)
            #expect(try await pipeline.send(cut).status == 206)

            let entries = try await writeAndCheck(recorder, entries: 3).log.entries
            try #require(entries.count == 3)
            #expect(entries[0].response.content.size == 5000)
            #expect(entries[0].response.content.comment == "the body was written to \(directory.path)/whole.bin")
            #expect(entries[2].response.status == 206 && entries[2].response.content.size == size - partial)
        }
    }

    @Test("a query name or value whose escapes are not UTF-8 is recorded as sent, not as an empty string")
    func undecodableQueryItemsAreRecordedAsSent() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            _ = try await pipeline.send(try Request(server.url("/json").absoluteString + "?q=caf%E9&caf%E9=1&ok=%C3%A9&e="))
            let har = try await writeAndCheck(recorder, entries: 1)
            #expect(
                har.log.entries.first?.request.queryString == [
                    .init(name: "q", value: "caf%E9"), .init(name: "caf%E9", value: "1"), .init(name: "ok", value: "é"),
                    .init(name: "e", value: ""),
                ])
        }
    }

    @Test func theRecorderKeepsTheLastCallsOnly() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder(maxEntries: 2)
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            for page in 1...3 { _ = try await pipeline.send(Request(url: server.url("/json?page=\(page)"))) }
            #expect(recorder.count == 2 && recorder.droppedCount == 1)
            let har = try await writeAndCheck(recorder, entries: 2)
            #expect(har.log.entries.map(\.request.queryString) == [[.init(name: "page", value: "2")], [.init(name: "page", value: "3")]])
            #expect(har.log.comment == "1 older call dropped (the recorder keeps 2)")
            recorder.removeAll()
            #expect(recorder.count == 0 && recorder.droppedCount == 0 && recorder.har().log.entries.isEmpty)
        }
    }

    /// A cut in the middle of a character keeps the characters before it whole: the kept text
    /// is a start of the body, never one ending in half a character.
    @Test func aCutNeverSplitsACharacter() async throws {
        try await withTestServer { server in
            let short = HARRecorder(bodyLimit: 32)
            let pipeline = Pipeline(interceptors: [.har(short)], dispatcher: CurlDispatcher())
            let body = Data(#"{"title":"静安寺两居室朝南"}"#.utf8)  // 10 bytes, then 3 per character: 32 falls inside 南
            _ = try await pipeline.send(
                Request(method: .post, url: server.url("/echo"), headers: ["Content-Type": "application/json"], body: body))
            let sent = try #require(short.har().log.entries.first?.request.postData)
            #expect(sent.text == #"{"title":"静安寺两居室朝"# && sent.comment == "cut at 31 of \(body.count) bytes", "\(sent)")
        }
    }

    @Test func bodiesAreCutAtTheLimitOrLeftOut() async throws {
        try await withTestServer { server in
            let full = HARRecorder()
            let short = HARRecorder(bodyLimit: 32)
            let none = HARRecorder(bodyLimit: 0)
            let pipeline = Pipeline(interceptors: [.har(full), .har(short), .har(none)], dispatcher: CurlDispatcher())
            _ = try await pipeline.send(Request(url: server.url("/json")))
            _ = try await pipeline.send(Request(url: server.url("/bytes/100")))
            let text = short.har().log.entries[0].response.content
            let whole = try #require(full.har().log.entries[0].response.content.text)
            #expect(text.text?.utf8.count == 32 && whole.hasPrefix(text.text ?? "-") && whole.utf8.count == TestServer.fixedJSON.count)
            #expect(text.comment == "cut at 32 of \(TestServer.fixedJSON.count) bytes" && text.size == TestServer.fixedJSON.count)
            let binary = short.har().log.entries[1].response.content
            #expect(binary.text.flatMap { Data(base64Encoded: $0) }?.count == 32 && binary.comment == "the first 32 of 100 bytes")
            for entry in none.har().log.entries {
                #expect(
                    entry.response.content.text == nil && entry.response.content.comment?.hasSuffix("not recorded (body limit 0)") == true)
            }
            _ = try await writeAndCheck(short, entries: 2)
            _ = try await writeAndCheck(none, entries: 2)
        }
    }

    @Test func textThatIsNotUTF8IsLeftOutNotRecordedUnredacted() async throws {
        let recorder = HARRecorder()
        let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
        let bodies: [(type: String?, body: [UInt8])] = [
            ("application/json; charset=iso-8859-1", Array(#"{"access_token":"s"#.utf8) + [0xE9] + Array(#"cret-1"}"#.utf8)),
            ("application/json", Array(#"{"access_token":"secret-2","#.utf8) + [0x01] + Array(#""n":1}"#.utf8)),
            (nil, Array("user=demo&pin=secret-3&city=".utf8) + [0xE9, 0x01]),
            ("application/json; charset=utf-16le", Array(#"{"password":"secret-4"}"#.utf8).flatMap { [$0, 0] }),
        ]
        for (type, body) in bodies {
            let head = "HTTP/1.1 200 OK\r\n" + (type.map { "Content-Type: \($0)\r\n" } ?? "") + "Content-Length: \(body.count)\r\n\r\n"
            let responder = try RawResponder(reply: Array(head.utf8) + body)
            defer { responder.stop() }
            _ = try await pipeline.send(Request(url: responder.url("/x")))
        }
        let entries = recorder.har().log.entries
        #expect(entries.count == bodies.count)
        for (entry, sent) in zip(entries, bodies) {
            #expect(entry.response.content.text == nil && entry.response.content.encoding == nil, "\(String(describing: sent.type))")
            #expect(entry.response.content.comment?.contains("cannot be redacted") == true)
            #expect(entry.response.content.size == sent.body.count)
        }
    }

    @Test func concurrentCallsAreEachRecordedOnce() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            let pipeline = Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for call in 0..<20 {
                    group.addTask { _ = try await pipeline.send(Request(url: server.url("/json?call=\(call)"))) }
                }
                try await group.waitForAll()
            }
            let har = try await writeAndCheck(recorder, entries: 20)
            #expect(Set(har.log.entries.map(\.request.url)).count == 20)
            #expect(har.log.entries.map(\.startedDateTime) == har.log.entries.map(\.startedDateTime).sorted())
        }
    }

    /// The check can fail: a time that is not the sum of its timings, or a missing field.
    @Test func theSchemaCheckRejectsWhatIsNotHAR12() async throws {
        try await withTestServer { server in
            let recorder = HARRecorder()
            _ = try await Pipeline(interceptors: [.har(recorder)], dispatcher: CurlDispatcher()).send(Request(url: server.url("/json")))
            var har = recorder.har()
            har.log.entries[0].time += 5
            let wrongTime = try await check(har)
            #expect(wrongTime.status == 1 && wrongTime.output.contains("is not the sum of its timings"), "\(wrongTime)")
            har = recorder.har()
            har.log.entries[0].timings.blocked = -2
            #expect(try await check(har).status == 1)
            var object = try #require(try JSONSerialization.jsonObject(with: recorder.data()) as? [String: Any])
            var log = try #require(object["log"] as? [String: Any])
            log["version"] = "1.1"
            object["log"] = log
            let file = HARCheck.temporaryFile()
            defer { try? FileManager.default.removeItem(at: file) }
            try JSONSerialization.data(withJSONObject: object).write(to: file)
            #expect(try await HARCheck.run(file).status == 1)
        }
    }

    func check(_ har: HAR) async throws -> ProcessOutcome {
        let file = HARCheck.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONEncoder().encode(har).write(to: file)
        return try await HARCheck.run(file)
    }
}
