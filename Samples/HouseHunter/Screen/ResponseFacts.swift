import Runway

/// How one request behind a screen was answered: from the network (which address, how long
/// each phase took) or from a cache.
public struct ResponseFacts: Sendable, Equatable {
    /// What the request was for, as the screen names it (`"rent"`, `"detail"`).
    public var source: String
    /// Where the response came from: `network`, `memory-cache`, `disk-cache`.
    public var origin: String
    /// The address connected to (`127.0.0.2:40213`); empty for a cache hit.
    public var address: String
    /// What the shell knows about the address, e.g. `fastest of 3`; set by the shell.
    public var addressNote: String?
    /// Name resolution finished (zero when the DNS bypass connected to an IP).
    public var nameLookup: Duration
    /// The TCP connection was established (zero on a reused connection).
    public var connect: Duration
    /// The first response byte arrived.
    public var firstByte: Duration
    /// The transfer finished.
    public var total: Duration
    /// Whether the request ran on a connection opened earlier.
    public var reused: Bool

    /// Creates facts from their parts.
    public init(
        source: String, origin: String, address: String = "", addressNote: String? = nil, nameLookup: Duration = .zero,
        connect: Duration = .zero, firstByte: Duration = .zero, total: Duration = .zero, reused: Bool = false
    ) {
        self.source = source
        self.origin = origin
        self.address = address
        self.addressNote = addressNote
        self.nameLookup = nameLookup
        self.connect = connect
        self.firstByte = firstByte
        self.total = total
        self.reused = reused
    }

    /// The facts of `response`, as the chain returned it to a manager.
    public init(source: String, response: Response) {
        let fromNetwork = response.origin == .network
        let metrics = response.metrics
        self.init(
            source: source, origin: response.origin.name, address: fromNetwork ? metrics.remoteAddress : "",
            nameLookup: metrics.nameLookup, connect: metrics.connect, firstByte: metrics.firstByte, total: metrics.total,
            reused: metrics.connectionReused)
    }

    /// Whether the response came from a cache.
    public var isCacheHit: Bool { origin.hasSuffix("cache") }
}
