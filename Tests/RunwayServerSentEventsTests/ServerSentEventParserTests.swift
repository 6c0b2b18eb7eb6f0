import Foundation
import RunwayServerSentEvents
import Testing

/// The parser against the WHATWG HTML standard's examples (§ 9.2.4–9.2.6), fed whole and byte by
/// byte.
@Suite struct ServerSentEventParserTests {
    /// The events `text` makes, fed at once and then one byte at a time (which must agree).
    func events(_ text: String) -> [ServerSentEvent] {
        var whole = ServerSentEventParser()
        let all = whole.parse(Array(text.utf8))
        var bytewise = ServerSentEventParser()
        let split = text.utf8.flatMap { bytewise.parse([$0]) }
        #expect(all == split)
        return all
    }

    @Test func multiLineDataIsJoinedWithLineFeeds() {
        #expect(events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func commentsIDsAndTheLastEventWithoutABlankLine() {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
        // The third event has no blank line: not dispatched.
        #expect(events(stream) == [ServerSentEvent(data: "first event", lastEventID: "1"), ServerSentEvent(data: "second event")])
    }

    @Test func emptyDataFieldsDispatchEmptyAndNewlineEvents() {
        #expect(events("data\n\ndata\ndata\n\ndata:\n") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test func aSpaceAfterTheColonIsOptionalAndOnlyOneIsRemoved() {
        #expect(events("data:test\n\ndata: test\n\n") == [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")])
        #expect(events("data:  two spaces\n\n") == [ServerSentEvent(data: " two spaces")])
    }

    @Test func eventTypesAndTheDefault() {
        let stream = "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\ndata: plain\n\n"
        #expect(events(stream).map(\.type) == ["add", "remove", "add", "message"])
    }

    @Test func lineEndsMayBeCRLFOrCROrLFInOneStream() {
        #expect(events("data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n") == ["a", "b", "c", "d"].map { ServerSentEvent(data: $0) })
    }

    @Test func aCRLFSplitAcrossChunksIsOneLineEnd() {
        var parser = ServerSentEventParser()
        #expect(parser.parse(Array("data: x\r".utf8)).isEmpty)
        // The LF completes the CR LF; the next CR LF is the blank line.
        #expect(parser.parse(Array("\n\r\n".utf8)) == [ServerSentEvent(data: "x")])
    }

    @Test func eventsWithoutDataAreNotDispatchedButTheirIDCounts() {
        #expect(events("event: ping\n\nid: 7\n\ndata: next\n\n") == [ServerSentEvent(data: "next", lastEventID: "7")])
    }

    @Test func anIDWithNULIsIgnoredAndAnEmptyOneResets() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("id: 5\ndata: a\n\n".utf8))
        #expect(parser.parse(Array("id: 6\u{0}\ndata: b\n\n".utf8)) == [ServerSentEvent(data: "b", lastEventID: "5")])
        #expect(parser.parse(Array("id\ndata: c\n\n".utf8)) == [ServerSentEvent(data: "c", lastEventID: "")])
        #expect(parser.lastEventID == "")
    }

    @Test func retryTakesDigitsOnly() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("retry: 2500\n\nretry: 1e3\n\nretry: -5\n\nretry:\n\n".utf8))
        #expect(parser.reconnectionTime == .milliseconds(2500))
        // More digits than an Int holds: the longest wait, not none.
        _ = parser.parse(Array("retry: 99999999999999999999\n".utf8))
        #expect(parser.reconnectionTime == .milliseconds(Int.max))
    }

    @Test func thePendingCountNeverExceedsTheEventItBecomes() {
        // Fed a byte at a time, the count stays within the dispatched event's data and type.
        let text = "event: first\nevent: t\nid: 7\n: a comment\ndata: abcdefghijkl\ndata\ndata: de\n\n"
        var parser = ServerSentEventParser()
        var counts: [Int] = []
        var events: [ServerSentEvent] = []
        for byte in text.utf8 {
            events += parser.parse([byte])
            counts.append(parser.pendingByteCount)
        }
        #expect(events == [ServerSentEvent(type: "t", data: "abcdefghijkl\n\nde", lastEventID: "7")])
        let size = events[0].type.utf8.count + events[0].data.utf8.count
        #expect(counts.max() == size)
        #expect(counts.last == 0)
        // A line of another field counts alone, whole: the parser holds it.
        _ = parser.parse(Array(": \(String(repeating: "c", count: 40))".utf8))
        #expect(parser.pendingByteCount == 42)
    }

    @Test func unknownFieldsAreIgnoredAndALeadingByteOrderMarkSkipped() {
        #expect(events("\u{FEFF}data: a\nfoo: bar\n\n") == [ServerSentEvent(data: "a")])
        // Only at the start of the stream: a second one is part of the field name.
        #expect(events("\u{FEFF}\u{FEFF}data: a\n\ndata: b\n\n") == [ServerSentEvent(data: "b")])
    }

    @Test func resetDropsACutEventAndKeepsTheLastEventID() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("id: 3\ndata: whole\n\ndata: cut".utf8))
        parser.reset()
        #expect(parser.parse(Array("data: next\n\n".utf8)) == [ServerSentEvent(data: "next", lastEventID: "3")])
    }

    @Test func resetDropsTheIDOfACutEvent() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("id: 3\ndata: whole\n\nid: 4\ndata: cut".utf8))
        parser.reset()
        #expect(parser.parse(Array("data: next\n\n".utf8)) == [ServerSentEvent(data: "next", lastEventID: "3")])
        #expect(parser.lastEventID == "3")
    }

    /// A server's `retry:` of many digits, or a configured limit of `Int64.max` seconds, made the
    /// backoff's multiplication (and the sleep's nanoseconds) overflow and trap.
    @Test func theReconnectionWaitBacksOffWithinItsLimitAndNeverOverflows() {
        let minute = Duration.seconds(60)
        #expect(EventStream.reconnectionWait(asked: .seconds(3), limit: minute, reconnections: 1) == .seconds(3))
        #expect(EventStream.reconnectionWait(asked: .zero, limit: minute, reconnections: 3) == .milliseconds(400))
        #expect(EventStream.reconnectionWait(asked: .seconds(3), limit: minute, reconnections: 10) == minute)
        #expect(EventStream.reconnectionWait(asked: .seconds(-5), limit: minute, reconnections: 1) == .zero)
        let huge = Duration.seconds(Int64.max)
        for reconnections in [1, 2, 30] {
            #expect(EventStream.reconnectionWait(asked: huge, limit: huge, reconnections: reconnections) == EventStream.longestWait)
            #expect(
                EventStream.reconnectionWait(asked: .seconds(1 << 40), limit: huge, reconnections: reconnections) <= EventStream.longestWait
            )
        }
        #expect(EventStream.reconnectionWait(asked: .seconds(1), limit: huge, reconnections: 30) == .seconds(1 << 20))
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        var parser = ServerSentEventParser()
        #expect(parser.parse([0x64, 0x61, 0x74, 0x61, 0x3A, 0xFF, 0x0A, 0x0A]) == [ServerSentEvent(data: "\u{FFFD}")])
    }
}
