import Foundation
import RunwayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a response body goes: memory, bounded by ``RequestOptions/maxResponseSize``, or the
/// `.part` file of a ``DownloadTarget`` (renamed to the target when the transfer succeeds).
///
/// Only an error response (not 2xx) of a download goes to memory, so the file keeps the bytes
/// of the last good attempt for a later resume. A download holds its partial file locked from
/// ``make(for:)`` until ``end()`` (``DownloadTarget/lockPartialFile()``): a second download to the
/// same destination is refused instead of writing into the same file. Not thread-safe: its
/// ``Transfer`` serialises every call under its lock.
final class ResponseSink {
    private let download: DownloadTarget?
    private let limit: Int
    /// Bytes already in the `.part` file when the request was made (the `Range` start).
    let resumeOffset: Int64
    /// The validator of those bytes, sent as `If-Range`.
    let resumeValidator: String?
    /// Bytes the current response appends to (``resumeOffset`` when the server resumed, else 0).
    private(set) var appendOffset: Int64 = 0
    /// What the partial file must hold once a resumed range is in (its complete length).
    private var expectedSize: Int64?
    /// Whether the partial file already holds the whole resource (a 416 at its end).
    private var completesFromPartialFile = false
    private var body = Data()
    /// Writes into the partial file through ``partialFile``, which it does not close.
    private var file: FileHandle?
    /// The partial file, open and locked until ``end()``; -1 once let go, or for no download.
    private var partialFile: Int32

    /// Whether the request was a HEAD, whose response announces a length it does not send.
    private let isHead: Bool

    private init(
        download: DownloadTarget?, partialFile: Int32 = -1, limit: Int, resumeOffset: Int64 = 0, resumeValidator: String? = nil,
        isHead: Bool
    ) {
        self.download = download
        self.partialFile = partialFile
        self.limit = limit
        self.resumeOffset = resumeOffset
        self.resumeValidator = resumeValidator
        self.isHead = isHead
    }

    deinit {
        end()
    }

    /// A sink for `request`; for a download, takes the partial file (made if missing) and finds
    /// how much of it can be resumed: all of it when a validator is kept for its bytes, none
    /// otherwise (it is emptied). A destination that cannot be written (its folder read-only, a
    /// folder where the validator goes), or that another download is writing, fails here with
    /// `neverSent`, before the request goes.
    static func make(for request: Request) throws(RunwayError) -> ResponseSink {
        let limit = request.options.maxResponseSize
        let isHead = request.method == .head
        guard let download = request.download else {
            return ResponseSink(download: nil, limit: limit, isHead: isHead)
        }
        try download.checkPlaces()
        try download.makeFolder()
        let (descriptor, size) = try download.lockPartialFile()
        if download.resumes(request), size > 0, let validator = download.storedValidator() {
            return ResponseSink(
                download: download, partialFile: descriptor, limit: limit, resumeOffset: size, resumeValidator: validator, isHead: isHead)
        }
        // Nothing in it is resumed: emptied in place, so the lock stays on the file at the path.
        if size > 0, ftruncate(descriptor, 0) != 0 {
            let reason = String(cString: strerror(errno))
            download.unlockPartialFile(descriptor, removingIfEmpty: false)
            throw RunwayError(.fileIO, "cannot empty \(download.partialFile.path): \(reason)", neverSent: true)
        }
        // Nothing left to label (if it stays, the response's own validator replaces it).
        try? download.storeValidator(nil)
        return ResponseSink(download: download, partialFile: descriptor, limit: limit, isHead: isHead)
    }

    /// Prepares for the body of a response with `status` and `headers`: for a download, where
    /// ``DownloadTarget/landing(status:headers:resumeOffset:sentValidator:asksOwnRange:)`` says.
    func begin(status: Int, headers: HTTPHeaders, asksOwnRange: Bool) throws(RunwayError) {
        discard()
        body = Data()
        appendOffset = 0
        expectedSize = nil
        completesFromPartialFile = false
        if let download {
            switch try download.landing(
                status: status, headers: headers, resumeOffset: resumeOffset, sentValidator: resumeValidator, asksOwnRange: asksOwnRange)
            {
            case .file(let append, let expected):
                file = try openPartialFile(download, truncate: !append)
                appendOffset = append ? resumeOffset : 0
                expectedSize = expected
                // Emptied first, then labelled: a validator never names bytes of another response.
                if !append { try download.storeValidator(DownloadTarget.validator(of: headers, asksOwnRange: asksOwnRange)) }
                return
            case .complete:
                completesFromPartialFile = true
                return
            case .memory:
                break
            }
        }
        // A HEAD, 1xx, 204 or 304 response has no body, whatever length it announces.
        let hasBody = !isHead && status >= 200 && status != 204 && status != 304
        if hasBody, headers["Content-Encoding"] == nil, let length = headers["Content-Length"].flatMap(Int.init), length > limit {
            throw RunwayError(.responseTooLarge, "the response announces \(length) bytes, the limit is \(limit)")
        }
    }

    /// Takes the next piece of the (decompressed) body.
    func append(_ data: Data) throws(RunwayError) {
        if let file {
            do {
                try file.write(contentsOf: data)
            } catch {
                throw RunwayError(.fileIO, "cannot write \(download?.partialFile.path ?? "")", underlying: error)
            }
            return
        }
        guard body.count + data.count <= limit else {
            throw RunwayError(.responseTooLarge, "the response body is over the limit of \(limit) bytes")
        }
        body.append(data)
    }

    /// Completes the body: the bytes in memory, or the download moved into place.
    func finish() throws(RunwayError) -> (body: Data, fileURL: URL?, completedFromPartialFile: Bool) {
        guard let download, file != nil || completesFromPartialFile else { return (body, nil, false) }
        file = nil
        if let expectedSize {
            let size = (try? FileManager.default.attributesOfItem(atPath: download.partialFile.path)[.size] as? NSNumber)?.int64Value
            guard size == expectedSize else {
                // The range's bytes are in, and the file is still not the resource's length.
                download.removePartialFiles()
                throw RunwayError(
                    .responseInvalid,
                    "the resumed download holds \(size ?? -1) bytes, not the \(expectedSize) its Content-Range gives: the partial file was "
                        + "removed, and the next attempt starts from zero")
            }
        }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: download.file.path, isDirectory: &isDirectory)
        // A folder in the way is the caller's, with whatever it holds: never removed.
        guard !(exists && isDirectory.boolValue) else {
            throw RunwayError(
                .fileIO,
                "cannot move the download to \(download.file.path): a folder is there (the bytes stay in \(download.partialFile.path))")
        }
        do {
            if exists { try FileManager.default.removeItem(at: download.file) }
            try FileManager.default.moveItem(at: download.partialFile, to: download.file)
        } catch {
            throw RunwayError(.fileIO, "cannot move the download to \(download.file.path)", underlying: error)
        }
        try? download.storeValidator(nil)
        return (Data(), download.file, completesFromPartialFile)
    }

    /// Stops writing, keeping what the `.part` file holds for a later resume.
    func discard() {
        file = nil
    }

    /// Lets go of the partial file once the transfer has ended (moved into place, or kept for a
    /// resume; removed if empty). Safe to call more than once.
    func end() {
        file = nil
        guard partialFile >= 0 else { return }
        if let download {
            download.unlockPartialFile(partialFile, removingIfEmpty: true)
        } else {
            close(partialFile)
        }
        partialFile = -1
    }

    /// A handle writing at the end of the locked partial file, emptied first when `truncate`.
    private func openPartialFile(_ download: DownloadTarget, truncate: Bool) throws(RunwayError) -> FileHandle {
        guard partialFile >= 0 else {
            throw RunwayError(.fileIO, "the partial file \(download.partialFile.path) is no longer held")
        }
        if truncate, ftruncate(partialFile, 0) != 0 {
            throw RunwayError(.fileIO, "cannot empty \(download.partialFile.path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: partialFile, closeOnDealloc: false)
        do {
            try handle.seekToEnd()
        } catch {
            throw RunwayError(.fileIO, "cannot write \(download.partialFile.path)", underlying: error)
        }
        return handle
    }
}
