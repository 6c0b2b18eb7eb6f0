import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Downloads to a file, progress, and resuming after the server cut the first attempt.
extension DispatcherSuite {
    @Test("a download streams to the file and reports progress to the end", arguments: DispatcherUnderTest.all)
    func download(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 3_000_000
            var request = makeRequest(server.url("/download/\(size)")) { $0.maxResponseSize = 1 << 20 }
            let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"))
            request.download = target
            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 10_000)
            request.progress = reporter
            let collected = Task { await progress.reduce(into: [TransferProgress]()) { $0.append($1) } }

            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.fileURL == target.file)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size))
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))

            let events = await collected.value
            #expect(!events.isEmpty)
            #expect(events.last?.bytesReceived == Int64(size))
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived })
        }
    }

    @Test("a cut download resumes with a Range request", arguments: DispatcherUnderTest.all)
    func resumeDownload(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 2_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("resumed.bin"), resume: true)
            var request = makeRequest(server.url("/download/\(size)?cut=\(UUID().uuidString)"))
            request.download = target

            let first = await runwayError { try await dut.send(dispatcher, request) }
            #expect(first?.code == .connectionLost)
            let partial = try Data(contentsOf: target.partialFile)
            #expect(partial.count > 0 && partial.count < size)
            #expect(partial == DeterministicBytes.data(count: partial.count))
            #expect(!FileManager.default.fileExists(atPath: target.file.path))
            #expect(try String(contentsOf: target.validatorFile, encoding: .utf8) == "\"v0\"\n")

            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 10_000)
            request.progress = reporter
            let collected = Task { await progress.reduce(into: [TransferProgress]()) { $0.append($1) } }
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 206)
            #expect(response.headers["Content-Range"] == "bytes \(partial.count)-\(size - 1)/\(size)")
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size))
            let events = await collected.value
            #expect(events.last?.bytesReceived == Int64(size))
            #expect(events.last?.totalBytesToReceive == Int64(size))
            #expect(server.stats.requests(path: "/download/\(size)") == 2)
            #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))
        }
    }

    @Test(
        "a resource changed since the partial file was written comes back whole: If-Range carries the validator",
        arguments: DispatcherUnderTest.all, ["etag", "date"])
    func resumeOfAChangedResource(_ dut: DispatcherUnderTest, validator: String) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 1_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("changed.bin"))
            var request = makeRequest(server.url("/download/\(size)?version=1&validator=\(validator)&cut=\(UUID().uuidString)"))
            request.download = target
            let first = await runwayError { try await dut.send(dispatcher, request) }
            #expect(first?.code == .connectionLost)
            #expect(try Data(contentsOf: target.partialFile).count > 0)

            // The same version again resumes (206); the next version comes whole (200).
            let copy = DownloadTarget(file: directory.appendingPathComponent("copy.bin"))
            try FileManager.default.copyItem(at: target.partialFile, to: copy.partialFile)
            try FileManager.default.copyItem(at: target.validatorFile, to: copy.validatorFile)
            request = makeRequest(server.url("/download/\(size)?version=1&validator=\(validator)"))
            request.download = copy
            #expect(try await dut.send(dispatcher, request).status == 206)
            #expect(try Data(contentsOf: copy.file) == DeterministicBytes.data(count: size, offset: 7))

            request = makeRequest(server.url("/download/\(size)?version=2&validator=\(validator)"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size, offset: 14))
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
            #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))
        }
    }

    @Test(
        "bytes of a response without a strong validator, or with a corrupt one kept, are not resumed: the download starts from zero",
        arguments: DispatcherUnderTest.all, ["none", "weak", "date-recent", "corrupt", "huge"])
    func noValidatorNoResume(_ dut: DispatcherUnderTest, validator: String) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 1_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("unlabelled.bin"))
            let served = ["none", "weak", "date-recent"].contains(validator) ? validator : "etag"
            var request = makeRequest(server.url("/download/\(size)?version=1&validator=\(served)&cut=\(UUID().uuidString)"))
            request.download = target
            let first = await runwayError { try await dut.send(dispatcher, request) }
            #expect(first?.code == .connectionLost)
            #expect(try Data(contentsOf: target.partialFile).count > 0)
            switch validator {
            case "corrupt": try Data([0x22, 0xFF, 0x00, 0x0A, 0x22]).write(to: target.validatorFile)
            case "huge": try Data(repeating: 0x22, count: 100_000).write(to: target.validatorFile)
            default: #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))
            }

            // A range would be served (nothing compares a validator): only a 200 says none was asked.
            request = makeRequest(server.url("/download/\(size)?version=2&validator=none"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size, offset: 14))
        }
    }

    @Test("bytes of an encoded body are never resumed: a range would count the encoded bytes", arguments: DispatcherUnderTest.all)
    func encodedBodyNotResumed(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("encoded.bin"))
            var request = makeRequest(server.url("/encoded/300000?as=corrupt&etag=1"))
            request.download = target
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error != nil)
            #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))
            #expect(!FileManager.default.fileExists(atPath: target.file.path))

            request = makeRequest(server.url("/encoded/300000?as=gzip&etag=1"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 300_000))
        }
    }

    @Test(
        "a server that serves the range of another version (it ignores If-Range) gets .responseInvalid; the partial file goes",
        arguments: DispatcherUnderTest.all, ["version=2", "version=1&validator=date"])
    func rangeOfAnotherVersion(_ dut: DispatcherUnderTest, answer: String) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 1_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("mixed.bin"))
            var request = makeRequest(server.url("/download/\(size)?version=1&cut=\(UUID().uuidString)"))
            request.download = target
            #expect(await runwayError { try await dut.send(dispatcher, request) }?.code == .connectionLost)

            // Another ETag, or none but a Last-Modified (a server that changed the kind it sends).
            request = makeRequest(server.url("/download/\(size)?\(answer)&ignoreIfRange=1"))
            request.download = target
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .responseInvalid, "\(String(describing: error))")
            #expect(error?.message.contains(answer == "version=2" ? "bytes of \"v2\"" : "no ETag") == true, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
            #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))
            #expect(!FileManager.default.fileExists(atPath: target.file.path))

            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size, offset: answer == "version=2" ? 14 : 7))
        }
    }

    @Test(
        "a partial file that holds the whole resource completes on a 416 of its version; a 416 of another version removes it",
        arguments: DispatcherUnderTest.all)
    func rangeNotSatisfiableAtTheEnd(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let whole = DeterministicBytes.data(count: 100_000)
            let target = DownloadTarget(file: directory.appendingPathComponent("whole.bin"))
            try whole.write(to: target.partialFile)
            try Data("\"v0\"\n".utf8).write(to: target.validatorFile)
            var request = makeRequest(server.url("/download/100000"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(response.fileURL == target.file)
            #expect(try Data(contentsOf: target.file) == whole)
            #expect(!FileManager.default.fileExists(atPath: target.validatorFile.path))

            // nginx's 416 carries no validator: the partial file is still taken as whole.
            let bare = DownloadTarget(file: directory.appendingPathComponent("bare.bin"))
            try whole.write(to: bare.partialFile)
            try Data("\"v0\"\n".utf8).write(to: bare.validatorFile)
            request = makeRequest(server.url("/download/100000?bare416=1"))
            request.download = bare
            #expect(try await dut.send(dispatcher, request).status == 200)
            #expect(try Data(contentsOf: bare.file) == whole)

            let other = DownloadTarget(file: directory.appendingPathComponent("other.bin"))
            try whole.write(to: other.partialFile)
            try Data("\"v0\"\n".utf8).write(to: other.validatorFile)
            request = makeRequest(server.url("/download/100000?version=2&ignoreIfRange=1"))
            request.download = other
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .responseInvalid, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: other.partialFile.path))
            #expect(!FileManager.default.fileExists(atPath: other.validatorFile.path))
            #expect(!FileManager.default.fileExists(atPath: other.file.path))
        }
    }

    @Test(
        "a 206 that ends before the resource does, or that answers no Range, is .responseInvalid and the partial file is untouched",
        arguments: DispatcherUnderTest.all)
    func rangeThatIsNotTheRest(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 1_000_000
            let target = DownloadTarget(file: directory.appendingPathComponent("short.bin"))
            var request = makeRequest(server.url("/download/\(size)?cut=\(UUID().uuidString)"))
            request.download = target
            #expect(await runwayError { try await dut.send(dispatcher, request) }?.code == .connectionLost)
            let partial = try Data(contentsOf: target.partialFile)

            request = makeRequest(server.url("/download/\(size)?shortRange=1"))
            request.download = target
            let short = await runwayError { try await dut.send(dispatcher, request) }
            #expect(short?.code == .responseInvalid, "\(String(describing: short))")
            #expect(short?.message.contains("ends before the resource does") == true, "\(String(describing: short))")
            #expect(try Data(contentsOf: target.partialFile) == partial)
            #expect(!FileManager.default.fileExists(atPath: target.file.path))

            request = makeRequest(server.url("/download/\(size)"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 206)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size))

            let fresh = DownloadTarget(file: directory.appendingPathComponent("tail.bin"))
            request = makeRequest(server.url("/download/100000?unaskedRange=500"))
            request.download = fresh
            let unasked = await runwayError { try await dut.send(dispatcher, request) }
            #expect(unasked?.code == .responseInvalid, "\(String(describing: unasked))")
            #expect(!FileManager.default.fileExists(atPath: fresh.file.path))
        }
    }

    @Test(
        "a destination that cannot be written (a file where its folder goes, a folder for the validator) fails before the request goes",
        arguments: DispatcherUnderTest.all)
    func unwritableDestination(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            try Data("a file".utf8).write(to: directory.appendingPathComponent("plain"))
            let targets = [
                DownloadTarget(file: directory.appendingPathComponent("plain/sub/file.bin")),
                DownloadTarget(file: directory.appendingPathComponent("blocked.bin")),
            ]
            try FileManager.default.createDirectory(at: targets[1].validatorFile, withIntermediateDirectories: true)
            for target in targets {
                var request = makeRequest(server.url("/download/1000"))
                request.download = target
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .fileIO, "\(String(describing: error))")
                #expect(error?.neverSent == true, "\(String(describing: error))")
            }
            #expect(server.stats.requests(path: "/download/1000") == 0)
        }
    }

    @Test("resume off restarts from zero", arguments: DispatcherUnderTest.all)
    func downloadWithoutResume(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("fresh.bin"), resume: false)
            try Data("stale bytes".utf8).write(to: target.partialFile)
            var request = makeRequest(server.url("/download/100000"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 100_000))
        }
    }

    @Test(
        "a 206 that does not start where the partial file ends is .responseInvalid, the partial file kept",
        arguments: DispatcherUnderTest.all)
    func resumeAnsweredFromElsewhere(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("ranged.bin"))
            let half = DeterministicBytes.data(count: 50_000)
            try half.write(to: target.partialFile)
            try Data("\"v0\"\n".utf8).write(to: target.validatorFile)
            var request = makeRequest(server.url("/download/100000?badRange=1"))
            request.download = target
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .responseInvalid)
            #expect(error?.message.contains("bytes 0-99999/100000") == true)
            #expect(try Data(contentsOf: target.partialFile) == half)
            #expect(!FileManager.default.fileExists(atPath: target.file.path))
        }
    }

    @Test(
        "a destination whose validator's name is too long for the file system still downloads, from zero after a cut",
        arguments: DispatcherUnderTest.all)
    func validatorNameTooLong(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            // 244 bytes: `.part` makes 249, within the 255 of Linux file systems; `.part.validator` does not fit.
            let target = DownloadTarget(file: directory.appendingPathComponent(String(repeating: "n", count: 240) + ".bin"))
            let size = 1_000_000
            var request = makeRequest(server.url("/download/\(size)?cut=\(UUID().uuidString)"))
            request.download = target
            let first = await runwayError { try await dut.send(dispatcher, request) }
            #expect(first?.code == .connectionLost, "\(String(describing: first))")
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: size))
        }
    }

    @Test("an empty body is an empty file, in a folder made for it, and a stale partial file goes", arguments: DispatcherUnderTest.all)
    func emptyDownload(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("new/folder/empty.bin"), resume: false)
            try FileManager.default.createDirectory(at: target.partialFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("stale".utf8).write(to: target.partialFile)
            var request = makeRequest(server.url("/download/0"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(response.fileURL == target.file)
            #expect(try Data(contentsOf: target.file).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))

            try FileManager.default.removeItem(at: directory.appendingPathComponent("new"))
            let fresh = DownloadTarget(file: directory.appendingPathComponent("new/folder/some.bin"))
            request = makeRequest(server.url("/download/1000"))
            request.download = fresh
            #expect(try await dut.send(dispatcher, request).fileURL == fresh.file)
            #expect(try Data(contentsOf: fresh.file) == DeterministicBytes.data(count: 1000))
        }
    }

    @Test(
        "a destination that is a folder or a named pipe, or a link to one, is refused with .fileIO before anything is sent, and kept",
        arguments: DispatcherUnderTest.all)
    func destinationThatIsNotAFile(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: folder.appendingPathComponent("inside"))
        let pipe = directory.appendingPathComponent("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: pipe)
        try await withTestServer { server in
            for destination in [folder, pipe, link] {
                var request = makeRequest(server.url("/download/1000"))
                request.download = DownloadTarget(file: destination)
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .fileIO, "\(destination.lastPathComponent): \(String(describing: error))")
                #expect(error?.neverSent == true, "\(destination.lastPathComponent)")
                #expect(error?.message.contains("is not a file") == true, "\(String(describing: error))")
            }
            #expect(server.stats.totalRequests == 0)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["inside"])
        var info = stat()
        #expect(lstat(pipe.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
        #expect(lstat(link.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
    }

    @Test("a destination under a file, not a folder, is refused with .fileIO naming that file", arguments: DispatcherUnderTest.all)
    func destinationUnderAFile(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("notes.txt")
        try Data("kept".utf8).write(to: file)
        try await withTestServer { server in
            for destination in [file.appendingPathComponent("x.bin"), file.appendingPathComponent("deeper/x.bin")] {
                var request = makeRequest(server.url("/download/1000"))
                request.download = DownloadTarget(file: destination)
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .fileIO, "\(String(describing: error))")
                #expect(error?.neverSent == true)
                #expect(error?.message.contains("\(file.path) is a file, not a folder") == true, "\(String(describing: error))")
            }
            #expect(server.stats.totalRequests == 0)
        }
        #expect(try Data(contentsOf: file) == Data("kept".utf8))
    }

    @Test(
        "a second download to a destination while the first runs is refused with .fileIO, before it sends anything",
        arguments: DispatcherUnderTest.all)
    func concurrentDownloadsToOneFile(_ dut: DispatcherUnderTest) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dispatcher = dut.make()
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"))
            var first = makeRequest(server.url("/slow?ms=600000"))
            first.download = target
            let running = Task { try await dut.send(dispatcher, first) }
            #expect(await eventually { server.stats.requests(path: "/slow") == 1 })
            var second = makeRequest(server.url("/download/1000"))
            second.download = target
            let error = await runwayError { try await dut.send(dispatcher, second) }
            #expect(error?.code == .fileIO, "\(String(describing: error))")
            #expect(error?.message.contains("another download") == true, "\(String(describing: error))")
            #expect(error?.neverSent == true)
            #expect(server.stats.requests(path: "/download/1000") == 0)
            // Once the first has ended, the destination is free again (from zero: the first
            // left its bytes of another resource in the partial file).
            running.cancel()
            _ = await running.result
            second.download = DownloadTarget(file: target.file, resume: false)
            let response = try await dut.send(dispatcher, second)
            #expect(response.fileURL == target.file)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 1000))
        }
    }

    @Test(
        "a partial file locked for a moment only (by a child process being started) does not refuse the download",
        arguments: DispatcherUnderTest.all)
    func aLockHeldForAMomentIsWaitedFor(_ dut: DispatcherUnderTest) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dispatcher = dut.make()
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"), resume: false)
            // Another holder of the lock for 50 ms from now, on a thread of its own (as a child
            // process would be, outside Swift's threads).
            let holder = open(target.partialFile.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            #expect(holder >= 0)
            #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
            Thread.detachNewThread {
                usleep(50_000)
                close(holder)
            }
            var request = makeRequest(server.url("/download/1000"))
            request.download = target
            let response = try await dut.send(dispatcher, request)
            #expect(response.fileURL == target.file)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 1000))
        }
    }

    @Test(
        "a download that waited for the lock of one that then ended works on a partial file of its own, leaving the first's file alone",
        arguments: DispatcherUnderTest.all, ["moved", "removed"])
    func waitedForADownloadThatEnded(_ dut: DispatcherUnderTest, ending: String) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for answer in ["/status/404", "/download/1000"] {
                let directory = try temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"))
                let earlier = Data("the first download's file".utf8)
                // The first download, as a dispatcher runs it: it holds the partial file's lock,
                // and moves the file into place (or removes it, on a failure) before it lets go.
                let holder = open(target.partialFile.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                #expect(holder >= 0)
                #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
                let (partial, file) = (target.partialFile.path, target.file.path)
                Thread.detachNewThread {
                    usleep(50_000)
                    _ = earlier.withUnsafeBytes { write(holder, $0.baseAddress, $0.count) }
                    _ = ending == "moved" ? rename(partial, file) : unlink(partial)
                    close(holder)
                }
                var request = makeRequest(server.url(answer))
                request.download = target
                let response = try await dut.send(dispatcher, request)
                if answer == "/status/404" {
                    #expect(response.status == 404)
                    #expect(response.fileURL == nil)
                    #expect((try? Data(contentsOf: target.file)) == (ending == "moved" ? earlier : nil), "\(answer)")
                } else {
                    #expect(response.fileURL == target.file)
                    #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 1000))
                }
                #expect(!FileManager.default.fileExists(atPath: target.partialFile.path), "\(answer)")
            }
        }
    }

    @Test("a partial file longer than the resource is removed with a .responseInvalid, and the next attempt downloads it whole")
    func partialFileLongerThanTheResource() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"))
            try Data(repeating: 0x41, count: 5000).write(to: target.partialFile)
            try Data("\"v0\"\n".utf8).write(to: target.validatorFile)
            var request = makeRequest(server.url("/download/1000"))
            request.download = target
            let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(error?.code == .responseInvalid, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(response.status == 200)
            #expect(try Data(contentsOf: target.file) == DeterministicBytes.data(count: 1000))
        }
    }

    @Test("a download that gets no body (a 404) leaves no partial file behind")
    func failedDownloadLeavesNoPartialFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = DownloadTarget(file: directory.appendingPathComponent("file.bin"))
            var request = makeRequest(server.url("/status/404"))
            request.download = target
            let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
            #expect(response.status == 404)
            #expect(response.fileURL == nil)
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
            #expect(!FileManager.default.fileExists(atPath: target.file.path))
        }
    }

    @Test(
        "a cut download of a range the request asks for itself is never resumed as the resource's start: it starts over",
        arguments: DispatcherUnderTest.all)
    func ownRangeNeverResumed(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = 1000
        let resource = DeterministicBytes.data(count: size)
        let requests = Counter()
        // A server that serves the last `Range` field it gets (`bytes=a-b` or `bytes=a-`) of
        // version "v0", and cuts its first and third answers halfway.
        let responder = try ScriptedResponder { exchange in
            let ranges = exchange.head.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("range:") }
            guard let range = ranges.last?.split(separator: "=").last else {
                return .reply(Array("HTTP/1.1 200 OK\r\nETag: \"v0\"\r\nContent-Length: \(size)\r\n\r\n".utf8) + Array(resource))
            }
            let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
            let from = Int(bounds[0]) ?? 0
            let to = bounds.count > 1 ? Int(bounds[1]) ?? size - 1 : size - 1
            let head =
                "HTTP/1.1 206 Partial Content\r\nETag: \"v0\"\r\nContent-Range: bytes \(from)-\(to)/\(size)\r\n"
                + "Content-Length: \(to + 1 - from)\r\n\r\n"
            let body = Array(resource[from...to])
            return [1, 3].contains(requests.increment())
                ? .replyAndClose(Array(head.utf8) + body.prefix(body.count / 2)) : .reply(Array(head.utf8) + body)
        }
        defer { responder.stop() }

        let target = DownloadTarget(file: directory.appendingPathComponent("range.bin"))
        var request = makeRequest(responder.url("/file"), headers: ["Range": "bytes=100-199"])
        request.download = target
        let cut = await runwayError { try await dut.send(dispatcher, request) }
        #expect(cut?.code == .connectionLost, "\(String(describing: cut))")

        // Again: the range asked for, whole, and only it (one Range field).
        let response = try await dut.send(dispatcher, request)
        #expect(response.status == 206)
        #expect(try Data(contentsOf: target.file) == resource[100...199])
        let heads = responder.exchanges.map(\.head)
        #expect(heads.count == 2)
        #expect(heads.allSatisfy { $0.lowercased().components(separatedBy: "\r\nrange:").count == 2 }, "\(heads)")

        // Cut again, then the whole resource to the same file: the range's bytes are not its start.
        let cutAgain = await runwayError { try await dut.send(dispatcher, request) }
        #expect(cutAgain?.code == .connectionLost, "\(String(describing: cutAgain))")
        request.headers["Range"] = nil
        let whole = try await dut.send(dispatcher, request)
        #expect(whole.status == 200)
        #expect(try Data(contentsOf: target.file) == resource)
    }

    @Test(
        "a 206 whose Content-Range gives no complete length (*) and whose body ends before the range does is .responseInvalid",
        arguments: DispatcherUnderTest.all)
    func rangeOfUnknownLengthCutShort(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let resource = DeterministicBytes.data(count: 1000)
        // The rest of "v0" from byte 500 to 999 of a length it does not give, framed as 100 bytes.
        let responder = try ScriptedResponder { _ in
            let head = "HTTP/1.1 206 Partial Content\r\nETag: \"v0\"\r\nContent-Range: bytes 500-999/*\r\nContent-Length: 100\r\n\r\n"
            return .reply(Array(head.utf8) + Array(resource[500..<600]))
        }
        defer { responder.stop() }
        let target = DownloadTarget(file: directory.appendingPathComponent("unknown.bin"))
        try resource.prefix(500).write(to: target.partialFile)
        try Data("\"v0\"\n".utf8).write(to: target.validatorFile)
        var request = makeRequest(responder.url("/file"))
        request.download = target
        let error = await runwayError { try await dut.send(dispatcher, request) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("holds 600 bytes, not the 1000") == true, "\(String(describing: error))")
        #expect(responder.exchanges.first?.head.contains("Range: bytes=500-") == true)
        #expect(!FileManager.default.fileExists(atPath: target.file.path))
        #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
