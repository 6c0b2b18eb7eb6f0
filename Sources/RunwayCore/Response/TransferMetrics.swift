/// Per-phase timings of one transfer, each measured from the start of the transfer.
///
/// Filled by the dispatcher (libcurl's `CURLINFO_*_TIME_T`); zero where a dispatcher cannot
/// measure a phase or the phase did not happen (no DNS for an IP literal, no TLS for `http`,
/// no connect at all on a reused connection).
public struct TransferMetrics: Sendable, Equatable {
    /// The values, in one shared box: a response carries its metrics through every frame of the
    /// chain, and a pointer is cheaper to carry than ten fields. Never mutated; a setter stores a
    /// new box. Responses without metrics (stubs, cache hits) share one empty box.
    private var values: Values

    private final class Values: Sendable, Equatable {
        let nameLookup: Duration
        let connect: Duration
        let tlsHandshake: Duration
        let preTransfer: Duration
        let firstByte: Duration
        let total: Duration
        let connectionReused: Bool
        let httpVersion: String
        let remoteAddress: String
        let redirectCount: Int

        init(
            nameLookup: Duration, connect: Duration, tlsHandshake: Duration, preTransfer: Duration, firstByte: Duration, total: Duration,
            connectionReused: Bool, httpVersion: String, remoteAddress: String, redirectCount: Int
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

        static func == (lhs: Values, rhs: Values) -> Bool {
            lhs === rhs
                || (lhs.nameLookup == rhs.nameLookup
                    && lhs.connect == rhs.connect
                    && lhs.tlsHandshake == rhs.tlsHandshake
                    && lhs.preTransfer == rhs.preTransfer
                    && lhs.firstByte == rhs.firstByte
                    && lhs.total == rhs.total
                    && lhs.connectionReused == rhs.connectionReused
                    && lhs.httpVersion == rhs.httpVersion
                    && lhs.remoteAddress == rhs.remoteAddress
                    && lhs.redirectCount == rhs.redirectCount)
        }

        func with(
            nameLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil, preTransfer: Duration? = nil,
            firstByte: Duration? = nil, total: Duration? = nil, connectionReused: Bool? = nil, httpVersion: String? = nil,
            remoteAddress: String? = nil, redirectCount: Int? = nil
        ) -> Values {
            Values(
                nameLookup: nameLookup ?? self.nameLookup, connect: connect ?? self.connect,
                tlsHandshake: tlsHandshake ?? self.tlsHandshake, preTransfer: preTransfer ?? self.preTransfer,
                firstByte: firstByte ?? self.firstByte, total: total ?? self.total,
                connectionReused: connectionReused ?? self.connectionReused, httpVersion: httpVersion ?? self.httpVersion,
                remoteAddress: remoteAddress ?? self.remoteAddress, redirectCount: redirectCount ?? self.redirectCount)
        }
    }

    private static let empty = Values(
        nameLookup: .zero, connect: .zero, tlsHandshake: .zero, preTransfer: .zero, firstByte: .zero, total: .zero, connectionReused: false,
        httpVersion: "", remoteAddress: "", redirectCount: 0)

    /// Name resolution finished.
    public var nameLookup: Duration {
        get { values.nameLookup }
        set { values = values.with(nameLookup: newValue) }
    }
    /// TCP connection established.
    public var connect: Duration {
        get { values.connect }
        set { values = values.with(connect: newValue) }
    }
    /// TLS handshake finished (zero for `http`).
    public var tlsHandshake: Duration {
        get { values.tlsHandshake }
        set { values = values.with(tlsHandshake: newValue) }
    }
    /// The request was about to be sent.
    public var preTransfer: Duration {
        get { values.preTransfer }
        set { values = values.with(preTransfer: newValue) }
    }
    /// The first response byte arrived.
    public var firstByte: Duration {
        get { values.firstByte }
        set { values = values.with(firstByte: newValue) }
    }
    /// The transfer finished.
    public var total: Duration {
        get { values.total }
        set { values = values.with(total: newValue) }
    }
    /// The transfer ran on a connection opened for an earlier one.
    public var connectionReused: Bool {
        get { values.connectionReused }
        set { values = values.with(connectionReused: newValue) }
    }
    /// The HTTP version spoken, such as "1.1" or "2"; empty when unknown.
    public var httpVersion: String {
        get { values.httpVersion }
        set { values = values.with(httpVersion: newValue) }
    }
    /// The peer address connected to, such as "127.0.0.1:8080"; empty when unknown.
    public var remoteAddress: String {
        get { values.remoteAddress }
        set { values = values.with(remoteAddress: newValue) }
    }
    /// Redirects followed.
    public var redirectCount: Int {
        get { values.redirectCount }
        set { values = values.with(redirectCount: newValue) }
    }

    /// Whether nothing was measured: a response that did not cross the network (a cache hit, a
    /// stub), or a dispatcher that measures nothing.
    public var isEmpty: Bool { values == Self.empty }

    /// Metrics with everything zero and empty (a response that did not cross the network).
    public init() {
        values = Self.empty
    }

    /// Creates metrics; all zero and empty by default.
    public init(
        nameLookup: Duration = .zero, connect: Duration = .zero, tlsHandshake: Duration = .zero,
        preTransfer: Duration = .zero, firstByte: Duration = .zero, total: Duration = .zero,
        connectionReused: Bool = false, httpVersion: String = "", remoteAddress: String = "",
        redirectCount: Int = 0
    ) {
        let isEmpty =
            nameLookup == .zero && connect == .zero && tlsHandshake == .zero && preTransfer == .zero && firstByte == .zero
            && total == .zero && !connectionReused && httpVersion.isEmpty && remoteAddress.isEmpty && redirectCount == 0
        values =
            isEmpty
            ? Self.empty
            : Values(
                nameLookup: nameLookup, connect: connect, tlsHandshake: tlsHandshake, preTransfer: preTransfer,
                firstByte: firstByte, total: total, connectionReused: connectionReused, httpVersion: httpVersion,
                remoteAddress: remoteAddress, redirectCount: redirectCount)
    }
}

extension TransferMetrics: CustomStringConvertible {
    /// The phases and connection facts; `no network transfer` when ``isEmpty`` (a cache hit
    /// claims no connection).
    public var description: String {
        guard !isEmpty else { return "no network transfer" }
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
