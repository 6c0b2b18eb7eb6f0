import Foundation
import Runway
import Testing

/// The POSIX file reader under streamed request bodies and multipart forms, and the errors a
/// caller sees through `RequestBodyStream` and `MultipartForm`.
@Suite("FileReader")
struct FileReaderTests {
    /// A new file holding `bytes`, removed by the caller.
    static func file(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-reader-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    @Test("reads a file in pieces, says where it ends, and starts over")
    func readsRewindsAndEnds() throws {
        let bytes = (0..<1_000).map { UInt8($0 % 251) }
        let url = try Self.file(bytes)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try FileReader(path: url.path)
        var read: [UInt8] = []
        while true {
            let chunk = try reader.read(upTo: 300)
            if chunk.isEmpty { break }
            #expect(chunk.count <= 300)
            read += chunk
        }
        #expect(read == bytes)
        try reader.rewind()
        #expect(Array(try reader.read(upTo: 10)) == Array(bytes[0..<10]))
        #expect(try FileReader.attributes(ofPath: url.path) == (isRegularFile: true, size: 1_000))
    }

    @Test("a missing file is ENOENT, a folder reads as EISDIR and is no regular file")
    func openErrors() throws {
        let missing = "/nonexistent/runway-\(UUID().uuidString)"
        #expect(throws: POSIXError(.ENOENT)) { try FileReader(path: missing) }
        #expect(throws: POSIXError(.ENOENT)) { try FileReader.attributes(ofPath: missing) }
        #expect(POSIXError(.ENOENT).message == "No such file or directory")

        let folder = FileManager.default.temporaryDirectory.path
        #expect(try FileReader.attributes(ofPath: folder).isRegularFile == false)
        // open(2) takes a folder for reading; read(2) refuses it.
        let reader = try FileReader(path: folder)
        #expect(throws: POSIXError(.EISDIR)) { try reader.read(upTo: 10) }
    }

    @Test("a symbolic link is followed, as opening the file does; one that points nowhere is ENOENT")
    func symbolicLink() throws {
        let url = try Self.file([1, 2, 3])
        let link = url.appendingPathExtension("link")
        let dangling = url.appendingPathExtension("dangling")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: url.appendingPathExtension("gone"))
        defer {
            for file in [link, dangling, url] { try? FileManager.default.removeItem(at: file) }
        }
        let attributes = try FileReader.attributes(ofPath: link.path)
        #expect(attributes.isRegularFile && attributes.size == 3)
        #expect(try RequestBodyStream.file(link).length == 3)
        #expect(throws: POSIXError(.ENOENT)) { try FileReader.attributes(ofPath: dangling.path) }
        #expect { try RequestBodyStream.file(dangling) } throws: { ($0 as? RunwayError)?.code == .fileIO }
    }

    @Test("after close, reads and rewinds fail with EBADF; a second close does nothing")
    func closed() throws {
        let url = try Self.file([1, 2, 3])
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try FileReader(path: url.path)
        reader.close()
        reader.close()
        #expect(throws: POSIXError(.EBADF)) { try reader.read(upTo: 1) }
        #expect(throws: POSIXError(.EBADF)) { try reader.rewind() }
    }

    @Test("releasing a reader closes its descriptor")
    func releaseCloses() throws {
        let url = try Self.file([1, 2, 3])
        defer { try? FileManager.default.removeItem(at: url) }
        // Descriptors open on this test's own file: other tests running in parallel open and
        // close theirs meanwhile, so a count of all of them proves nothing.
        do {
            let held = try FileReader(path: url.path)
            #expect(try Self.descriptors(openOn: url) == 1)
            withExtendedLifetime(held) {}
        }
        for _ in 0..<50 { _ = try FileReader(path: url.path) }
        #expect(try Self.descriptors(openOn: url) == 0)
    }

    /// How many of the process's descriptors are open on `file` (Linux's /proc/self/fd).
    static func descriptors(openOn file: URL) throws -> Int {
        let target = file.resolvingSymlinksInPath().path
        let folder = "/proc/self/fd"
        return try FileManager.default.contentsOfDirectory(atPath: folder).count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)) == target
        }
    }

    @Test("RequestBodyStream.file: a missing file, a folder, a file gone before the send are .fileIO, saying why")
    func bodyStreamErrors() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/runway-body")
        #expect {
            try RequestBodyStream.file(missing)
        } throws: {
            let error = $0 as? RunwayError
            return error?.code == .fileIO && error?.message == "cannot read /nonexistent/runway-body: No such file or directory"
                && (error?.underlying as? POSIXError)?.code == .ENOENT
        }
        #expect {
            try RequestBodyStream.file(FileManager.default.temporaryDirectory)
        } throws: { ($0 as? RunwayError)?.code == .fileIO && ($0 as? RunwayError)?.message.contains("not a regular file") == true }

        let url = try Self.file([1, 2, 3])
        let stream = try RequestBodyStream.file(url)
        try FileManager.default.removeItem(at: url)
        await #expect {
            try await stream.collect(upTo: 100)
        } throws: {
            let error = $0 as? RunwayError
            return error?.code == .fileIO && error?.message.hasPrefix("cannot open ") == true
                && error?.message.hasSuffix(" to send it: No such file or directory") == true
        }
    }

    @Test("a file that shrinks while it is sent fails the send; the bytes read so far are the file's")
    func shrinkingFile() async throws {
        let url = try Self.file(Array(repeating: 7, count: 100_000))
        defer { try? FileManager.default.removeItem(at: url) }
        let stream = try RequestBodyStream.file(url)
        try Data(repeating: 7, count: 10).write(to: url)
        await #expect {
            try await stream.collect(upTo: 1 << 20)
        } throws: {
            ($0 as? RunwayError)?.code == .fileIO && ($0 as? RunwayError)?.message.contains("ended after 10 of its 100000 bytes") == true
        }
    }

    @Test("a multipart form whose file is gone fails with .fileIO naming it")
    func multipartMissingFile() async throws {
        let url = try Self.file([1, 2, 3])
        var form = MultipartForm()
        try form.append(contentsOf: url, name: "upload")
        try FileManager.default.removeItem(at: url)
        let stream = form.bodyStream
        await #expect {
            try await stream.collect(upTo: 1 << 20)
        } throws: {
            let error = $0 as? RunwayError
            return error?.code == .fileIO && error?.message == "cannot open \(url.path) to send it: No such file or directory"
        }
    }
}
