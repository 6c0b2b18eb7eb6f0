#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One event of a `text/event-stream` (Server-Sent Events), as the WHATWG HTML standard
/// dispatches it.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the `event:` field, or `message` when there was none.
    public var type: String
    /// The `data:` lines joined with LF.
    public var data: String
    /// The last event ID in effect when the event was dispatched (the latest `id:` field, on
    /// this event or an earlier one; empty when none was sent or an empty one reset it): what a
    /// reconnection sends as `Last-Event-ID`.
    public var lastEventID: String

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
