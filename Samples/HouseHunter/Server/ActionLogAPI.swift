import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayActionLog
import RunwayTestServer

/// `POST /api/actions/batch`: the action-log upload, in `RunwayActionLog`'s wire format
/// (``ActionBatch``), de-duplicated by record id.
///
/// Request: header `Idempotency-Key: <batch id>` and the body
/// `{"batch": "<UUID>", "records": [{"id": "<UUID>", "name": "...", "at": <ms since 1970>, "attributes": {"k": "v"}}]}`.
/// Answer: 200 `{"accepted": <new records>, "duplicates": <records seen before>}`; a batch sent
/// again is acknowledged again and counts nothing twice. A malformed batch, or an
/// `Idempotency-Key` that is not the batch id, is a 400 naming the problem; nothing of it is stored.
enum ActionLogAPI {
    static func add(to router: RouterGroup<TestRequestContext>, store: ActionLogStore) {
        router.post("/api/actions/batch") { request, _ in
            var request = request
            let body = Data(try await request.collectBody(upTo: SignatureCheck.maxBody).readableBytesView)
            let batch: ActionBatch
            do throws(RunwayError) {
                batch = try ActionBatch(decoding: body)
            } catch {
                return Reply.error(.badRequest, code: 400, error.message, for: request)
            }
            guard let key = request.headers[.idempotencyKey], key.lowercased() == batch.id.lowercased() else {
                return Reply.error(.badRequest, code: 400, "\(ActionBatch.idempotencyHeader) must be the batch id", for: request)
            }
            let receipt = store.receive(batch)
            return Reply.json(
                ["accepted": .int(Int64(receipt.accepted)), "duplicates": .int(Int64(receipt.duplicates))], for: request)
        }
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key`.
    static var idempotencyKey: HTTPField.Name { HTTPField.Name(ActionBatch.idempotencyHeader) ?? .contentType }
}
