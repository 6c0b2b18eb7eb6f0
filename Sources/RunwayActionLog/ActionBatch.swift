#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One upload of the action log: the wire format, for the client that sends it and for a Swift
/// server that receives it.
///
/// `POST <service base URL>/<apiName>` (default `actions/batch`) with the header
/// `Idempotency-Key: <batch ID>` and the JSON body
/// ```json
/// {"batch": "<batch ID, a UUID>",
///  "records": [{"id": "<record ID, a UUID>", "name": "<action name>", "at": <ms since 1970>,
///               "attributes": {"<string>": "<string>"}}]}
/// ```
/// Any 2xx response acknowledges the whole batch; the body may be
/// `{"accepted": <n>, "duplicates": <m>}` (``ActionBatchReceipt``) but the client does not
/// require it. A batch that was sent but not acknowledged is sent again with the **same batch ID
/// and the same records**, so a server de-duplicates by record ID (``ActionDeduplicator``) and
/// delivery is exactly-once after de-duplication.
///
/// On a server:
/// ```swift
/// let batch = try ActionBatch(decoding: body)          // typed error naming the bad field
/// let (fresh, receipt) = deduplicator.accept(batch)    // fresh: records never seen before
/// store(fresh)
/// return receipt.encoded()                             // {"accepted":30,"duplicates":0}
/// ```
public struct ActionBatch: Sendable, Hashable {
    /// One recorded action on the wire.
    public struct Record: Sendable, Hashable {
        /// The record's unique ID (a UUID string), assigned when it was written to the outbox.
        public var id: String
        /// The action's name.
        public var name: String
        /// When it happened, in milliseconds since 1970.
        public var at: Int64
        /// The action's attributes.
        public var attributes: [String: String]

        /// Creates a record.
        public init(id: String, name: String, at: Int64, attributes: [String: String]) {
            self.id = id
            self.name = name
            self.at = at
            self.attributes = attributes
        }

        /// The record as a JSON object, members sorted by key.
        public func encoded() -> Data {
            JSON.object([
                "id": .string(id), "name": .string(name), "at": .int(at),
                "attributes": .object(attributes.mapValues { .string($0) }),
            ]).serializedData()
        }
    }

    /// The header that carries the batch ID.
    public static let idempotencyHeader = "Idempotency-Key"

    /// The batch ID (a UUID string); the same every time this batch is sent.
    public var id: String
    /// The records, oldest first.
    public var records: [Record]

    /// Creates a batch.
    public init(id: String, records: [Record]) {
        self.id = id
        self.records = records
    }

    /// The request body.
    public func encoded() -> Data {
        Self.body(batchID: id, encodedRecords: records.map { $0.encoded() })
    }

    /// The request body from records already encoded with ``Record/encoded()``.
    static func body(batchID: String, encodedRecords: [Data]) -> Data {
        var body = Data("{\"batch\":".utf8)
        body += JSON.string(batchID).serializedData()
        body += Data(",\"records\":[".utf8)
        for (index, record) in encodedRecords.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += record
        }
        body += Data("]}".utf8)
        return body
    }

    /// Reads a request body, checking every field.
    /// - Throws: `RunwayError` `.invalidRequest` when the body is not JSON of the format
    ///   above; `RunwayError.field` names the first bad field (`records[3].id`). Record IDs and
    ///   the batch ID must be UUIDs, names must not be empty, `at` must be an integer, attribute
    ///   values must be strings (a missing `attributes` is empty).
    public init(decoding body: Data) throws(RunwayError) {
        let json: JSON
        do {
            json = try JSON(parsing: body)
        } catch {
            throw RunwayError(.invalidRequest, "the action batch is not JSON: \(error.message)", underlying: error)
        }
        func bad(_ field: String, _ message: String) -> RunwayError {
            RunwayError(.invalidRequest, "action batch: \(message)", field: field)
        }
        guard case .object = json else { throw bad("batch", "the body is not a JSON object") }
        guard let id = json["batch"]?.string, UUID(uuidString: id) != nil else {
            throw bad("batch", "\"batch\" must be a UUID string")
        }
        guard let elements = json["records"]?.array else { throw bad("records", "\"records\" must be an array") }
        var records: [Record] = []
        records.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let field = "records[\(index)]"
            guard case .object = element else { throw bad(field, "\(field) is not an object") }
            guard let recordID = element["id"]?.string, UUID(uuidString: recordID) != nil else {
                throw bad(field + ".id", "\(field).id must be a UUID string")
            }
            guard let name = element["name"]?.string, !name.isEmpty else {
                throw bad(field + ".name", "\(field).name must be a non-empty string")
            }
            guard case .int(let at) = element["at"] else {
                throw bad(field + ".at", "\(field).at must be an integer (milliseconds since 1970)")
            }
            var attributes: [String: String] = [:]
            switch element["attributes"] {
            case nil, .null?:
                break
            case .object(let members)?:
                for (key, value) in members {
                    guard let text = value.string else {
                        throw bad(field + ".attributes", "\(field).attributes.\(key) must be a string")
                    }
                    attributes[key] = text
                }
            default:
                throw bad(field + ".attributes", "\(field).attributes must be an object")
            }
            records.append(Record(id: recordID, name: name, at: at, attributes: attributes))
        }
        self.init(id: id, records: records)
    }
}

/// What a server answers to an ``ActionBatch``: how many records were new and how many it had
/// seen before. Optional: any 2xx acknowledges a batch.
public struct ActionBatchReceipt: Sendable, Hashable {
    /// Records stored for the first time.
    public var accepted: Int
    /// Records already received (a re-sent batch, or a repeated ID).
    public var duplicates: Int

    /// Creates a receipt.
    public init(accepted: Int, duplicates: Int) {
        self.accepted = accepted
        self.duplicates = duplicates
    }

    /// `{"accepted":n,"duplicates":m}`.
    public func encoded() -> Data {
        JSON.object(["accepted": .int(Int64(accepted)), "duplicates": .int(Int64(duplicates))]).serializedData()
    }
}

#endif
