import CCurl
import Foundation
import Runway
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state of one request inside the ``CurlMulti`` loop.
///
/// `@unchecked Sendable` because it is handed over exactly once: the caller fills it and
/// submits it under the multi's lock, and from then on only the loop thread touches it (libcurl
/// calls the callbacks below on that thread, inside `curl_multi_socket_action`), until `finish` hands
/// the outcome back to the caller (``takeOutcome()``, after the resume). The one exception,
/// `cancelRequested`, is only read and written while holding the multi's lock.
final class CurlTransfer: @unchecked Sendable {
    let request: Request
    /// Computed on the caller's thread, so the loop thread does not touch `URL`.
    let urlString: String
    let isSecure: Bool
    var continuation: UnsafeContinuation<Void, Never>?
    /// The outcome, written by `finish` on the loop thread before it resumes the caller and read
    /// by the caller after (``takeOutcome()``). The release/acquire on `outcomeSet` is the
    /// hand-over the thread sanitizer can see: when libcurl finishes a transfer before the
    /// caller has suspended (a refused connection), the Swift runtime hands the continuation
    /// over on a path TSan does not observe, and it would report the outcome's fields as a race.
    private var outcome: Result<Response, RunwayError>?
    private let outcomeSet = Atomic<Bool>(false)
    var cancelRequested = false
    var easy: UnsafeMutableRawPointer?

    // Kept alive while libcurl uses them; freed by `releaseResources`.
    var headerList: UnsafeMutablePointer<curl_slist>?
    var connectToList: UnsafeMutablePointer<curl_slist>?

    // What the callbacks collect. Touched by one thread at a time (the loop, then the caller
    // after the hand-over), so exclusivity is not checked at run time: the callbacks run for
    // every header line and body chunk.
    @exclusivity(unchecked) var status = 0
    /// The response's fields, when parsed on the loop (downloads: they need `Content-Range`
    /// there); otherwise empty, and ``rawHeaders`` holds them.
    @exclusivity(unchecked) var headers = HTTPHeaders()
    /// The current response's header lines as received, for the awaiting task to parse
    /// (``parsedHeaders()``): the loop thread only copies bytes, it makes no strings.
    @exclusivity(unchecked) private var rawHeaders: [UInt8] = []
    /// The current response's `Content-Length`, read on the loop to size the body buffer.
    @exclusivity(unchecked) private var contentLength: Int?
    /// Whether header fields are parsed on the loop thread (downloads) or later by the caller.
    let parsesHeadersOnLoop: Bool
    /// What an easy handle keeps of this request's options for the next one (see ``EasyOptions``).
    let easyOptions: EasyOptions?
    @exclusivity(unchecked) var body = Data()
    var failure: RunwayError?
    @exclusivity(unchecked) private var bodyStarted = false
    var lastProgress = TransferProgress()

    // Downloads.
    var resumeOffset: Int64 = 0
    var file: Int32 = -1
    var bodyGoesToFile = false

    /// Whether the body is left encoded for the awaiting task to inflate (see
    /// ``CurlDispatcher/Configuration/ResponseDecoding``); fixed before the hand-over.
    let decodesOnAwaitingTask: Bool
    /// Whether the request sets its own `Accept-Encoding` (sent as is; what it asks for beyond
    /// what Runway decodes comes back as sent).
    let asksOwnEncodings: Bool

    init(request: Request, decoding: CurlDispatcher.Configuration.ResponseDecoding) {
        self.request = request
        asksOwnEncodings = request.headers["Accept-Encoding"] != nil
        parsesHeadersOnLoop = request.download != nil
        decodesOnAwaitingTask = decoding == .awaitingTask && request.options.acceptCompressedResponses
            && request.download == nil
        urlString = request.url.absoluteString
        isSecure = urlString.utf8.count > 5 && urlString.utf8.prefix(6).map { $0 | 0x20 }.elementsEqual("https:".utf8)
        easyOptions = EasyOptions(request, decodesOnAwaitingTask: decodesOnAwaitingTask, isSecure: isSecure)
    }

    /// Leaves the outcome and resumes the caller, once.
    func finish(_ result: Result<Response, RunwayError>) {
        request.progress?.finish()
        guard let continuation else { return }
        self.continuation = nil
        outcome = result
        outcomeSet.store(true, ordering: .releasing)
        continuation.resume()
    }

    /// The outcome `finish` left, for the resumed caller.
    func takeOutcome() -> Result<Response, RunwayError> {
        guard outcomeSet.load(ordering: .acquiring), let outcome else {
            return .failure(RunwayError(.transport, "the transfer ended without an outcome"))
        }
        return outcome
    }

    /// Frees what libcurl no longer needs once the easy handle has left the multi handle.
    func releaseResources() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if let connectToList { curl_slist_free_all(connectToList) }
        connectToList = nil
        if file >= 0 {
            close(file)
            file = -1
        }
    }

    // MARK: Callbacks (loop thread)

    /// One header line; a status line starts a new response (after a redirect or `100 Continue`).
    ///
    /// Runs on the loop thread for every line, so it reads the status code and `Content-Length`
    /// over the bytes and otherwise only copies the line (see ``parsedHeaders()``).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        guard end > 0 else { return }
        if end > 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
            bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/")
        {
            // "HTTP/1.1 200 OK", "HTTP/2 200": the status is the three digits after the first space.
            var i = 5
            while i < end, bytes[i] != UInt8(ascii: " ") { i += 1 }
            var code = 0
            i += 1
            while i < end, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                code = code * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                i += 1
            }
            status = code
            contentLength = nil
            if parsesHeadersOnLoop {
                headers = HTTPHeaders()
                // Room for a typical response's fields at once, rather than growing field by field.
                headers.reserveCapacity(12)
            } else {
                rawHeaders.removeAll(keepingCapacity: true)
            }
            return
        }
        let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
        if let length = Self.contentLength(line) { contentLength = length }
        if parsesHeadersOnLoop {
            Self.parseField(line, into: &headers)
        } else {
            if rawHeaders.isEmpty { rawHeaders.reserveCapacity(512) }
            // Typed as bytes, so the copy is one memcpy rather than a loop over a sequence.
            rawHeaders.append(contentsOf: line.assumingMemoryBound(to: UInt8.self))
            rawHeaders.append(0x0A)
        }
    }

    /// The response's header fields: parsed on the awaiting task from the bytes the loop kept,
    /// or as the loop parsed them (downloads). Call once the transfer is handed back.
    func parsedHeaders() -> HTTPHeaders {
        guard !parsesHeadersOnLoop else { return headers }
        var fields = HTTPHeaders()
        fields.reserveCapacity(12)
        rawHeaders.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                var end = start
                while end < all.count, all[end] != 0x0A { end += 1 }
                Self.parseField(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &fields)
                start = end + 1
            }
        }
        return fields
    }

    private static let contentLengthName = Array("content-length:".utf8)

    /// The value of a `Content-Length` line, if `line` is one (checked over the bytes: this runs
    /// on the loop thread for every header line).
    static func contentLength(_ line: UnsafeRawBufferPointer) -> Int? {
        // "content-length:" is 15 bytes; most lines are rejected by their first byte.
        guard line.count > 15, line[0] | 0x20 == UInt8(ascii: "c"), line[14] == UInt8(ascii: ":"), line[7] == UInt8(ascii: "-")
        else { return nil }
        // The letters compared without case ('-' and ':' were checked exactly above).
        for index in 1..<14 where index != 7 && line[index] | 0x20 != contentLengthName[index] { return nil }
        var value = 0
        var sawDigit = false
        for index in 15..<line.count {
            let byte = line[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if sawDigit { break } else { continue }
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value < Int.max / 10 - 10 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            sawDigit = true
        }
        return sawDigit ? value : nil
    }

    /// Adds one header line (no line break) to `fields`: `Name: value`, or an obsolete folded
    /// line (RFC 9112 §5.2) continuing the previous field's value; others are ignored.
    static func parseField(_ line: UnsafeRawBufferPointer, into fields: inout HTTPHeaders) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0D { end -= 1 }
        guard end > 0, let base = line.baseAddress else { return }
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            var start = 0
            while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
            guard start < end else { return }
            fields.continueLastValue(with: String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self))
            return
        }
        guard let found = memchr(base, Int32(UInt8(ascii: ":")), end) else { return }
        let colon = base.distance(to: UnsafeRawPointer(found))
        var start = colon + 1
        while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        var stop = end
        while stop > start, line[stop - 1] == UInt8(ascii: " ") || line[stop - 1] == UInt8(ascii: "\t") { stop -= 1 }
        fields.add(
            name: String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self),
            value: String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<stop]), as: UTF8.self))
    }

    /// A chunk of the body (decoded by libcurl, or as sent when ``decodesOnAwaitingTask``);
    /// returns false to abort the transfer.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !bodyStarted {
            bodyStarted = true
            if request.download != nil, (200..<300).contains(status) {
                guard startDownload() else { return false }
            } else if let length = contentLength, length <= request.options.maxResponseSize {
                body.reserveCapacity(length)
            }
        }
        if bodyGoesToFile {
            // Downloads stream to disk, so the in-memory limit does not apply to them.
            return writeAll(bytes)
        }
        let limit = request.options.maxResponseSize
        guard body.count + bytes.count <= limit else {
            failure = RunwayError(.responseTooLarge, "response body is over the \(limit)-byte limit (counted after decompression)")
            return false
        }
        body.append(bytes.assumingMemoryBound(to: UInt8.self))
        return true
    }

    func reportProgress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) {
        guard let reporter = request.progress else { return }
        let progress = TransferProgress(
            bytesSent: uploaded,
            totalBytesToSend: uploadTotal > 0 ? uploadTotal : nil,
            bytesReceived: downloaded + (bodyGoesToFile && status == 206 ? resumeOffset : 0),
            totalBytesToReceive: downloadTotal > 0 ? downloadTotal + (status == 206 ? resumeOffset : 0) : nil)
        if progress != lastProgress {
            lastProgress = progress
            reporter.report(progress)
        }
    }

    // MARK: Downloads

    /// Opens the partial file for a 2xx download response: appended to when it answers the
    /// `Range` sent (a 206 whose `Content-Range` starts at the partial file's size), started
    /// afresh otherwise (a 200: the server ignored the range). A 206 starting elsewhere fails
    /// `.responseInvalid`, keeping the partial file: appending it would corrupt the download.
    private func startDownload() -> Bool {
        guard let download = request.download else { return true }
        let resuming = status == 206 && resumeOffset > 0
        if resuming {
            let contentRange = headers["Content-Range"]
            guard contentRange.flatMap(DownloadTarget.rangeStart(ofContentRange:)) == resumeOffset else {
                failure = RunwayError(
                    .responseInvalid,
                    "asked to resume at byte \(resumeOffset), the server answered Content-Range \(contentRange ?? "none")")
                return false
            }
        }
        return openDownloadFile(download, append: resuming)
    }

    private func openDownloadFile(_ download: DownloadTarget, append: Bool) -> Bool {
        let path = download.partialFile.path
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        file = open(path, flags, 0o644)
        guard file >= 0 else {
            failure = RunwayError(.fileIO, "cannot open \(path): \(String(cString: strerror(errno)))")
            return false
        }
        if !append { resumeOffset = 0 }
        bodyGoesToFile = true
        return true
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(file, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                failure = RunwayError(.fileIO, "cannot write the download: \(String(cString: strerror(errno)))")
                return false
            }
            remaining -= written
            pointer += written
        }
        return true
    }

    /// Moves a completed download into place; keeps a failed one's partial file for resuming.
    func settle(_ outcome: Result<Response, RunwayError>) -> Result<Response, RunwayError> {
        if file >= 0 {
            close(file)
            file = -1
        }
        guard case .success(var response) = outcome, let download = request.download else { return outcome }
        if status == 416, resumeOffset > 0, completeRangeLength(response) == resumeOffset {
            // The partial file already holds the whole resource.
            bodyGoesToFile = true
            response.status = 200
            response.body = Data()
        } else if !bodyStarted, (200..<300).contains(status) {
            // An empty body (libcurl never called the write callback): still a file.
            guard startDownload() else { return .failure(failure ?? RunwayError(.fileIO, "cannot start the download")) }
            close(file)
            file = -1
        }
        guard bodyGoesToFile else { return outcome }
        if rename(download.partialFile.path, download.file.path) != 0 {
            return .failure(RunwayError(.fileIO, "cannot move the download to \(download.file.path): \(String(cString: strerror(errno)))"))
        }
        response.fileURL = download.file
        return .success(response)
    }

    /// The complete length in a `Content-Range: bytes */N` header.
    private func completeRangeLength(_ response: Response) -> Int64? {
        guard let range = response.headers["Content-Range"], let slash = range.lastIndex(of: "/") else { return nil }
        return Int64(range[range.index(after: slash)...])
    }
}

// MARK: C callbacks

let curlWriteCallback: runway_curl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

let curlHeaderCallback: runway_curl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: length))
    return length
}

let curlProgressCallback: runway_curl_progress_callback = { user, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    transfer.reportProgress(downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded), uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded))
    return 0
}
