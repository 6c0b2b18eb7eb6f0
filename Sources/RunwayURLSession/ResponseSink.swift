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
    /// all of it when a validator is kept for its bytes, none otherwise.
    static func make(for request: Request) throws(RunwayError) -> ResponseSink {
        let limit = request.options.maxResponseSize
        guard let download = request.download else {
            return ResponseSink(download: nil, limit: limit, isHead: request.method == .head)
        }
        let partPath = download.partialFile.path
        if download.resume, let attributes = try? FileManager.default.attributesOfItem(atPath: partPath),
            let size = (attributes[.size] as? NSNumber)?.int64Value, size > 0, let validator = download.storedValidator()
        {
            return ResponseSink(
                download: download, limit: limit, resumeOffset: size, resumeValidator: validator, isHead: request.method == .head)
        }
        if FileManager.default.fileExists(atPath: partPath) {
            do {
                try FileManager.default.removeItem(atPath: partPath)
            } catch {
                throw RunwayError(.fileIO, "cannot remove \(partPath)", underlying: error, neverSent: true)
            }
        }
        // Nothing left to label (if it stays, the response's own validator replaces it).
        try? download.storeValidator(nil)
        return ResponseSink(download: download, limit: limit, isHead: request.method == .head)
    }

    /// Prepares for the body of a response with `status` and `headers`.
    func begin(status: Int, headers: HTTPHeaders) throws(RunwayError) {
        discard()
        body = Data()
        appendOffset = 0
        if let download, (200..<300).contains(status) {
            let resuming = status == 206 && resumeOffset > 0
            if resuming {
                let start = headers["Content-Range"].flatMap(DownloadTarget.rangeStart(ofContentRange:))
                guard start == resumeOffset else {
                    throw RunwayError(
                        .responseInvalid,
                        "asked to resume at byte \(resumeOffset), the server answered Content-Range \(headers["Content-Range"] ?? "none")")
                }
                try download.checkResumedVersion(sent: resumeValidator, headers: headers)
            }
            file = try Self.open(download.partialFile, truncate: !resuming)
            appendOffset = resuming ? resumeOffset : 0
            // Emptied first, then labelled: a validator never names bytes of another response.
            if !resuming { try download.storeValidator(DownloadTarget.validator(of: headers)) }
            return
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
    func finish() throws(RunwayError) -> (Data, URL?) {
        guard let file, let download else { return (body, nil) }
        self.file = nil
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: download.file.path, isDirectory: &isDirectory)
        // A folder in the way is the caller's, with whatever it holds: never removed.
        guard !(exists && isDirectory.boolValue) else {
            try? file.close()
            throw RunwayError(
                .fileIO,
                "cannot move the download to \(download.file.path): a folder is there (the bytes stay in \(download.partialFile.path))")
        }
        do {
            try file.close()
            if exists { try FileManager.default.removeItem(at: download.file) }
            try FileManager.default.moveItem(at: download.partialFile, to: download.file)
        } catch {
            throw RunwayError(.fileIO, "cannot move the download to \(download.file.path)", underlying: error)
        }
        try? download.storeValidator(nil)
        return (Data(), download.file)
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
