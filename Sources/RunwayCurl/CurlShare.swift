import CCurl

/// One dispatcher's TLS session cache, a libcurl share handle every transfer's easy handle uses,
/// so that a new connection to a host resumes the TLS session of an earlier one (an abbreviated
/// handshake) whichever handle made it: each request gets an easy handle of its own
/// (``CurlMulti/prepare(_:)``), and libcurl keeps sessions per handle otherwise.
///
/// Held by the multi and by every transfer until its handle is freed, so it outlives each handle
/// that uses it. `@unchecked Sendable` because the C side locks itself: libcurl takes the share's
/// mutexes around every use, from callers' threads (setting a handle up, freeing it) and the loop.
final class CurlShare: @unchecked Sendable {
    /// Nil when libcurl or the system refused one: handles then keep their sessions to themselves.
    let pointer: UnsafeMutablePointer<runway_share>?

    init() {
        pointer = runway_share_new()
    }

    deinit {
        runway_share_free(pointer)
    }
}
