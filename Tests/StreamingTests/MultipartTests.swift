import Crypto
import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// What the Python server's MIME parser read of one part.
struct ParsedPart: Decodable, Equatable {
    var name: String?
    var filename: String?
    var contentType: String?
    var size: Int
    var sha256: String
}

/// `multipart/form-data` bodies sent through `CurlDispatcher` to a Python server that parses them
/// with the standard library's MIME parser (`Scripts/multipart_server.py`), a parser of its own.
@Suite("Multipart form uploads")
struct MultipartTests {
    /// The Python server that parses uploads (`Scripts/multipart_server.py`); it exits when its
    /// standard input closes.
    static func startParser() async throws -> PythonServer {
        try await PythonServer.start(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/multipart_server.py"))
    }

    static func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    static func send(_ form: MultipartForm, to server: PythonServer, dispatcher: CurlDispatcher) async throws -> [ParsedPart] {
        var request = Request(method: .post, url: URL(string: "http://127.0.0.1:\(server.port)/form")!)
        request.setBody(form)
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try JSONDecoder().decode([ParsedPart].self, from: response.body)
    }

    @Test("fields, bytes and files of every size reach the parser whole, each with its name, file name and type")
    func partsArriveWhole() async throws {
        let server = try await Self.startParser()
        let dispatcher = CurlDispatcher()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A file whose bytes look like the boundary's neighbours, lines and all.
        let tricky = Data("--\r\n\r\n--RunwayForm\r\nContent-Disposition: form-data\r\n\r\n".utf8) + DeterministicBytes.data(count: 3_000)
        let sizes = [0, 1, 65_535, 65_536, 65_537, 2_500_000]
        var files: [URL] = []
        for size in sizes {
            let file = directory.appendingPathComponent("photo \(size).bin")
            try DeterministicBytes.data(count: size).write(to: file)
            files.append(file)
        }

        var form = MultipartForm()
        form.append("Flat with a \"view\"\r\nand a second line, 上海", name: "title")
        form.append("", name: "empty")
        try form.append(tricky, name: "raw", filename: "tricky.txt", contentType: "text/plain; charset=utf-8")
        for (size, file) in zip(sizes, files) { try form.append(contentsOf: file, name: "file-\(size)", contentType: "image/jpeg") }
        form.append("last", name: "name with \"quotes\"")

        let parts = try await Self.send(form, to: server, dispatcher: dispatcher)
        try #require(parts.count == 4 + sizes.count)
        let title = Data("Flat with a \"view\"\r\nand a second line, 上海".utf8)
        #expect(parts[0] == ParsedPart(name: "title", filename: nil, contentType: nil, size: title.count, sha256: Self.hex(title)))
        #expect(parts[1].name == "empty" && parts[1].size == 0)
        // The parser renders the parameter quoted.
        let raw = ParsedPart(
            name: "raw", filename: "tricky.txt", contentType: "text/plain; charset=\"utf-8\"", size: tricky.count, sha256: Self.hex(tricky))
        #expect(parts[2] == raw)
        for (index, size) in sizes.enumerated() {
            let part = parts[3 + index]
            #expect(part.name == "file-\(size)")
            #expect(part.filename == "photo \(size).bin")
            #expect(part.contentType == "image/jpeg")
            #expect(part.size == size)
            #expect(part.sha256 == Self.hex(DeterministicBytes.data(count: size)))
        }
        // Quotes in a name are percent-encoded, as browsers do: they cannot end the header value.
        #expect(parts.last?.name == "name with %22quotes%22")
        #expect(form.length == (try await form.bodyStream.collect(upTo: 10 << 20)).count)
    }

    @Test("a form can be sent again from its start, and an empty form is a valid body")
    func sentAgain() async throws {
        let server = try await Self.startParser()
        let dispatcher = CurlDispatcher()
        var form = MultipartForm()
        form.append("1", name: "a")
        for _ in 0..<2 { #expect(try await Self.send(form, to: server, dispatcher: dispatcher).map(\.name) == ["a"]) }
        #expect(form.bodyStream.isReplayable)
        let body = try await MultipartForm(boundary: "b").bodyStream.collect(upTo: 100)
        #expect(String(decoding: body, as: UTF8.self) == "--b--\r\n")
    }

    @Test("a boundary with characters a parameter value cannot hold bare is quoted in Content-Type, and the parser reads it")
    func boundaryThatNeedsQuotes() async throws {
        let server = try await Self.startParser()
        let dispatcher = CurlDispatcher()
        for boundary in ["a b", "x:y", "k=v", "what?", "dir/name", "one,two", "(c)", "it's"] {
            var form = try MultipartForm(boundary: boundary)
            form.append("value", name: "field")
            #expect(form.contentType == "multipart/form-data; boundary=\"\(boundary)\"")
            let parts = try await Self.send(form, to: server, dispatcher: dispatcher)
            #expect(parts.map(\.name) == ["field"], "boundary \(boundary)")
        }
        // Letters, digits and + - . _ need none, as browsers' boundaries.
        #expect(try MultipartForm(boundary: "----Web+Kit_Form.1").contentType == "multipart/form-data; boundary=----Web+Kit_Form.1")
        let random = MultipartForm()
        #expect(random.contentType == "multipart/form-data; boundary=\(random.boundary)")
    }

    @Test("a backslash in a name or file name is percent-encoded: a quoted-string parser never takes it as an escape")
    func backslashesInNames() async throws {
        let server = try await Self.startParser()
        var form = MultipartForm()
        // Ending in a backslash, the name would escape its closing quote and swallow the file name.
        try form.append(Data("x".utf8), name: "folder\\", filename: "C:\\photos\\a.jpg", contentType: "image/jpeg")
        form.append("y", name: "a\\b")
        let parts = try await Self.send(form, to: server, dispatcher: CurlDispatcher())
        try #require(parts.count == 2)
        #expect(parts[0].name == "folder%5C")
        #expect(parts[0].filename == "C:%5Cphotos%5Ca.jpg")
        #expect(parts[0].contentType == "image/jpeg")
        #expect(parts[1].name == "a%5Cb")
    }

    @Test("a file that grew since it was added fails the call with .invalidRequest: never sent cut short", arguments: [0, 100_000])
    func fileThatGrew(_ size: Int) async throws {
        let server = try await Self.startParser()
        let dispatcher = CurlDispatcher()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-grows-\(UUID().uuidString)")
        try Data(count: size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartForm()
        try form.append(contentsOf: file, name: "file")
        form.append("after", name: "next")
        try Data(count: size + 1).write(to: file)
        var request = Request(method: .post, url: URL(string: "http://127.0.0.1:\(server.port)/form")!)
        request.setBody(form)
        await #expect {
            try await dispatcher.dispatch(request, context: RequestContext())
        } throws: {
            let error = $0 as? RunwayError
            return error?.code == .invalidRequest && error?.message.contains("holds more than the \(size) bytes") == true
        }
    }

    @Test("a file that changes size before it is sent fails the call; bad input is refused typed")
    func badInput() async throws {
        let server = try await Self.startParser()
        let dispatcher = CurlDispatcher()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-shrinks-\(UUID().uuidString)")
        try Data(count: 100_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartForm()
        try form.append(contentsOf: file, name: "file")
        try Data(count: 10).write(to: file)
        var request = Request(method: .post, url: URL(string: "http://127.0.0.1:\(server.port)/form")!)
        request.setBody(form)
        await #expect {
            try await dispatcher.dispatch(request, context: RequestContext())
        } throws: { ($0 as? RunwayError)?.code == .invalidRequest }

        #expect(throws: RunwayError.self) { try MultipartForm(boundary: "") }
        #expect(throws: RunwayError.self) { try MultipartForm(boundary: "a\r\nb") }
        #expect(throws: RunwayError.self) { try MultipartForm(boundary: String(repeating: "x", count: 71)) }
        #expect(throws: RunwayError.self) { try form.append(Data(), name: "x", contentType: "text/plain\r\nX-Injected: 1") }
        #expect(throws: RunwayError.self) { try form.append(contentsOf: URL(fileURLWithPath: "/nonexistent/file"), name: "x") }
    }
}
