// A client that links every product Runway can build without Foundation (FoundationEssentials
// only): `FoundationFreeTests` checks that the binary does not load libFoundation.so (nor ICU),
// and runs it to read its peak RSS.
//
//     FoundationFreeClient bare|chain <url> <requests>
//
// `bare` sends through a pipeline with no interceptor; `chain` through the standard chain of
// Foundation-free interceptors, a response cache on disk among them (for another API, so every
// request goes out). Both first record an action in an action log's outbox. Prints one line:
// `{"mode":"…","requests":N,"peak_rss_kb":K}`.
import Dispatch
import HTTPTypes
import Logging
import Runway
import RunwayActionLog
import RunwayCache
import RunwayCompression
import RunwayCurl
import RunwayDNSBypass
import RunwayHAR
import RunwayHTTPTypes
import RunwayLogging
import RunwayMediator
import RunwayMetrics
import RunwayServerSentEvents
import RunwaySigning
import RunwayTracing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

func fail(_ message: String) -> Never {
    print("FoundationFreeClient: \(message)")
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]), let target = URLComponents(string: arguments[2]) else {
    fail("usage: FoundationFreeClient bare|chain <url> <requests>")
}
let mode = arguments[1]

/// The SQLite files of the cache and the action log, removed at the end.
let scratch = FileManager.default.temporaryDirectory.appending(path: "runway-foundation-free-\(getpid())")

func chain() async throws -> [any Interceptor] {
    var logger = Logger(label: "client")
    logger.logLevel = .warning
    let bypass = try DNSBypass(.init(hosts: ["api.client.test": ["127.0.0.1"]], fallsBackToDNS: false))
    await bypass.start()
    return [
        TracingInterceptor.tracing(), try MetricsInterceptor.metrics(), .logging(logger), .har(HARRecorder(maxEntries: 10)),
        try .validation(["client.items": try APIValidation(parameters: [ParameterRule("page", .pattern(#"^\d+$"#))])]),
        try ResponseCache(policies: ["client.other": .memoryAndDisk()], diskFile: scratch.appending(path: "cache.sqlite")).interceptor,
        try .retry(maxAttempts: 3), try .compression(threshold: 1024),
        try .signing(secret: "client-secret-0123456789abcdef", keyID: "client"),
        .dnsBypass(bypass),
    ]
}

func run() async throws {
    // The other products, used once so that they are linked for what they are.
    _ = try Mediator.Builder().build()
    let headers: HTTPHeaders = ["Accept": "text/event-stream"]
    _ = try HTTPFields(headers)
    _ = ServerSentEventParser()
    let actions = try ActionLogger(.init(file: scratch.appending(path: "actions.sqlite"), serviceID: "analytics"))
    _ = actions.record("client.started", attributes: ["mode": mode])
    try await actions.persist()
    await actions.shutdown()

    var url = target
    let interceptors: [any Interceptor]
    switch mode {
    case "bare":
        interceptors = []
    case "chain":
        url.host = "api.client.test"
        interceptors = try await chain()
    default:
        fail("unknown mode \(mode)")
    }
    url.query = "page=1"
    let pipeline = Pipeline(interceptors: interceptors, dispatcher: CurlDispatcher())
    let request = try Request(url.string ?? "")
    let context = RequestContext(apiName: "client.items")
    for _ in 0..<count {
        let response = try await pipeline.send(request, context: context)
        guard response.status == 200 else { fail("status \(response.status)") }
    }
    try? FileManager.default.removeItem(at: scratch)
    print(#"{"mode":"\#(mode)","requests":\#(count),"peak_rss_kb":\#(peakRSSKilobytes())}"#)
}

/// The process's peak RSS since it started this program. On Linux that is `VmHWM`: `ru_maxrss`
/// would also count what the parent's memory was before the fork that led to this process.
func peakRSSKilobytes() -> Int {
    #if os(Linux)
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if text.hasPrefix("VmHWM:") { return Int(text.dropFirst(6).filter { $0 != " " && $0 != "\t" }.dropLast(3)) ?? -1 }
    }
    return -1
    #else
    var usage = rusage()
    getrusage(RUSAGE_SELF, &usage)
    return usage.ru_maxrss / 1024
    #endif
}

Task {
    do {
        try await run()
        exit(0)
    } catch {
        fail("\(error)")
    }
}
dispatchMain()
