#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command line every client takes (the same as the libcurl loop's):
///
///     <client> [mode] --url URL --c 16 --n 20000 [--ca FILE] [--h2] [--gzip] [--expect-bytes N] [--label S] [--pairs P]
public struct Options: Sendable {
    /// The first argument that is not an option (Runway's `bare`, `chain`, `manager`, `one:<name>`).
    public var mode: String?
    public var url = ""
    public var concurrency = 16
    public var requests = 20_000
    /// The CA that signed nginx's certificate (TLS rows).
    public var caFile: String?
    /// HTTP/2 over TLS (ALPN); otherwise HTTP/1.1.
    public var http2 = false
    /// The response is gzip-compressed; the client asks for it and inflates it.
    public var gzip = false
    /// The body size every response must have once inflated; a mismatch ends the run.
    public var expectBytes: Int?
    /// The scenario's name in the output.
    public var label = "plain"
    /// Pairs of blocks of a paired measurement (``measurePaired(client:_:pairs:base:variant:)``).
    public var pairs = 15

    public init(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--url": url = rest.popFirst() ?? ""
            case "--c": concurrency = rest.popFirst().flatMap { Int($0) } ?? 0
            case "--n": requests = rest.popFirst().flatMap { Int($0) } ?? 0
            case "--ca": caFile = rest.popFirst()
            case "--label": label = rest.popFirst() ?? label
            case "--pairs": pairs = rest.popFirst().flatMap { Int($0) } ?? 0
            case "--expect-bytes": expectBytes = rest.popFirst().flatMap { Int($0) }
            case "--h2": http2 = true
            case "--gzip": gzip = true
            default:
                guard !argument.hasPrefix("--"), mode == nil else { fail("unknown argument \(argument)", code: 2) }
                mode = argument
            }
        }
        guard !url.isEmpty, concurrency >= 1, requests >= concurrency, pairs >= 1 else {
            fail("usage: <client> [mode] --url URL [--c C] [--n N] [--ca FILE] [--h2] [--gzip] [--expect-bytes N] [--pairs P]", code: 2)
        }
    }
}

/// Ends the process with a message on standard error.
public func fail(_ message: String, code: Int32 = 1) -> Never {
    var text = message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(code)
}

/// Runs the client's request `options.requests` times with `options.concurrency` in flight, after
/// an untimed warm-up that opens the connections, and prints one JSON line: req/s, client CPU µs
/// per request (getrusage of the whole process over the timed part), p50/p99 latency (µs), peak
/// RSS (MB). `request` returns the body size, which is checked against `--expect-bytes`.
///
/// Each of the `c` workers is a child task that sends, awaits, and sends again, as `c` callers
/// of a client would; with `executor`, the workers' executor preference.
public func measure(
    client: String, _ options: Options, executor: (any TaskExecutor)? = nil,
    request: @escaping @Sendable (_ worker: Int) async throws -> Int
) async {
    let check = bodyCheck(options)
    do {
        _ = try await workers(options.concurrency, total: options.concurrency * 20, request, check, timed: false, executor: executor)
        let cpuBefore = cpuMicroseconds()
        let start = ContinuousClock.now
        var latencies = try await workers(options.concurrency, total: options.requests, request, check, timed: true, executor: executor)
        let elapsed = ContinuousClock.now - start
        let cpu = cpuMicroseconds() - cpuBefore
        latencies.sort()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let n = Double(options.requests)
        let fields: [(String, String)] = [
            ("client", quoted(client)), ("scenario", quoted(options.label)), ("c", "\(options.concurrency)"),
            ("n", "\(options.requests)"), ("rps", fixed(n / seconds, 1)), ("cpu_us", fixed(cpu / n, 2)),
            ("p50_us", fixed(latencies[latencies.count / 2], 1)), ("p99_us", fixed(latencies[Int(n * 0.99)], 1)),
            ("rss_mb", fixed(peakRSSMegabytes(), 1)),
        ]
        print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    } catch {
        fail("\(client): \(error)")
    }
}

/// What one change to a client costs, measured within one process: `base` and `variant` (the
/// same client with one thing added) run in alternating blocks of `options.requests` requests
/// with `options.concurrency` in flight, `pairs` times (ABBA order, so a drift in the machine's
/// speed during a pair cancels), after a warm-up of both. Prints one JSON line: the median over
/// the pairs of the variant's CPU µs per request less the base's (getrusage of the whole process
/// over each block), and each side's median. A VM whose speed drifts between processes (seen
/// here: ±5 µs between runs of the same client) moves both sides of a pair alike.
public func measurePaired(
    client: String, _ options: Options, pairs: Int,
    base: @escaping @Sendable (_ worker: Int) async throws -> Int,
    variant: @escaping @Sendable (_ worker: Int) async throws -> Int
) async {
    let check = bodyCheck(options)
    let block: @Sendable (@escaping @Sendable (Int) async throws -> Int) async throws -> Double = { request in
        let before = cpuMicroseconds()
        _ = try await workers(options.concurrency, total: options.requests, request, check, timed: false)
        return (cpuMicroseconds() - before) / Double(options.requests)
    }
    do {
        for request in [base, variant] {
            _ = try await workers(options.concurrency, total: options.concurrency * 20, request, check, timed: false)
        }
        var baseCosts: [Double] = []
        var variantCosts: [Double] = []
        var added: [Double] = []
        for pair in 0..<pairs {
            let (b, v): (Double, Double)
            if pair % 2 == 0 {
                b = try await block(base)
                v = try await block(variant)
            } else {
                v = try await block(variant)
                b = try await block(base)
            }
            baseCosts.append(b)
            variantCosts.append(v)
            added.append(v - b)
        }
        let fields: [(String, String)] = [
            ("client", quoted(client)), ("scenario", quoted(options.label)), ("c", "\(options.concurrency)"),
            ("n", "\(options.requests)"), ("pairs", "\(pairs)"), ("base_cpu_us", fixed(median(baseCosts), 2)),
            ("cpu_us", fixed(median(variantCosts), 2)), ("added_us", fixed(median(added), 2)),
        ]
        print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    } catch {
        fail("\(client): \(error)")
    }
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Checks a response's body size against `--expect-bytes` (any size when it is not given).
private func bodyCheck(_ options: Options) -> @Sendable (Int) throws -> Void {
    let expected = options.expectBytes
    return { bytes in
        if let expected, bytes != expected { throw HarnessError("a response had \(bytes) bytes, not \(expected)") }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `total` requests shared by `count` workers; each request's latency in µs when `timed`.
private func workers(
    _ count: Int, total: Int, _ request: @escaping @Sendable (Int) async throws -> Int,
    _ check: @escaping @Sendable (Int) throws -> Void, timed: Bool, executor: (any TaskExecutor)? = nil
) async throws -> [Double] {
    try await withThrowingTaskGroup(of: [Double].self) { group in
        for worker in 0..<count {
            let share = total / count + (worker < total % count ? 1 : 0)
            let work: @Sendable () async throws -> [Double] = {
                var latencies: [Double] = []
                latencies.reserveCapacity(timed ? share : 0)
                for _ in 0..<share {
                    let start = ContinuousClock.now
                    try check(try await request(worker))
                    if timed {
                        let d = ContinuousClock.now - start
                        latencies.append(Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12)
                    }
                }
                return latencies
            }
            // A plain child task without an executor: in Swift 6.3 `addTask(executorPreference: nil)`
            // marks the task as having a preference, and each executor check then takes its lock.
            if let executor {
                group.addTask(executorPreference: executor, operation: work)
            } else {
                group.addTask(operation: work)
            }
        }
        var all: [Double] = []
        all.reserveCapacity(timed ? total : 0)
        for try await part in group { all += part }
        return all
    }
}

private func usage() -> rusage {
    var u = rusage()
    #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
    #else
    getrusage(RUSAGE_SELF, &u)
    #endif
    return u
}

private func cpuMicroseconds() -> Double {
    let u = usage()
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec)
}

private func peakRSSMegabytes() -> Double {
    #if canImport(Darwin)
    Double(usage().ru_maxrss) / 1_048_576  // bytes
    #else
    Double(usage().ru_maxrss) / 1024  // KiB
    #endif
}

private func quoted(_ text: String) -> String { "\"" + text + "\"" }

/// `value` with `digits` decimals, without Foundation's formatting.
private func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    // The sign apart: -0.5 has a whole part of 0 (a paired difference can be negative).
    let whole = abs(scaled) / Int(scale)
    let fraction = abs(scaled) % Int(scale)
    let text = String(fraction)
    return (scaled < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: digits - text.count) + text
}
