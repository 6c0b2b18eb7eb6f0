import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Streamed response bodies (`Request.streamsResponseBody`), on the loop thread: the caller gets
// the head as soon as the final header section ends, then each chunk goes to the caller's
// `ResponseBodyStream`; a full buffer pauses the transfer until the reader drains it.
extension CurlTransfer {
    /// At the end of a header section: hands the head to the caller when this is the final
    /// response (not `1xx`, not a redirect libcurl follows, not a proxy's refusal).
    func headerSectionDidEnd() {
        guard streams, !headDelivered, status >= 200 else { return }
        if (300..<400).contains(status), request.options.redirects.maxRedirects > 0, headers["Location"] != nil {
            return  // libcurl follows it (or fails with too many redirects)
        }
        // Turned into an error when the transfer ends, as for a buffered response.
        if status == 407, let proxy, proxy.isHTTP, !isSecure { return }
        deliverHead()
    }

    /// Resumes the caller with the head; the body follows in the stream.
    private func deliverHead() {
        headDelivered = true
        guard let easy else { return }
        deliver(.success(Response(status: status, headers: headers, metrics: metrics(easy), origin: .network)))
    }

    /// A chunk of a streamed body, as sent: the write callback's return value (the length
    /// taken, `CURL_WRITEFUNC_PAUSE`, or 0 to abort).
    func receiveStreamed(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let producer else { return 0 }
        if !headDelivered { deliverHead() }
        switch producer.yield(Data(bytes)) {
        case .accepted:
            return bytes.count
        case .full:
            // libcurl keeps the chunk and offers it again on unpause (`CurlMulti.resume`).
            paused = true
            return runway_writefunc_pause()
        case .finished:
            // The reader let go; its cancel is on the way: stop reading now.
            failure = RunwayError(.cancelled, "the response body stream was cancelled")
            return 0
        }
    }
}
