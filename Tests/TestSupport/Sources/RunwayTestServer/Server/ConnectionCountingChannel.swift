import HummingbirdCore
import Logging
import NIOCore

/// Wraps the server's child-channel setup to count every accepted TCP connection exactly,
/// before TLS or HTTP parsing (so a failed TLS handshake is a connection too).
struct ConnectionCountingChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let stats: TestServerStats

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        stats.recordConnection()
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
