import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayTestServer

/// `POST /api/actions/batch`: the action-log upload, de-duplicated.
///
/// Request: header `Idempotency-Key: <batch id>` and the body
/// `{"batch": "<UUID>", "records": [{"id": "<UUID>", "name": "...", "at": <ms since 1970>, "attributes": {"k": "v"}}]}`.
/// Answer: 200 `{"accepted": <new records>, "duplicates": <records seen before>}`. Records are
/// de-duplicated by id; a batch sent again (same batch id) gets its first answer again and
/// counts nothing twice. A malformed batch is a 400 naming the problem; nothing of it is stored.
enum ActionLogAPI {
    static func add(to router: RouterGroup<TestRequestContext>, store: ActionLogStore) {
        router.post("/api/actions/batch") { request, _ in
            var request = request
            guard let body = try await Reply.body(&request) else {
                return Reply.error(.badRequest, code: 400, "the body is not JSON", for: request)
            }
            let batch: (id: UUID, records: [ActionLogStore.Record])
            do throws(Malformed) {
                batch = try parse(body)
            } catch {
                return Reply.error(.badRequest, code: 400, error.message, for: request)
            }
            guard let key = request.headers[.idempotencyKey], UUID(uuidString: key) == batch.id else {
                return Reply.error(.badRequest, code: 400, "Idempotency-Key must be the batch id", for: request)
            }
            let acknowledgement = store.receive(batch: batch.id, records: batch.records)
            return Reply.json(
                ["accepted": .int(Int64(acknowledgement.accepted)), "duplicates": .int(Int64(acknowledgement.duplicates))],
                for: request)
        }
    }

    struct Malformed: Error {
        let message: String
    }

    static func parse(_ body: JSON) throws(Malformed) -> (id: UUID, records: [ActionLogStore.Record]) {
        guard let batchText = body["batch"]?.string, let batch = UUID(uuidString: batchText) else {
            throw Malformed(message: "batch must be a UUID string")
        }
        guard let list = body["records"]?.array else { throw Malformed(message: "records must be an array") }
        var records: [ActionLogStore.Record] = []
        for (index, entry) in list.enumerated() {
            guard let idText = entry["id"]?.string, let id = UUID(uuidString: idText) else {
                throw Malformed(message: "records[\(index)].id must be a UUID string")
            }
            guard let name = entry["name"]?.string, !name.isEmpty else {
                throw Malformed(message: "records[\(index)].name must be a non-empty string")
            }
            guard case .int(let at)? = entry["at"] else {
                throw Malformed(message: "records[\(index)].at must be an integer (ms since 1970)")
            }
            var attributes: [String: String] = [:]
            if let object = entry["attributes"] {
                guard let members = object.object else { throw Malformed(message: "records[\(index)].attributes must be an object") }
                for (key, value) in members {
                    guard let text = value.string else {
                        throw Malformed(message: "records[\(index)].attributes.\(key) must be a string")
                    }
                    attributes[key] = text
                }
            }
            records.append(ActionLogStore.Record(id: id, name: name, at: at, attributes: attributes))
        }
        return (batch, records)
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key`.
    static var idempotencyKey: HTTPField.Name { HTTPField.Name("Idempotency-Key") ?? .contentType }
}
