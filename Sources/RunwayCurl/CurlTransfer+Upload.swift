import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Streamed request bodies (`Request.bodyStream`), on the loop thread: libcurl's read callback
// takes the next bytes from the body's reader; when a sequence has none buffered yet, the upload
// pauses until the reader says more came (`CurlMulti.resume`).
extension CurlTransfer {
    /// Has libcurl read the body through ``curlReadCallback`` (length, or chunked without one).
    func setBodyStream(_ easy: UnsafeMutableRawPointer, _ stream: RequestBodyStream) throws(RunwayError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        // -1: unknown, so HTTP/1.1 sends it chunked and HTTP/2 until the read callback says 0.
        try check(runway_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(stream.length ?? -1)), "body length")
        try check(runway_easy_setopt_data_callback(easy, CURLOPT_READFUNCTION, curlReadCallback), "read callback")
        try check(runway_easy_setopt_pointer(easy, CURLOPT_READDATA, me), "read callback data")
        try check(runway_easy_setopt_seek_callback(easy, curlSeekCallback, me), "seek callback")
    }

    /// The read callback's return value: bytes copied into `buffer`, 0 at the end,
    /// `CURL_READFUNC_PAUSE` while a sequence has nothing buffered, `CURL_READFUNC_ABORT` on a
    /// failure (kept in ``failure``).
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let bodyReader else { return 0 }
        switch bodyReader.read(upTo: buffer.count) {
        case .data(let data):
            let count = data.copyBytes(to: buffer)
            bodyBytesRead += Int64(count)
            return count
        case .end:
            return 0
        case .wait:
            uploadPaused = true
            return runway_readfunc_pause()
        case .failed(let error):
            failure = error
            return runway_readfunc_abort()
        }
    }

    /// Starts the body over for libcurl (a send on a new connection, a 307/308 redirect): a
    /// file always, a sequence only while none of it was read.
    func rewindBody(offset: Int64, origin: Int32) -> Bool {
        guard offset == 0, origin == SEEK_SET, let bodyReader, bodyReader.rewind() else { return false }
        bodyBytesRead = 0
        return true
    }
}

let curlReadCallback: runway_curl_data_callback = { data, size, count, user in
    guard let user, let data else { return runway_readfunc_abort() }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    transfer.moved()
    return transfer.readBody(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}

let curlSeekCallback: runway_curl_seek_callback = { user, offset, origin in
    guard let user else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.rewindBody(offset: Int64(offset), origin: origin) ? Int32(CURL_SEEKFUNC_OK) : Int32(CURL_SEEKFUNC_CANTSEEK)
}
