// A test-support process for the action log's crash tests (`ActionLogCrashTests`): it records
// actions into an outbox and uploads them to a test server while the test kills it with SIGKILL.
//
//     ActionLogCrashHelper --url http://127.0.0.1:PORT/v1 --db /tmp/x/actions.sqlite \
//         --run 3 --start 3000 --count 400 [--hold-at-ack 2] [--drain]
//
// It prints one line per phase on standard output, each with a single write(2), so the test can
// aim its kill:
//   READY                       the logger is open (leftovers already put into batches)
//   DURABLE <n>                 every action up to number <n> of this run is committed
//   UPLOADING <batch> <count>   a batch is being sent
//   ACKED <batch> <count>       the server acknowledged it; with --hold-at-ack n, the nth
//                               acknowledgement is never followed by its delete: the helper
//                               waits there until it is killed
//   UPLOADED <batch> <count>    the batch is deleted from the outbox
//   RECORDED                    every action of this run is recorded and committed
//   DRAINED <pending>           (--drain) the outbox was flushed; the process then exits 0
import Foundation
import Runway
import RunwayActionLog
import RunwayCurl
import Synchronization

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("ActionLogCrashHelper: " + message + "\n").utf8))
    exit(2)
}

var options: [String: String] = [:]
var flags: Set<String> = []
var arguments = CommandLine.arguments.dropFirst()[...]
while let argument = arguments.popFirst() {
    guard argument.hasPrefix("--") else { fail("unexpected argument \(argument)") }
    let name = String(argument.dropFirst(2))
    if name == "drain" {
        flags.insert(name)
    } else {
        guard let value = arguments.popFirst() else { fail("--\(name) needs a value") }
        options[name] = value
    }
}
guard let baseURL = options["url"], let database = options["db"] else { fail("--url and --db are required") }
let run = options["run"] ?? "0"
let start = Int(options["start"] ?? "0") ?? 0
let count = Int(options["count"] ?? "0") ?? 0
let holdAtAck = Int(options["hold-at-ack"] ?? "0") ?? 0
let acknowledgements = Atomic(0)
let drain = flags.contains("drain")

let analytics: ServiceID = "analytics"

struct AnalyticsService: Service {
    let id: ServiceID = "analytics"
    let baseURLs: BaseURLs
}

do {
    var builder = ServiceRegistry.Builder(
        environment: .release,
        pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()))
    builder.register(AnalyticsService(baseURLs: BaseURLs(baseURL)))
    let registry = try builder.build()

    var configuration = ActionLogger.Configuration(file: URL(fileURLWithPath: database), serviceID: analytics)
    configuration.registry = registry
    configuration.maxRecords = 1_000_000  // the drop policy is not under test here
    configuration.flushInterval = .milliseconds(200)
    configuration.initialBackoff = .milliseconds(20)
    configuration.maxBackoff = .milliseconds(200)
    configuration.requestOptions = RequestOptions(connectTimeout: .seconds(2), timeout: .seconds(5))
    configuration.onEvent = { event in
        switch event.kind {
        case .uploading: say("UPLOADING \(event.batchID ?? "-") \(event.count)")
        case .acknowledged:
            say("ACKED \(event.batchID ?? "-") \(event.count)")
            // Holds the window between the acknowledgement and the delete open until the kill
            // lands in it, however long the test takes to send it.
            if acknowledgements.add(1, ordering: .relaxed).newValue == holdAtAck {
                while true { sleep(3600) }
            }
        case .uploaded: say("UPLOADED \(event.batchID ?? "-") \(event.count)")
        default: break
        }
    }
    let actions = try ActionLogger(configuration)
    say("READY")

    var n = start
    while n < start + count {
        let chunkEnd = min(start + count, n + 7)
        while n < chunkEnd {
            actions.record("crash.test", attributes: ["n": String(n), "run": run])
            n += 1
        }
        try await actions.persist()
        say("DURABLE \(n - 1)")
        try await Task.sleep(for: .milliseconds(2))
    }
    say("RECORDED")

    if drain {
        var attempts = 0
        while true {
            do {
                try await actions.flush()
                break
            } catch {
                attempts += 1
                if attempts > 50 { fail("flush kept failing: \(error)") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        say("DRAINED \(actions.statistics.pending)")
        await actions.shutdown()
        exit(0)
    }
    // Keep uploading until the test kills the process (at most a minute, for safety).
    try await Task.sleep(for: .seconds(60))
    fail("was never killed")
} catch {
    fail("\(error)")
}
