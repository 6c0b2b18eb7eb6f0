import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayActionLog
import RunwayCompression
import RunwaySigning
import RunwaySync
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
    private let state: Locked<State>

    private struct State {
        var behaviour: Behaviour
        var received: [Received] = []
        var records: [ActionBatch.Record] = []
        var firstSeen: [String: [String]] = [:]
        var changedResends = 0
        var duplicateCount = 0
        var rejections: [String] = []
    }

    init(_ behaviour: Behaviour = Behaviour(), verifier: SignatureVerifier? = nil) {
        self.state = Locked(State(behaviour: behaviour))
        self.verifier = verifier
    }

    /// Every request, in arrival order.
    var requests: [Received] { state.withLock { $0.received } }
    /// Requests answered 2xx.
    var acknowledged: [Received] { requests.filter { (200..<300).contains($0.status) } }
    /// Acknowledged batches, each once, in the order first acknowledged (a request a killed or
    /// shut-down client abandoned can still be handled, and acknowledged, after it was re-sent).
    var acknowledgedBatches: [Received] {
        var seen = Set<String>()
        return acknowledged.filter { seen.insert($0.batchID).inserted }
    }
    /// The fresh records stored, in order.
    var stored: [ActionBatch.Record] { state.withLock { $0.records } }
    /// Records received again (a re-sent batch), dropped by the de-duplicator.
    var duplicates: Int { state.withLock { $0.duplicateCount } }
    /// Re-sent batch IDs whose records differed from the first sending (must stay 0).
    var changedResendCount: Int { state.withLock { $0.changedResends } }
    /// Requests refused (bad signature, bad body, idempotency key mismatch), with the reason.
    var rejected: [String] { state.withLock { $0.rejections } }

    func setBehaviour(_ change: (inout Behaviour) -> Void) { state.withLock { change(&$0.behaviour) } }

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
        let (status, wait, receipt): (Int, Duration, ActionBatchReceipt?) = state.withLock { state in
            let ids = batch.records.map(\.id)
            if let first = state.firstSeen[batch.id] {
                if first != ids { state.changedResends += 1 }
            } else {
                state.firstSeen[batch.id] = ids
            }
            if let name = state.behaviour.refuseName, batch.records.contains(where: { $0.name == name }) {
                state.received.append(
                    Received(batchID: batch.id, recordIDs: ids, status: state.behaviour.refusalStatus, headers: seen, at: .now))
                return (state.behaviour.refusalStatus, .zero, nil)
            }
            if state.behaviour.failures > 0 {
                state.behaviour.failures -= 1
                state.received.append(
                    Received(batchID: batch.id, recordIDs: ids, status: state.behaviour.failureStatus, headers: seen, at: .now))
                return (state.behaviour.failureStatus, .zero, nil)
            }
            let (fresh, receipt) = deduplicator.accept(batch)
            state.records += fresh
            state.duplicateCount += receipt.duplicates
            state.received.append(Received(batchID: batch.id, recordIDs: ids, status: 200, headers: seen, at: .now))
            if state.behaviour.lateAnswers > 0 {
                state.behaviour.lateAnswers -= 1
                return (200, state.behaviour.lateBy + state.behaviour.delay, receipt)
            }
            return (200, state.behaviour.delay, receipt)
        }
        if wait > .zero { try await Task.sleep(for: wait) }
        guard let receipt else { return Response(status: HTTPResponse.Status(code: status)) }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: receipt.encoded())))
    }

    private func reject(_ reason: String, status: HTTPResponse.Status) -> Response {
        state.withLock { $0.rejections.append(reason) }
        return Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: reason)))
    }
}
