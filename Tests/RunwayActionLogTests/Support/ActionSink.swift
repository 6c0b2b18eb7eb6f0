import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayActionLog
import RunwayCompression
import RunwaySigning
import RunwayTestServer

/// The batch endpoint of the action-log tests, written as a server team would with
/// ``ActionBatch`` and ``ActionDeduplicator``, and what it saw.
///
/// `POST /v1/actions/batch`: checks the signature (when given a verifier), gunzips a gzip body,
/// decodes the batch, checks `Idempotency-Key`, de-duplicates, stores the fresh records and
/// answers the receipt. ``Behaviour`` makes it fail, stall or answer late.
final class ActionSink: Sendable {
    /// How the endpoint answers the next requests.
    struct Behaviour: Sendable {
        /// Answer this status (without storing anything) to the next `failures` requests.
        var failures = 0
        var failureStatus = 500
        /// Store the batch, then wait this long before answering, for the next `lateAnswers` requests.
        var lateAnswers = 0
        var lateBy: Duration = .zero
        /// Wait this long before answering every request (after storing).
        var delay: Duration = .zero
        /// Refuse (this status, nothing stored) every batch holding an action of this name, as
        /// a server does that cannot parse one record.
        var refuseName: String?
        var refusalStatus = 422
    }

    /// One request as received.
    struct Received: Sendable {
        let batchID: String
        let recordIDs: [String]
        let status: Int
        let headers: [String: String]
        let at: ContinuousClock.Instant
    }

    let deduplicator = ActionDeduplicator()
    let verifier: SignatureVerifier?
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var behaviour: Behaviour
    nonisolated(unsafe) private var received: [Received] = []
    nonisolated(unsafe) private var records: [ActionBatch.Record] = []
    nonisolated(unsafe) private var firstSeen: [String: [String]] = [:]
    nonisolated(unsafe) private var changedResends = 0
    nonisolated(unsafe) private var duplicateCount = 0
    nonisolated(unsafe) private var rejections: [String] = []

    init(_ behaviour: Behaviour = Behaviour(), verifier: SignatureVerifier? = nil) {
        self.behaviour = behaviour
        self.verifier = verifier
    }

    /// Every request, in arrival order.
    var requests: [Received] { lock.withLock { received } }
    /// Requests answered 2xx.
    var acknowledged: [Received] { requests.filter { (200..<300).contains($0.status) } }
    /// Acknowledged batches, each once, in the order first acknowledged (a request a killed or
    /// shut-down client abandoned can still be handled, and acknowledged, after it was re-sent).
    var acknowledgedBatches: [Received] {
        var seen = Set<String>()
        return acknowledged.filter { seen.insert($0.batchID).inserted }
    }
    /// The fresh records stored, in order.
    var stored: [ActionBatch.Record] { lock.withLock { records } }
    /// Records received again (a re-sent batch), dropped by the de-duplicator.
    var duplicates: Int { lock.withLock { duplicateCount } }
    /// Re-sent batch IDs whose records differed from the first sending (must stay 0).
    var changedResendCount: Int { lock.withLock { changedResends } }
    /// Requests refused (bad signature, bad body, idempotency key mismatch), with the reason.
    var rejected: [String] { lock.withLock { rejections } }

    func setBehaviour(_ change: (inout Behaviour) -> Void) { lock.withLock { change(&behaviour) } }

    var routes: TestServer.Routes {
        { router in
            router.post("/v1/actions/batch") { request, _ in try await self.handle(request) }
        }
    }

    private func handle(_ request: Request) async throws -> Response {
        var request = request
        var body = Data(try await request.collectBody(upTo: 8 << 20).readableBytesView)
        let headers = request.headers
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
        if let verifier {
            do {
                try verifier.verify(
                    method: request.method.rawValue, path: request.uri.path, query: request.uri.query, headers: header, body: body)
            } catch {
                return reject("signature: \(error.code)", status: .unauthorized)
            }
        }
        if header("Content-Encoding") == "gzip" { body = try Gzip.decompress(body, limit: 8 << 20) }
        let batch: ActionBatch
        do {
            batch = try ActionBatch(decoding: body)
        } catch {
            return reject("body: \(error)", status: .badRequest)
        }
        guard header("Idempotency-Key") == batch.id else { return reject("Idempotency-Key", status: .badRequest) }
        let names = ["content-type", "content-encoding", "x-client", "x-runway-signature"]
        let seen = Dictionary(uniqueKeysWithValues: names.compactMap { name in header(name).map { (name, $0) } })
        let (status, wait, receipt): (Int, Duration, ActionBatchReceipt?) = lock.withLock {
            let ids = batch.records.map(\.id)
            if let first = firstSeen[batch.id] {
                if first != ids { changedResends += 1 }
            } else {
                firstSeen[batch.id] = ids
            }
            if let name = behaviour.refuseName, batch.records.contains(where: { $0.name == name }) {
                received.append(Received(batchID: batch.id, recordIDs: ids, status: behaviour.refusalStatus, headers: seen, at: .now))
                return (behaviour.refusalStatus, .zero, nil)
            }
            if behaviour.failures > 0 {
                behaviour.failures -= 1
                received.append(Received(batchID: batch.id, recordIDs: ids, status: behaviour.failureStatus, headers: seen, at: .now))
                return (behaviour.failureStatus, .zero, nil)
            }
            let (fresh, receipt) = deduplicator.accept(batch)
            records += fresh
            duplicateCount += receipt.duplicates
            received.append(Received(batchID: batch.id, recordIDs: ids, status: 200, headers: seen, at: .now))
            if behaviour.lateAnswers > 0 {
                behaviour.lateAnswers -= 1
                return (200, behaviour.lateBy + behaviour.delay, receipt)
            }
            return (200, behaviour.delay, receipt)
        }
        if wait > .zero { try await Task.sleep(for: wait) }
        guard let receipt else { return Response(status: HTTPResponse.Status(code: status)) }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: receipt.encoded())))
    }

    private func reject(_ reason: String, status: HTTPResponse.Status) -> Response {
        lock.withLock { rejections.append(reason) }
        return Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: reason)))
    }
}
