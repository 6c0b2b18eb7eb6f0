import Foundation
import Logging
import Runway
import RunwayCompression
import RunwayCurl
import RunwayDNSBypass
import RunwayLogging
import Testing

/// The README's "Register interceptors at start-up" example, verbatim, so it keeps compiling.
func makeTransportPipeline(cachesDirectory: URL, logger: Logger) async throws -> Pipeline {
    let curl = CurlDispatcher()

    // DNS bypass: known addresses plus a daily IP list, probed at start-up.
    let bypass = try DNSBypass(
        .init(
            hosts: ["api.example.com": ["203.0.113.7", "198.51.100.9"]],
            ipListSource: IPListSource(url: URL(string: "https://config.example.com/iplist")!, dispatcher: curl),
            storeFile: cachesDirectory.appendingPathComponent("runway-addresses.json"),
            probe: .httpPing(path: "/ping", dispatcher: curl),
            onProblem: { problem in logger.warning("DNS bypass: \(problem)") }))
    await bypass.start()

    // The standard order (DefaultOrder): [tracing, metrics], logging, [validation, cache],
    // retry, compression, [signing], DNS bypass — then the dispatcher.
    return Pipeline(
        interceptors: [
            .logging(logger, redacting: try .standard(parameters: ["id_card"])),
            .retry(try RetryPolicy(maxAttempts: 3, nonIdempotentAPIs: ["order.create"])),
            try .compression(threshold: 1024, scope: .services(["listing"])),
            .dnsBypass(bypass),
        ], dispatcher: curl)
}

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleBuildsAPipelineInTheDefaultOrder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = try await makeTransportPipeline(cachesDirectory: directory, logger: Logger(label: "readme"))
        #expect(pipeline.interceptors.map(\.name) == ["logging", "retry", "compression", "dns-bypass"])
        #expect(DefaultOrder.misplaced(in: pipeline.interceptors).isEmpty)
    }
}
