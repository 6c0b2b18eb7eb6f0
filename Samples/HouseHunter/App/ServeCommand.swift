import ArgumentParser
import Dispatch
import Foundation
import HouseHunterServer

/// `house-hunter serve`: the sample API server alone, for `--server` and for a look with curl.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the sample API server until Ctrl-C (other runs then use --server).")

    @Option(help: "The port of the first address (127.0.0.1); 0 takes a free one. The other addresses always take free ones.")
    var port: Int = 8080

    @OptionGroup var shared: SharedOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        let stop = StopSignal()
        let server = try await Startup.run {
            try await SampleServer.start(
                .init(
                    port: port, secret: shared.secret, hostNames: SampleSetup.hostNames,
                    tokenLifetime: shared.tokenLifetimeDuration))
        }
        Console.out("HouseHunter sample server")
        for (address, endpoint) in zip(server.configuration.addresses, server.endpoints) {
            Console.out("  http://\(endpoint)  (every request waits \(Milliseconds(address.delay)))")
        }
        Console.out("  hosts in the IP list: \(SampleSetup.hostNames.joined(separator: ", "))")
        Console.out("  try: house-hunter --server \(server.url.absoluteString) 'app://listing/list?kind=rent&city=sh'")
        Console.out("  Ctrl-C stops it.")
        await stop.wait()
        Console.out("stopping")
        await server.shutdown()
    }
}

/// Waits for SIGINT or SIGTERM.
final class StopSignal {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Void>

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        self.stream = stream
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
    }

    func wait() async {
        for await _ in stream { return }
    }
}

/// `150 ms`.
struct Milliseconds: CustomStringConvertible {
    let duration: Duration

    init(_ duration: Duration) { self.duration = duration }

    var description: String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }
}
