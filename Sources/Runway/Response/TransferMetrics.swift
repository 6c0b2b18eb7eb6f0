/// Per-phase timings of one transfer, each measured from the start of the transfer.
///
/// Filled by the dispatcher (libcurl's `CURLINFO_*_TIME_T`); zero where a dispatcher cannot
/// measure a phase or the phase did not happen (no DNS for an IP literal, no TLS for `http`,
/// no connect at all on a reused connection).
public struct TransferMetrics: Sendable, Equatable {
    /// Name resolution finished.
    public var nameLookup: Duration
    /// TCP connection established.
    public var connect: Duration
    /// TLS handshake finished (zero for `http`).
    public var tlsHandshake: Duration
    /// The request was about to be sent.
    public var preTransfer: Duration
    /// The first response byte arrived.
    public var firstByte: Duration
    /// The transfer finished.
    public var total: Duration
    /// The transfer ran on a connection opened for an earlier one.
    public var connectionReused: Bool
    /// The HTTP version spoken, such as "1.1" or "2"; empty when unknown.
    public var httpVersion: String
    /// The peer address connected to, such as "127.0.0.1:8080"; empty when unknown.
    public var remoteAddress: String
    /// Redirects followed.
    public var redirectCount: Int

    public init(
        nameLookup: Duration = .zero, connect: Duration = .zero, tlsHandshake: Duration = .zero,
        preTransfer: Duration = .zero, firstByte: Duration = .zero, total: Duration = .zero,
        connectionReused: Bool = false, httpVersion: String = "", remoteAddress: String = "",
        redirectCount: Int = 0
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.preTransfer = preTransfer
        self.firstByte = firstByte
        self.total = total
        self.connectionReused = connectionReused
        self.httpVersion = httpVersion
        self.remoteAddress = remoteAddress
        self.redirectCount = redirectCount
    }
}

extension TransferMetrics: CustomStringConvertible {
    public var description: String {
        func ms(_ d: Duration) -> String {
            let micros = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
            let fraction = String(micros % 1000)
            return "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)ms"
        }
        return "dns \(ms(nameLookup)) connect \(ms(connect)) tls \(ms(tlsHandshake)) "
            + "first-byte \(ms(firstByte)) total \(ms(total)) "
            + "HTTP/\(httpVersion.isEmpty ? "?" : httpVersion)\(connectionReused ? " reused" : " new-connection")"
    }
}
