import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps the calls a ``HARInterceptor`` saw and writes them as an HTTP Archive (HAR 1.2).
///
/// The app keeps one recorder, puts `.har(recorder)` in its chain, and writes the file when it
/// wants one (at exit, from a debug menu):
/// ```swift
/// let recorder = HARRecorder()
/// let pipeline = Pipeline(interceptors: [.har(recorder), cache.interceptor], dispatcher: CurlDispatcher())
/// // ... calls ...
/// try recorder.write(to: URL(fileURLWithPath: "calls.har"))
/// ```
/// Secrets are hidden as the logging interceptor hides them (the same `Redaction`) before
/// anything is kept; bodies are kept up to ``bodyLimit`` bytes (a body over 64 KiB is read only
/// as far as that needs, not parsed whole). Binary response bodies are kept
/// as base64, as they are (bytes cannot be redacted); a body limit of 0 keeps no body at all.
/// The recorder keeps the last ``maxEntries`` calls and drops the oldest, so a long-running app
/// never grows without bound. Safe to use from any thread.
public final class HARRecorder: Sendable {
    /// The most calls kept; the oldest is dropped for a new one beyond it.
    public let maxEntries: Int
    /// The most body bytes kept per request and per response; 0 keeps sizes only.
    public let bodyLimit: Int
    /// What is hidden.
    public let redaction: Redaction

    /// Who wrote the archive: `Runway`.
    public static let creator = HAR.Creator(name: "Runway", version: "0.1")

    private let state = Locked(State())

    /// The kept entries with their start: a ring of at most `maxEntries`.
    private struct State {
        var entries: [(started: Date, entry: HAR.Entry)] = []
        /// Where the next entry goes once the ring is full (the oldest entry's index).
        var oldest = 0
        var dropped = 0
    }

    /// Creates a recorder.
    /// - Parameters:
    ///   - maxEntries: The most calls kept (at least 1); the oldest is dropped beyond it.
    ///   - bodyLimit: The most body bytes kept per request and per response; 0 (or less) keeps
    ///     sizes only.
    ///   - redaction: What is hidden: header values, query and body parameters.
    public init(maxEntries: Int = 1000, bodyLimit: Int = 4096, redacting redaction: Redaction = .standard) {
        self.maxEntries = max(1, maxEntries)
        self.bodyLimit = max(0, bodyLimit)
        self.redaction = redaction
    }

    /// The number of calls kept.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The number of calls dropped, oldest first, to stay within ``maxEntries``.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// The kept calls as a HAR 1.2 archive, in the order they started.
    public func har() -> HAR {
        let (entries, dropped) = state.withLock { state in
            (Array(state.entries[state.oldest...] + state.entries[..<state.oldest]), state.dropped)
        }
        // Entries are kept as calls end; HAR lists them as they started.
        let ordered = entries.enumerated().sorted { a, b in
            a.element.started == b.element.started ? a.offset < b.offset : a.element.started < b.element.started
        }.map(\.element.entry)
        let comment = dropped == 0 ? nil : "\(dropped) older call\(dropped == 1 ? "" : "s") dropped (the recorder keeps \(maxEntries))"
        return HAR(log: HAR.Log(creator: Self.creator, entries: ordered, comment: comment))
    }

    /// ``har()`` as JSON (UTF-8, keys sorted).
    /// - Throws: `RunwayError` `.configuration` if it cannot be encoded (it always can).
    public func data() throws(RunwayError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(har())
        } catch {
            throw RunwayError(.configuration, "HAR: the archive could not be encoded: \(error)", underlying: error)
        }
    }

    /// Writes ``har()`` to `url` as JSON, replacing the file atomically.
    /// - Throws: `RunwayError` `.fileIO` when the file cannot be written.
    public func write(to url: URL) throws(RunwayError) {
        let data = try data()
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw RunwayError(.fileIO, "HAR: cannot write \(url.path): \(error)", field: "url", underlying: error)
        }
    }

    /// Forgets every kept call (and the count of dropped ones).
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Keeps `entry` of a call that started at `started`, dropping the oldest beyond ``maxEntries``.
    func record(_ entry: HAR.Entry, started: Date) {
        let limit = maxEntries
        state.withLock { state in
            if state.entries.count < limit {
                state.entries.append((started, entry))
            } else {
                state.entries[state.oldest] = (started, entry)
                state.oldest = (state.oldest + 1) % limit
                state.dropped += 1
            }
        }
    }
}
