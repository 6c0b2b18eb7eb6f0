import Foundation
import RunwayCore

/// Where a response body goes: memory, bounded by ``RequestOptions/maxResponseSize``, or the
/// `.part` file of a ``DownloadTarget`` (renamed to the target when the transfer succeeds).
///
/// Only an error response (not 2xx) of a download goes to memory, so the file keeps the bytes
/// of the last good attempt for a later resume. Not thread-safe: its ``Transfer`` serialises
/// every call under its lock.
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
    private var file: FileHandle?

    /// Whether the request was a HEAD, whose response announces a length it does not send.
    private let isHead: Bool

    private init(download: DownloadTarget?, limit: Int, resumeOffset: Int64 = 0, resumeValidator: String? = nil, isHead: Bool) {
        self.download = download
        self.limit = limit
        self.resumeOffset = resumeOffset
        self.resumeValidator = resumeValidator
        self.isHead = isHead
    }

    /// A sink for `request`; for a download, finds how much of the `.part` file can be resumed:
    /// all of it when a validator is kept for its bytes, none otherwise. A destination that
    /// cannot be written (its folder read-only, a folder where the validator goes) fails here,
    /// before the request goes.
    static func make(for request: Request) throws(RunwayError) -> ResponseSink {
        let limit = request.options.maxResponseSize
        guard let download = request.download else {
            return ResponseSink(download: nil, limit: limit, isHead: request.method == .head)
        }
        try download.checkPlaces()
        let partPath = download.partialFile.path
        if download.resumes(request), let attributes = try? FileManager.default.attributesOfItem(atPath: partPath),
            let size = (attributes[.size] as? NSNumber)?.int64Value, size > 0, let validator = download.storedValidator()
        {
            try checkWritable(download.partialFile, resuming: true)
            return ResponseSink(
                download: download, limit: limit, resumeOffset: size, resumeValidator: validator, isHead: request.method == .head)
        }
        // Nothing in it is resumed: removed, once the folder proves writable.
        try checkWritable(download.partialFile, resuming: false)
        // Nothing left to label (if it stays, the response's own validator replaces it).
        try? download.storeValidator(nil)
        return ResponseSink(download: download, limit: limit, isHead: request.method == .head)
    }

    /// Checks that the partial file can be written, its folder made if missing: the one there
    /// when `resuming`; else by making it anew, then removing it (nothing in it is resumed).
    /// - Throws: `.fileIO` with `neverSent`.
    private static func checkWritable(_ file: URL, resuming: Bool) throws(RunwayError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw RunwayError(.fileIO, "cannot make the folder of \(file.path)", underlying: error, neverSent: true)
        }
        guard resuming ? manager.isWritableFile(atPath: file.path) : manager.createFile(atPath: file.path, contents: nil) else {
            throw RunwayError(.fileIO, "cannot write \(file.path) (is its folder writable?)", neverSent: true)
        }
        if !resuming {
            do {
                try manager.removeItem(at: file)
            } catch {
                throw RunwayError(.fileIO, "cannot remove \(file.path)", underlying: error, neverSent: true)
            }
        }
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
                file = try Self.open(download.partialFile, truncate: !append)
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
        try? file?.close()
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
        try? file?.close()
        file = nil
    }

    private static func open(_ url: URL, truncate: Bool) throws(RunwayError) -> FileHandle {
        do {
            let manager = FileManager.default
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if truncate || !manager.fileExists(atPath: url.path) {
                guard manager.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown)
                }
            }
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            return handle
        } catch {
            throw RunwayError(.fileIO, "cannot open \(url.path) for writing", underlying: error)
        }
    }
}
