#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses a `text/event-stream` as the WHATWG HTML standard says (§ 9.2.6, "Interpreting an event
/// stream"): fed bytes in chunks of any size, it returns the events they complete.
///
/// Lines end with CR LF, LF or CR (a CR at the end of one chunk and an LF at the start of the
/// next are one line end). `data:` lines accumulate (joined with LF), `event:` sets the type,
/// `id:` the last event ID (ignored when it holds NUL), `retry:` the reconnection time (ASCII
/// digits only); lines starting with `:` are comments; a blank line dispatches the event, unless
/// it has no data. A leading byte order mark is skipped. It reads bytes with bounds-checked
/// Swift only: the stream is untrusted input.
public struct ServerSentEventParser: Sendable {
    /// The last event ID: sent as `Last-Event-ID` on reconnection.
    public private(set) var lastEventID = ""
    /// The reconnection time the stream asked for with `retry:`, if it did.
    public private(set) var reconnectionTime: Duration?

    private var line: [UInt8] = []
    /// Where the first `:` of `line` is, once it arrived: the field's name ends there.
    private var colon: Int?
    private var data: [UInt8] = []
    private var eventType: [UInt8] = []
    private var lastEventIDBuffer = ""
    private var endedWithCR = false
    private var atStreamStart = true
    /// The first bytes of the stream, held while they may be a byte order mark.
    private var start: [UInt8] = []
    /// The longest a line the parser holds whole may be when it is neither `data:` nor `event:`
    /// (a comment, an `id:`, another field), for ``EventStream``'s bound.
    var lineLimit = Int.max
    /// Set by a line over ``lineLimit``: ``parse(_:)`` reads no byte after it, so the events it
    /// returned came before it, whatever a chunk held after.
    private(set) var lineOverLimit = false

    /// A parser at the start of a stream.
    /// - Parameter lastEventID: The last event ID to start from (one stored by an earlier run),
    ///   carried by the events until the stream sends an `id:` of its own.
    public init(lastEventID: String = "") {
        self.lastEventID = lastEventID
        lastEventIDBuffer = lastEventID
    }

    /// The size of the event not dispatched yet, for a caller that bounds it: its data and type
    /// as they would be dispatched now, with the value of a `data:` or `event:` line still
    /// arriving, never more than the event will hold. A line of another field (a comment, an
    /// `id:`), or one whose name has not ended, counts instead when it is longer: the parser holds
    /// it whole.
    public var pendingByteCount: Int {
        // The data's last line feed is not dispatched.
        let data = max(0, self.data.count - 1)
        let event = data + eventType.count
        guard let colon else { return max(event, line.count) }
        var valueStart = colon + 1
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line.count - valueStart
        let name = line[..<colon]
        if name.elementsEqual("data".utf8) { return event + value }
        if name.elementsEqual("event".utf8) { return data + value }  // it replaces the type
        return max(event, line.count)
    }

    /// Reads `bytes`, and returns the events they complete, in order.
    public mutating func parse(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if lineOverLimit { break }
            guard atStreamStart else {
                if let event = take(byte) { events.append(event) }
                continue
            }
            // A UTF-8 byte order mark at the very start of the stream is skipped.
            start.append(byte)
            if start.count < 3, Self.byteOrderMark.starts(with: start) { continue }
            atStreamStart = false
            if start == Self.byteOrderMark {
                start = []
                continue
            }
            for held in start {
                if let event = take(held) { events.append(event) }
            }
            start = []
        }
        return events
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// One byte: a line end processes the line.
    private mutating func take(_ byte: UInt8) -> ServerSentEvent? {
        switch byte {
        case 0x0A where endedWithCR:
            endedWithCR = false  // the LF of a CR LF
            return nil
        case 0x0A, 0x0D:
            endedWithCR = byte == 0x0D
            return processLine()
        default:
            endedWithCR = false
            if colon == nil, byte == UInt8(ascii: ":") { colon = line.count }
            line.append(byte)
            return nil
        }
    }

    /// Starts a new connection's stream: an event cut by the end of the last one is dropped (it
    /// never had its blank line), its `id:` too; the last event ID and the reconnection time stay.
    public mutating func reset() {
        // The cut event's `id:` names an event that never arrived: the next connection's events
        // carry (and the one after sends) the last ID of an event that did.
        lastEventIDBuffer = lastEventID
        line.removeAll()
        colon = nil
        data.removeAll()
        eventType.removeAll()
        endedWithCR = false
        atStreamStart = true
        start = []
    }

    /// Handles the line in `line`; returns the event a blank line dispatches.
    private mutating func processLine() -> ServerSentEvent? {
        defer {
            line.removeAll(keepingCapacity: true)
            colon = nil
        }
        guard let first = line.first else { return dispatch() }
        if first == UInt8(ascii: ":") {
            if line.count > lineLimit { lineOverLimit = true }
            return nil
        }
        let name: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon {
            name = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            name = line[...]
            value = []
        }
        let field = String(decoding: name, as: UTF8.self)
        if field != "data", field != "event", line.count > lineLimit {
            // Not read: an `id:` over it would go back as `Last-Event-ID`.
            lineOverLimit = true
            return nil
        }
        switch field {
        case "event":
            eventType = Array(value)
        case "data":
            data += value
            data.append(0x0A)
        case "id":
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            // Digits beyond what an Int holds ask for the longest wait there is (the stream
            // caps it at its maximum), not for none.
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                reconnectionTime = .milliseconds(Int(String(decoding: value, as: UTF8.self)) ?? Int.max)
            }
        default:
            break
        }
        return nil
    }

    /// Dispatches the event the buffers hold, unless it has no data.
    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = lastEventIDBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            eventType.removeAll()
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()  // the LF after the last data line
        let type = eventType.isEmpty ? "message" : String(decoding: eventType, as: UTF8.self)
        return ServerSentEvent(type: type, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID)
    }
}
