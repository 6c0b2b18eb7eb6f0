import Foundation

/// A TCP server on 127.0.0.1 that answers every request with the same bytes, whatever was
/// asked, then closes the connection: for replies no HTTP server library would send (a garbage
/// status line, a folded header, a header over a client's limit, a header section cut off).
/// Call ``stop()`` when done.
public final class RawResponder: Sendable {
    private let responder: ScriptedResponder

    /// The port it listens on.
    public var port: Int { responder.port }

    /// Starts listening and answering with `reply`.
    public init(reply: [UInt8]) throws {
        responder = try ScriptedResponder { _ in .replyAndClose(reply) }
    }

    /// Starts a responder whose reply is `text` (UTF-8) followed by `extra` bytes.
    public convenience init(_ text: String, extra: [UInt8] = []) throws {
        try self.init(reply: Array(text.utf8) + extra)
    }

    /// `http://127.0.0.1:port` + `path`.
    public func url(_ path: String = "/") -> URL { responder.url(path) }

    /// Stops accepting.
    public func stop() { responder.stop() }
}
