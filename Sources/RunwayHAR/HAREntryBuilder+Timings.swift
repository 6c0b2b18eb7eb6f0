import Runway

extension HAREntryBuilder {
    /// HAR's phases from a transfer's metrics, which libcurl measures from the transfer's
    /// start: `dns` to the name lookup, `connect` from there to the connection (TLS included,
    /// `ssl` its handshake part), `blocked` from there to the request's start, `wait` to the
    /// first response byte, `receive` to the end; `send` is 0, as libcurl does not say when the
    /// request was sent. On a reused connection `dns`, `connect` and `ssl` are `-1` and their
    /// time (if any) counts in `blocked`. So the phases add up to the transfer's total.
    ///
    /// Without a transfer (a cache hit, a stub, a failure) the network phases are `-1` and `wait`
    /// is `elapsed`, the whole call.
    static func timings(of metrics: TransferMetrics, elapsed: Duration) -> HAR.Timings {
        guard !metrics.isEmpty else {
            return HAR.Timings(blocked: -1, dns: -1, connect: -1, send: 0, wait: milliseconds(micros(elapsed)), receive: 0, ssl: -1)
        }
        // Each boundary in microseconds, never before the one it follows.
        let dnsEnd = micros(metrics.nameLookup)
        let tcpEnd = max(dnsEnd, micros(metrics.connect))
        let connected = max(tcpEnd, micros(metrics.tlsHandshake))
        let sending = max(connected, micros(metrics.preTransfer))
        let firstByte = max(sending, micros(metrics.firstByte))
        let end = max(firstByte, micros(metrics.total))
        let opened = !metrics.connectionReused && metrics.connect > .zero
        let dns = opened && dnsEnd > 0 ? dnsEnd : -1
        let connect = opened ? connected - dnsEnd : -1
        let ssl = opened && metrics.tlsHandshake > .zero ? connected - tcpEnd : -1
        let blocked = sending - max(0, dns) - max(0, connect)
        return HAR.Timings(
            blocked: milliseconds(blocked), dns: milliseconds(dns), connect: milliseconds(connect), send: 0,
            wait: milliseconds(firstByte - sending), receive: milliseconds(end - firstByte), ssl: milliseconds(ssl))
    }

    /// A duration in whole microseconds.
    private static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Microseconds as milliseconds; `-1` stays `-1`.
    private static func milliseconds(_ micros: Int64) -> Double {
        micros < 0 ? -1 : Double(micros) / 1000
    }

    /// The standard reason phrase of `status` (RFC 9110), empty for a code without one.
    static func reasonPhrase(_ status: Int) -> String {
        reasonPhrases[status] ?? ""
    }

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 200: "OK", 201: "Created", 202: "Accepted",
        203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
        402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
        407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required",
        412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
        416: "Range Not Satisfiable", 417: "Expectation Failed", 421: "Misdirected Request", 422: "Unprocessable Content",
        425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
        503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]
}
