import ArgumentParser
import Foundation
import RunwayDNSBypass

/// Options every mode that talks to the API shares.
struct AppOptions: ParsableArguments {
    @Option(help: "Talk to a running sample server (`house-hunter serve`) at this URL instead of starting one, e.g. http://127.0.0.1:8080.")
    var server: String?

    @Option(help: "Give up on a request after this many seconds.")
    var timeout: Double = 10

    @Option(help: "Network log on stderr: trace, debug, info, notice, warning, error or critical (the default: quiet).")
    var logLevel: String = "critical"

    @Option(help: "The action log's outbox (SQLite); default $HOUSEHUNTER_ACTION_LOG or ~/.cache/househunter/actions.sqlite.")
    var actionLog: String?

    @Option(
        name: .customLong("har"),
        help: ArgumentHelp("Write every call to FILE as HAR 1.2 when the app finishes (secrets redacted).", valueName: "FILE"))
    var harFile: String?

    @OptionGroup var shared: SharedOptions

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        if let server { _ = try ServerAddress(server) }
        if let harFile, harFile.isEmpty { throw ValidationError("--har takes a file name") }
    }

    /// The request timeout.
    var requestTimeout: Duration { .milliseconds(Int64((timeout * 1000).rounded())) }

    /// The signing secret.
    var secret: String { shared.secret }

    /// The token lifetime of an embedded server.
    var tokenLifetimeDuration: Duration { shared.tokenLifetimeDuration }
}

/// What the app and the server it embeds (or `serve` runs) must agree on.
struct SharedOptions: ParsableArguments {
    @Option(help: "The signing secret shared by the app and the server.")
    var secret: String = SampleSetup.secret

    @Option(help: "How long the server's access tokens live, in seconds.")
    var tokenLifetime: Double = 60

    func validate() throws {
        guard tokenLifetime > 0, tokenLifetime.isFinite else {
            throw ValidationError("--token-lifetime must be a positive number of seconds")
        }
        guard !secret.isEmpty else { throw ValidationError("--secret must not be empty") }
    }

    /// ``tokenLifetime`` as a duration.
    var tokenLifetimeDuration: Duration { .milliseconds(Int64((tokenLifetime * 1000).rounded())) }
}

/// The `--server` URL: plain HTTP to an IP address and a port, the first address the DNS
/// bypass knows (it learns the others from the server's IP list).
struct ServerAddress: Sendable {
    let url: URL
    let endpoint: String

    init(_ text: String) throws {
        guard let url = URL(string: text), url.scheme == "http", let host = url.host, let port = url.port,
            url.path.isEmpty || url.path == "/"
        else {
            throw ValidationError("--server must look like http://127.0.0.1:8080 (plain HTTP, an IP address and a port), not '\(text)'")
        }
        let literal = host == "localhost" ? "127.0.0.1" : host
        guard let endpoint = try? Endpoint("\(literal):\(port)") else {
            throw ValidationError("--server must name an IP address (the DNS bypass connects to addresses, not names), not '\(host)'")
        }
        self.url = URL(string: "http://\(endpoint)") ?? url
        self.endpoint = endpoint.description
    }
}
