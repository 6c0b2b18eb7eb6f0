import Foundation
import Runway
import RunwayActionLog
import RunwayTestServer
import Testing

/// Crash safety: `ActionLogCrashHelper` records and uploads while this test kills it with
/// SIGKILL, again and again, on the same outbox file; a last run drains the outbox.
///
/// **What "none lost" means here.** An action is *durable* once the helper printed
/// `DURABLE n` for it — `persist()` returned, so it was committed to the outbox. Every durable
/// action must reach the server, exactly once after the server's de-duplication, whatever the
/// moment of the kill. Actions recorded but not yet committed when the kill landed may be lost
/// (the documented window); none of them may arrive twice or altered either.
///
/// The kills take turns: at a random moment; while a batch is being uploaded (the endpoint
/// answers after 15 ms); and between the server's acknowledgement and the delete (the helper
/// holds that window open after printing the chosen `ACKED` until it is killed, so the kill
/// lands in it however slow the machine is). The seed is printed; replay a run with
/// `RUNWAY_CRASH_SEED=<seed>`, and run longer with `RUNWAY_CRASH_KILLS=<n>` (the ActionLog guide).
@Suite(.serialized) struct ActionLogCrashTests {
    @Test(.timeLimit(.minutes(20)))
    func killedAtRandomMomentsEveryDurableActionArrivesExactlyOnce() async throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = max(20, Int(environment["RUNWAY_CRASH_KILLS"] ?? "") ?? 24)
        let seed = UInt64(environment["RUNWAY_CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("ActionLogCrashTests: \(kills) kills, seed \(seed) (replay with RUNWAY_CRASH_SEED=\(seed))")
        var random = SeededRandom(seed: seed)
        let sink = ActionSink(.init(delay: .milliseconds(15)))
        let folder = TestFolder()
        defer { folder.remove() }
        let perRun = 2_000

        try await withTestServer(routes: sink.routes) { server in
            let url = server.url("/v1").absoluteString
            var durable: [Int: Int] = [:]
            var killedDuringUpload: [String] = []
            var killedAfterAck: [String] = []
            for run in 0..<kills {
                let start = run * 100_000
                let mode = run % 3
                // In mode 2, the acknowledgement after which the helper waits for its kill.
                let holdAtAck = mode == 2 ? Int.random(in: 1...2, using: &random) : 0
                let helper = try HelperProcess([
                    "--url", url, "--db", folder.outbox.path, "--run", String(run), "--start", String(start),
                    "--count", String(perRun), "--hold-at-ack", String(holdAtAck),
                ])
                let ready = await helper.line { $0 == "READY" }
                #expect(ready != nil, "run \(run) (seed \(seed)) never became ready: \(helper.output.suffix(5))")
                switch mode {
                case 0:
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0..<300, using: &random)))
                case 1:
                    let nth = Int.random(in: 1...3, using: &random)
                    if let line = await helper.line(nth, where: { $0.hasPrefix("UPLOADING ") }) {
                        killedDuringUpload.append(String(line.split(separator: " ")[1]))
                    }
                default:
                    if let line = await helper.line(holdAtAck, where: { $0.hasPrefix("ACKED ") }) {
                        killedAfterAck.append(String(line.split(separator: " ")[1]))
                    }
                }
                helper.kill()
                let exit = await helper.exitStatus()
                #expect(
                    exit == .signalled(SIGKILL),
                    "run \(run) (seed \(seed)) ended \(String(describing: exit))")
                durable[run] = helper.lastDurable
            }

            // A last, clean run uploads what the killed runs left behind.
            let drain = try HelperProcess(["--url", url, "--db", folder.outbox.path, "--run", "drain", "--count", "0", "--drain"])
            let drained = await drain.line(timeout: .seconds(120)) { $0.hasPrefix("DRAINED ") }
            #expect(drained == "DRAINED 0", "the drain run printed \(drain.output.suffix(5)) (seed \(seed))")
            let exit = await drain.exitStatus()
            #expect(exit == .exited(0))

            // Every durable action arrived, once; nothing arrived that was not recorded.
            let stored = sink.stored
            var byNumber: [Int: ActionBatch.Record] = [:]
            for record in stored {
                let n = try #require(record.n)
                #expect(byNumber[n] == nil, "action \(n) arrived twice under different record IDs (seed \(seed))")
                byNumber[n] = record
                let run = n / 100_000
                #expect(record.attributes["run"] == String(run) && n % 100_000 < perRun && record.name == "crash.test")
            }
            var lost: [Int] = []
            for run in 0..<kills {
                guard let last = durable[run] else { continue }
                lost += (run * 100_000...last).filter { byNumber[$0] == nil }
            }
            let lostCount = lost.count
            #expect(lostCount == 0, "durable actions never arrived, first \(lost.prefix(10)) (seed \(seed))")
            #expect(Set(stored.map(\.id)).count == stored.count)
            #expect(sink.changedResendCount == 0, "a batch was re-sent with other records (seed \(seed))")

            // The kills landed where they were aimed.
            #expect(durable.values.reduce(0) { $0 + ($1 > 0 ? 1 : 0) } >= kills / 2)
            #expect(killedDuringUpload.count >= kills / 3 - 1)
            #expect(killedAfterAck.count >= kills / 3 - 1)
            let sendings = Dictionary(grouping: sink.acknowledged, by: \.batchID).mapValues(\.count)
            for batch in killedAfterAck {
                // Acknowledged, killed before the delete: sent again by the next run, de-duplicated.
                #expect(
                    sendings[batch, default: 0] >= 2, "batch \(batch) was not re-sent after a kill between ack and delete (seed \(seed))")
            }
            for batch in killedDuringUpload {
                #expect(sendings[batch, default: 0] >= 1, "batch \(batch), killed in flight, never arrived (seed \(seed))")
            }
            #expect(sink.duplicates >= killedAfterAck.count)
            print(
                "ActionLogCrashTests: \(stored.count) actions stored, \(sink.duplicates) duplicates dropped by the server, "
                    + "\(sink.requests.count) requests"
            )
        }
    }
}
