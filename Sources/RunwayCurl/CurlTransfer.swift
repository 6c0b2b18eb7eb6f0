import CCurl
import RunwayCompression
import RunwayCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state of one request inside the ``CurlMulti`` loop.
///
/// `@unchecked Sendable` because it is handed over exactly once: the caller fills it and
/// submits it under the multi's lock, and from then on only the multi's driver touches it (the
/// loop thread, or a caller driving while the loop waits, holding the driver lock; libcurl calls
/// the callbacks below inside the driver's `curl_multi_socket_action`), until the driver hands
/// it back to the caller with its outcome, or with its easy handle out of the multi handle
/// (``handOver(_:code:)``), and resumes it; the caller then finishes it
/// (``takeOutcome()``). The one exception, `cancelRequested`, is only read and
/// written while holding the multi's lock.
final class CurlTransfer: @unchecked Sendable {
    let request: Request
    /// Computed on the caller's thread, so the loop thread does not touch `URL`.
    let urlString: String
    /// `scheme://authority` (``origin(of:)``).
    let origin: Substring
    /// Its origin's count in the loop, looked up once when the transfer starts (`nil` without a
    /// per-host limit); the driver's only.
    var originCount: OriginCount?
    let isSecure: Bool
    var continuation: UnsafeContinuation<Void, Never>?
    /// How the transfer ended, written by the driver (``deliver(_:)``, ``handOver(_:code:)``)
    /// before it resumes the caller, and read by the caller after
    /// (``takeOutcome()``). The release/acquire on `outcomeSet` is the
    /// hand-over the thread sanitizer can see: when libcurl finishes a transfer before the
    /// caller has suspended (a refused connection), the Swift runtime hands the continuation
    /// over on a path TSan does not observe, and it would report the outcome's fields as a race.
    private var ending: Ending?
    private let outcomeSet = Atomic<Bool>(false)
    var cancelRequested = false
    /// The easy handle, made for this request and set up by the caller (``CurlMulti/prepare(_:)``)
    /// before the hand-over; `nil` again once it is out of the multi handle.
    var easy: UnsafeMutableRawPointer?
    /// When the loop fails the transfer with `.timeout` if libcurl has not ended it: its total
    /// timeout and a grace after it was added (``CurlMulti``), in ``SocketWatch/now()``'s
    /// nanoseconds. The driver's only.
    var deadline = UInt64.max
    /// The request's total timeout in nanoseconds (`nil`: none), read out of its options on the
    /// caller's thread: the loop reads it for every transfer it starts.
    let timeoutNanoseconds: UInt64?
    /// The request's `maxResponseSize`, read once: the loop checks it for every body chunk.
    let maxResponseSize: Int
    /// The request's idle timeout in nanoseconds (`nil`: none), read once like the total one.
    let idleNanoseconds: UInt64?
    /// When a byte last moved either way, in ``SocketWatch/now()``'s nanoseconds; 0 until the
    /// connection is made and the request about to go (the pre-request callback): connecting is
    /// the connect timeout's. Only kept with an idle timeout. The driver's only.
    @exclusivity(unchecked) var lastActivity: UInt64 = 0
    /// Whether the progress callback watches an in-memory body leave, for the idle timeout.
    var watchesUpload: Bool { idleNanoseconds != nil && request.body != nil }
    /// The bytes of it libcurl had sent at the last progress callback. The driver's only.
    @exclusivity(unchecked) var lastUploaded: Int64 = 0
    /// The driver's list of transfers that took bytes from an HTTP/2 connection this turn, set
    /// when the transfer enters the multi handle, and whether this one is on it.
    var arrivals: HTTP2Arrivals?
    @exclusivity(unchecked) var arrived = false

    /// Where libcurl writes its own words on a failure (`CURLOPT_ERRORBUFFER`: the address it
    /// could not connect to, the certificate problem, the malformed chunk), for the error's
    /// message (``errorDetail``). Set on the handle for this transfer, and taken off it before
    /// the handle is freed (``CurlMulti/discard(_:)``).
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// The dispatcher's TLS session cache, which the easy handle uses: held until the handle is
    /// freed, which takes the share's locks (see ``CurlShare``).
    var share: CurlShare?

    // Kept alive while libcurl uses them; freed by `releaseResources`.
    var headerList: UnsafeMutablePointer<curl_slist>?
    var connectToList: UnsafeMutablePointer<curl_slist>?
    /// The URL as libcurl parsed it on the caller's thread (`CURLOPT_CURLU`), or `nil` when it
    /// went as text.
    var parsedURL: OpaquePointer?

    // What the callbacks collect. Touched by one thread at a time (the loop, then the caller
    // after the hand-over), so exclusivity is not checked at run time: the callbacks run for
    // every header line and body chunk.
    @exclusivity(unchecked) var status = 0
    /// The response's fields, when parsed on the loop (downloads: they need `Content-Range`
    /// there); otherwise empty, and ``rawHeaders`` holds them.
    @exclusivity(unchecked) var headers = HTTPHeaders()
    /// The current response's header lines as received, for the awaiting task to parse
    /// (``parsedHeaders()``): the loop thread only copies bytes, it makes no strings.
    @exclusivity(unchecked) var rawHeaders: [UInt8] = []
    /// The current response's `Content-Length`, read on the loop to size the body buffer.
    @exclusivity(unchecked) var contentLength: Int?
    /// The current response's `Content-Encoding`, read on the loop when it inflates there.
    @exclusivity(unchecked) var contentEncoding: String?
    /// Which field the current head's last field line began, for a folded line that continues it.
    @exclusivity(unchecked) var lastField = FieldRole.other
    /// Whether the current response's header section reached its blank line. libcurl 7.88
    /// reports a connection closed inside the header section (no `Content-Length` yet) as a
    /// complete, empty response; ``outcome(code:)`` does not.
    @exclusivity(unchecked) var headerSectionEnded = false
    /// Whether the current response's status line is HTTP/1.x (not HTTP/2 or 3, whose frames
    /// end each stream whatever its fields say).
    @exclusivity(unchecked) var respondsOverHTTP1 = false
    /// Whether the current response has a `Transfer-Encoding` field (any coding).
    @exclusivity(unchecked) var transferEncoded = false
    /// How many times the current response's `Transfer-Encoding` fields name `chunked`.
    @exclusivity(unchecked) var chunkedCodings = 0
    /// Set when the header callback stopped the transfer at the end of a complete response whose
    /// connection must not carry another: a 204 that announces a body (see
    /// ``receiveHeader(_:)``). libcurl reports `CURLE_WRITE_ERROR` and closes the connection;
    /// the response is delivered as it came (``outcome(easy:code:)``).
    @exclusivity(unchecked) var closedUntrustedConnection = false
    /// Whether a 303 ends the transfer, as the response, rather than be followed: libcurl 7.88
    /// follows a 303 with the request's custom method (`CURLOPT_CUSTOMREQUEST`: PUT, PATCH,
    /// DELETE, …) without its body, where the new address is to be read with a GET. Set when
    /// redirects are followed and the method is not GET, HEAD or POST.
    let returnsSeeOther: Bool
    /// Whether the current response is a redirect (3xx) with a `Location`: one libcurl follows
    /// when the request follows redirects.
    @exclusivity(unchecked) var redirectHasLocation = false
    /// Whether a redirect ends the transfer, as the response, when its `Location` leaves the
    /// request's origin: libcurl 7.88 keeps `Authorization` and `Cookie` to its first host, but
    /// sends a `Proxy-Authorization` header on to any. Set when redirects are followed and the
    /// request has one.
    let guardsProxyCredentials: Bool
    /// Whether the current redirect's `Location` leaves the request's origin (scheme, host,
    /// port), or cannot be read; looked at only when ``guardsProxyCredentials``.
    @exclusivity(unchecked) var redirectLeavesOrigin = false
    /// Whether the request follows redirects (``RequestOptions/redirects``), read once: the
    /// progress callback asks for every chunk.
    let followsRedirects: Bool
    /// Set when the header callback stopped the transfer at the end of a redirect's head rather
    /// than let libcurl follow it: such a 303, or one leaving the origin of a request with
    /// proxy credentials (``guardsProxyCredentials``). The redirect is delivered as it came,
    /// without its body (libcurl drops the body of a redirect it follows), and libcurl closes the
    /// connection.
    @exclusivity(unchecked) var stoppedAtRedirect = false
    /// Whether the request carries the caller's own `Expect: 100-continue` (Runway sends none
    /// of its own): a 417 to it is then the response, not a reason to send the request again
    /// (``refusedExpectation``).
    let expectsContinue: Bool
    /// Set when a 417 answered the request's expectation. libcurl 7.88 sends the request again
    /// on a 417 with the caller's `Expect` still in it, which brings the same 417, again and
    /// again until its header-size limit. The header callback forbids that re-send (a redirect
    /// of none, which libcurl then reports as `CURLE_TOO_MANY_REDIRECTS`), and the 417 is
    /// delivered with its head (``outcome(easy:code:)``); libcurl has dropped its body, as it
    /// does a redirect's it follows.
    @exclusivity(unchecked) var refusedExpectation = false
    /// Whether a response (a redirect, an authentication challenge) came in since the request
    /// was last sent: only then may libcurl send it again (see ``mayStartRequest()``).
    @exclusivity(unchecked) var answeredSinceSent = false
    /// Whether a redirect libcurl follows made the POST a GET (a 301, 302 or 303): libcurl may
    /// send that GET again on a new connection, as it does any GET.
    @exclusivity(unchecked) var redirectedAsGET = false
    /// Whether header fields are parsed on the loop thread (downloads, streamed bodies) or later
    /// by the caller.
    let parsesHeadersOnLoop: Bool
    @exclusivity(unchecked) var body = Data()
    var failure: RunwayError?
    @exclusivity(unchecked) var bodyStarted = false
    var lastProgress = TransferProgress()

    // Downloads.
    var resumeOffset: Int64 = 0
    /// The validator of the partial file's bytes, sent as `If-Range` with the resumed range.
    var resumeValidator: String?
    /// What the partial file must hold once a resumed range is in (its complete length).
    var expectedDownloadSize: Int64?
    var file: Int32 = -1
    /// The partial file, open and locked from before the hand-over to the end
    /// (``lockPartialFile(_:)``): no other download writes into it meanwhile.
    var partialLock: Int32 = -1
    var bodyGoesToFile = false

    /// Whether the body is left encoded for the awaiting task to inflate (see
    /// ``CurlDispatcher/Configuration/ResponseDecoding``); fixed before the hand-over.
    let decodesOnAwaitingTask: Bool
    /// Whether the body is inflated on the loop thread as it arrives (downloads, and
    /// ``CurlDispatcher/Configuration/ResponseDecoding/loopThread``), by ``inflaters``.
    let inflatesOnLoop: Bool
    /// The response's encodings undone as the body arrives, the last one applied first; made
    /// when the first body byte comes.
    var inflaters: [Inflater] = []
    /// Whether the request sets its own `Accept-Encoding` (sent as is; what it asks for beyond
    /// what Runway decodes comes back as sent).
    let asksOwnEncodings: Bool

    /// Whether libcurl must not send the request again on its own: libcurl silently re-sends a
    /// request whose reused connection died before any response byte, which must not happen to
    /// a request that is not idempotent (POST, PATCH) unless it carries an `Idempotency-Key`.
    /// The pre-request callback refuses a second send unless a response asked for it.
    let sendsOnce: Bool
    /// How many times libcurl has started sending the request (the pre-request callback).
    @exclusivity(unchecked) var sends = 0
    /// Set when libcurl wanted to send the request again and was refused.
    @exclusivity(unchecked) var refusedResend = false

    /// The proxy the request goes through, resolved before the hand-over (`nil`: none).
    let proxy: Proxy.Server?

    // Streamed bodies (`Request.streamsResponseBody`): the caller is resumed with the head, and
    // the body goes to `producer` chunk by chunk.
    /// Whether the body is streamed.
    let streams: Bool
    /// Feeds the caller's `ResponseBodyStream`; set before the hand-over.
    var producer: ResponseBodyStream.Producer?
    /// Whether the caller has been resumed with the head.
    @exclusivity(unchecked) var headDelivered = false
    /// Whether the write callback paused the transfer (the reader's buffer was full).
    @exclusivity(unchecked) var paused = false

    // Streamed request bodies (`Request.bodyStream`).
    /// Where the read callback takes the body from; set before the hand-over.
    var bodyReader: RequestBodyReader?
    /// Whether the read callback paused the upload (a sequence had nothing buffered).
    @exclusivity(unchecked) var uploadPaused = false
    /// The body's bytes handed to libcurl since the body last started. libcurl's upload count
    /// includes the framing of a chunked body (its size lines); the progress reported is never
    /// more than this.
    @exclusivity(unchecked) var bodyBytesRead: Int64 = 0

    init(request: Request, decoding: CurlDispatcher.Configuration.ResponseDecoding, proxy: Proxy.Server? = nil) {
        self.request = request
        self.proxy = proxy
        asksOwnEncodings = request.headers["Accept-Encoding"] != nil
        streams = request.streamsResponseBody
        // A streamed response's head is handed over from the loop, its body never inflated.
        parsesHeadersOnLoop = request.download != nil || streams
        let options = request.options
        let decodes = options.acceptCompressedResponses && !streams
        maxResponseSize = options.maxResponseSize
        timeoutNanoseconds = options.timeout.map(Self.nanoseconds)
        idleNanoseconds = options.idleTimeout.map(Self.nanoseconds)
        decodesOnAwaitingTask = decodes && decoding == .awaitingTask && request.download == nil
        inflatesOnLoop = decodes && !decodesOnAwaitingTask
        sendsOnce = !request.method.isIdempotent && request.headers["Idempotency-Key"] == nil
        expectsContinue = request.headers["Expect"].map { $0.lowercased().contains("100-continue") } ?? false
        followsRedirects = options.redirects.maxRedirects > 0
        returnsSeeOther =
            followsRedirects && request.method != .get && request.method != .head && request.method != .post
        guardsProxyCredentials = followsRedirects && request.headers["Proxy-Authorization"] != nil
        urlString = request.url.absoluteString
        origin = Self.origin(of: urlString)
        isSecure = urlString.withUTF8Bytes { bytes in
            // "https:", the letters without case.
            bytes.count > 5 && bytes[0] | 0x20 == UInt8(ascii: "h") && bytes[1] | 0x20 == UInt8(ascii: "t")
                && bytes[2] | 0x20 == UInt8(ascii: "t") && bytes[3] | 0x20 == UInt8(ascii: "p") && bytes[4] | 0x20 == UInt8(ascii: "s")
                && bytes[5] == UInt8(ascii: ":")
        }
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// `timeout` in nanoseconds, at most a century (`Duration.longestSleep`, whose nanoseconds
    /// plus the monotonic clock's stay far inside UInt64): a longer one (`.seconds(.max)` for "no
    /// limit") wrapped round to a deadline already passed, and the transfer timed out at once.
    static func nanoseconds(_ timeout: Duration) -> UInt64 {
        let (seconds, attoseconds) = min(timeout, .longestSleep).components
        return UInt64(clamping: seconds) * 1_000_000_000 + UInt64(clamping: attoseconds / 1_000_000_000)
    }

    /// Lists the transfer, once a turn, among those that took bytes from an HTTP/2 connection
    /// (``HTTP2Arrivals``).
    @inline(__always)
    func arrivedOverHTTP2() {
        if !respondsOverHTTP1, !arrived, let arrivals { arrivals.add(self) }
    }

    /// Notes that a byte moved (a callback ran), for the idle timeout.
    @inline(__always)
    func moved() {
        if idleNanoseconds != nil { lastActivity = SocketWatch.now() }
    }

    /// `scheme://authority` of `url`: what the dispatcher counts connections per
    /// (`maxConnectionsPerHost`). Finer than libcurl's own count (which a proxy or a connect
    /// override may merge), never coarser.
    static func origin(of url: String) -> Substring {
        url[..<Request.authority(of: url).endIndex]
    }

    /// `(METHOD url)` for error messages, without what the URL must not show.
    var target: String { "(\(request.method) \(RunwayError.text(forURL: urlString)))" }

    /// What libcurl wrote in ``errorBuffer`` about the failure, on one line; `nil` when it wrote
    /// nothing.
    var errorDetail: String? {
        errorBuffer[Int(CURL_ERROR_SIZE) - 1] = 0
        guard errorBuffer[0] != 0 else { return nil }
        let text = String(cString: errorBuffer).split(whereSeparator: \.isNewline).joined(separator: " ").trimmingBlanks()
        return text.isEmpty ? nil : text
    }

    /// Ends the transfer: finishes the progress and a streamed body, and resumes the caller
    /// unless it already has the head.
    func finish(_ result: Result<Response, RunwayError>) {
        request.progress?.finish()
        bodyReader?.close()
        if let producer {
            switch result {
            case .success: producer.finish()
            // The reader gets it outside the pipeline, which attributes the others: it says
            // its stage itself, as a buffered response's failure does.
            case .failure(let error): producer.finish(throwing: .attributing(error, to: .dispatcher(CurlDispatcher.stageName)))
            }
        }
        deliver(result)
    }

    /// How the transfer ended, for the resumed caller (``takeOutcome()``).
    private enum Ending {
        /// The outcome, made by the driver.
        case outcome(Result<Response, RunwayError>)
        /// libcurl's result, with the easy handle it came from, already out of the multi handle:
        /// the caller makes the outcome (``handOver(_:code:)``).
        case handedOver(UnsafeMutableRawPointer, CURLcode)
    }

    /// Leaves the outcome and resumes the caller, once: at the end, or with the head of a
    /// streamed response.
    func deliver(_ result: Result<Response, RunwayError>) {
        end(.outcome(result))
    }

    /// Resumes the caller with libcurl's result and the easy handle, just removed from the multi
    /// handle: the caller reads the response's facts from the handle, settles the transfer and
    /// frees the handle (``CurlMulti/discard(_:)``), on its own thread. The loop thread moves the bytes of
    /// every transfer; this keeps its share of each one to what only it can do.
    ///
    /// Not for a streamed response, whose caller left with the head.
    func handOver(_ easy: UnsafeMutableRawPointer, code: CURLcode) {
        // The header lists go with the rest, on the caller's thread, where they were made.
        end(.handedOver(easy, code))
    }

    private func end(_ ending: Ending) {
        guard let continuation else { return }
        self.continuation = nil
        self.ending = ending
        outcomeSet.store(true, ordering: .releasing)
        continuation.resume()
    }

    /// The outcome the transfer ended with, for the resumed caller. A handed-over transfer is
    /// finished here, once: its outcome made from the easy handle, which is then freed (a later
    /// call gets the same outcome and leaves the handle alone).
    func takeOutcome() -> Result<Response, RunwayError> {
        guard outcomeSet.load(ordering: .acquiring), let ending else {
            return .failure(RunwayError(.transport, "the transfer ended without an outcome"))
        }
        switch ending {
        case .outcome(let result):
            return result
        case .handedOver(let easy, let code):
            let result = settle(outcome(easy: easy, code: code))
            // A success leaves the body's reader open: the dispatcher waits for its sequence's
            // end, which may still fail the call (`RequestBodyReader.waitForEnd`), then closes it.
            if case .success = result { bodyReader = nil }
            releaseResources()
            CurlMulti.discard(easy)
            request.progress?.finish()  // `releaseResources` closed the body reader
            self.ending = .outcome(result)
            return result
        }
    }

    /// Frees what libcurl no longer needs once the easy handle has left the multi handle.
    func releaseResources() {
        releaseLists()
        if file >= 0 {
            close(file)
            file = -1
        }
        unlockPartialFile(removingIfEmpty: true)
        bodyReader?.close()
    }

    /// Frees the header and connect-override lists and the parsed URL (once the easy handle has
    /// left the multi handle, before it is freed).
    func releaseLists() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if let connectToList { curl_slist_free_all(connectToList) }
        connectToList = nil
        if let parsedURL { curl_url_cleanup(parsedURL) }
        parsedURL = nil
    }

    // MARK: Progress (loop thread)

    func reportProgress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) {
        // An in-memory body leaves from libcurl's own buffer, with no callback of ours: its bytes
        // moving show here alone (see ``watchesUpload``).
        if watchesUpload, uploaded != lastUploaded {
            lastUploaded = uploaded
            moved()
        }
        guard let reporter = request.progress else { return }
        // libcurl counts the body of each response in a redirect chain from zero, those of the
        // redirects it follows too: they are not the response's body, and counting them would
        // report their size as its total, then go back to zero.
        let followed = followsRedirects && redirectHasLocation
        let progress = TransferProgress(
            bytesSent: bodyReader != nil ? min(uploaded, bodyBytesRead) : uploaded,
            totalBytesToSend: uploadTotal > 0 ? uploadTotal : nil,
            bytesReceived: followed ? 0 : downloaded + (bodyGoesToFile && status == 206 ? resumeOffset : 0),
            totalBytesToReceive: !followed && downloadTotal > 0 ? downloadTotal + (status == 206 ? resumeOffset : 0) : nil)
        if progress != lastProgress {
            lastProgress = progress
            reporter.report(progress)
        }
    }
}

// MARK: C callbacks

let curlWriteCallback: runway_curl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    transfer.moved()
    transfer.arrivedOverHTTP2()
    if transfer.streams { return transfer.receiveStreamed(UnsafeRawBufferPointer(start: data, count: length)) }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

let curlHeaderCallback: runway_curl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    transfer.moved()
    // Anything but `length` makes libcurl stop the transfer (`failure` says why). The line is
    // read as a bounds-checked span: the pointer ends here, at the C boundary.
    let line = UnsafeRawBufferPointer(start: data, count: length).assumingMemoryBound(to: UInt8.self)
    let accepted = transfer.receiveHeader(line.span)
    transfer.arrivedOverHTTP2()
    return accepted ? length : 0
}

let curlPrereqCallback: runway_curl_prereq_callback = { user, _, _, _, _ in
    guard let user else { return Int32(CURL_PREREQFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    // Set for a request sent once, or watched for idleness: connected, the request goes now.
    guard !transfer.sendsOnce || transfer.mayStartRequest() else { return Int32(CURL_PREREQFUNC_ABORT) }
    transfer.moved()
    return Int32(CURL_PREREQFUNC_OK)
}

let curlProgressCallback: runway_curl_progress_callback = { user, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    transfer.reportProgress(
        downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded), uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded))
    return 0
}
