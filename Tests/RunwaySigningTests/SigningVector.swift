import Foundation
import RunwaySigning

/// One case of `Vectors/signing-vectors.json`: a request as a server receives it, and the
/// canonical request and signature Runway computes for it.
///
/// The file is for server teams in other languages (the `CanonicalRequest` article points to
/// it); the expected values were computed once by Runway and frozen, so these tests catch any
/// change to the signed form.
struct SigningVector: Decodable, Sendable, CustomStringConvertible {
    /// The request as received, and the secret it was signed with.
    struct Input: Decodable, Sendable {
        var method: String
        /// As on the wire, without the query.
        var path: String
        /// As on the wire, without `?`; `nil` when there is none.
        var query: String?
        var contentType: String?
        var bodyBase64: String
        var timestamp: String
        var nonce: String
        /// `""` when the request carries none.
        var keyID: String
        var secret: String
    }

    /// What Runway computes for the input.
    struct Expected: Decodable, Sendable {
        var canonicalRequest: String
        /// HMAC-SHA256, lower-case hex.
        var signature: String
    }

    private struct File: Decodable {
        var vectors: [SigningVector]
    }

    var name: String
    var input: Input
    var expected: Expected

    var description: String { name }

    /// This folder, found through the source file's path (the vectors are not a resource).
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    /// `Vectors/signing-vectors.json`.
    static let file = directory.appending(path: "Vectors/signing-vectors.json")

    /// Every vector in the file.
    static func all() throws -> [SigningVector] {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: file)).vectors
    }

    /// The body bytes.
    var body: Data {
        get throws {
            guard let body = Data(base64Encoded: input.bodyBase64) else { throw VectorError("\(name): the body is not base64") }
            return body
        }
    }

    /// The request's timestamp as a date.
    var signingTime: Date {
        get throws {
            guard let seconds = TimeInterval(input.timestamp) else { throw VectorError("\(name): the timestamp is not a number") }
            return Date(timeIntervalSince1970: seconds)
        }
    }

    /// The canonical request Runway builds from the input, as a server does.
    func canonicalRequest() throws -> CanonicalRequest {
        CanonicalRequest(
            method: input.method, percentEncodedPath: input.path, percentEncodedQuery: input.query,
            contentType: input.contentType, body: try body, timestamp: input.timestamp, nonce: input.nonce, keyID: input.keyID)
    }

    /// The headers the request arrives with, carrying `signature`.
    func headers(signature: String) -> [String: String] {
        var headers = ["X-Runway-Signature": signature, "X-Runway-Timestamp": input.timestamp, "X-Runway-Nonce": input.nonce]
        if let contentType = input.contentType { headers["Content-Type"] = contentType }
        if !input.keyID.isEmpty { headers["X-Runway-Key-ID"] = input.keyID }
        return headers
    }
}

/// A vector file that cannot be read as the tests expect.
struct VectorError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
