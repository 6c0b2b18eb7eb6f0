import Foundation
import Runway
import RunwayCompression
import RunwayCurl
import RunwaySigning
import RunwayTestServer
import Testing

/// The Python verifier a server team can read (`Verifier/verify_runway_signature.py`, written
/// from the `CanonicalRequest` article alone), run against the vectors and against requests
/// Runway really sent through libcurl to a server that captured them as received.
@Suite struct PythonVerifierTests {
    static let secret = "python-shared-secret"

    /// How a run of the verifier ended.
    typealias Outcome = ProcessOutcome

    /// Runs `python3 verify_runway_signature.py arguments...` to its end, standard output and
    /// error together.
    static func python(_ arguments: [String]) async throws -> Outcome {
        try await runPython(SigningVector.directory.appending(path: "Verifier/verify_runway_signature.py"), arguments)
    }

    /// Writes `data` to a fresh temporary file, runs `body` with it and removes it.
    static func withTemporaryFile<T>(_ data: Data, _ body: (URL) async throws -> T) async throws -> T {
        let file = FileManager.default.temporaryDirectory.appending(path: "runway-signing-\(UUID().uuidString).json")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await body(file)
    }

    /// The Python verifier's verdict on `request` as the server received it.
    static func verify(_ request: CapturedRequest, keyID: String? = nil) async throws -> Outcome {
        let secrets = keyID.map { ["--key", $0, secret] } ?? ["--secret", secret]
        return try await withTemporaryFile(try JSONEncoder().encode(request)) { try await python(secrets + ["--request", $0.path]) }
    }

    /// `request` with one byte of its body changed or, without a body, its last query value
    /// changed: a man in the middle.
    static func tampered(_ request: CapturedRequest) -> CapturedRequest {
        var tampered = request
        var body = [UInt8](request.body)
        if body.isEmpty {
            tampered.query = (request.query ?? "") + "0"
        } else {
            body[body.count / 2] ^= 0x01
            tampered.bodyBase64 = Data(body).base64EncodedString()
        }
        return tampered
    }

    /// Sends `request` through `pipeline` to `/capture` and returns what the server received.
    static func capture(_ request: Request, through pipeline: Pipeline) async throws -> CapturedRequest {
        let response = try await pipeline.send(request)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try JSONDecoder().decode(CapturedRequest.self, from: response.body)
    }

    @Test func theVerifierMatchesEveryVector() async throws {
        let outcome = try await Self.python(["--vectors", SigningVector.file.path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("ok: every vector matches"), "\(outcome)")
    }

    /// The verifier notices one changed byte in an expected signature or canonical request.
    @Test func theVerifierRejectsAlteredVectors() async throws {
        let text = try String(contentsOf: SigningVector.file, encoding: .utf8)
        let vectors = try SigningVector.all()
        let signed = try #require(vectors.first { $0.name == "key-id" })
        let gzipped = try #require(vectors.first { $0.name == "gzip-json-body" })
        let bodyHash = try #require(gzipped.expected.canonicalRequest.split(separator: "\n").dropFirst(4).first.map(String.init))
        for (original, name) in [(signed.expected.signature, signed.name), (bodyHash, gzipped.name)] {
            #expect(text.components(separatedBy: original).count == 2, "\(original) is not unique in the file")
            let altered = text.replacingOccurrences(of: original, with: SigningVectorTests.altered(original))
            let outcome = try await Self.withTemporaryFile(Data(altered.utf8)) { try await Self.python(["--vectors", $0.path]) }
            #expect(outcome.status == 1, "\(outcome)")
            #expect(outcome.output.hasPrefix("\(name): "), "\(outcome)")
        }
    }

    /// Requests signed by ``SigningInterceptor`` and sent by libcurl verify in Python as the
    /// server received them (dot segments removed by libcurl, a UTF-8 path, `+` in the query, a
    /// form body, a key ID); one changed byte fails.
    @Test func signedRequestsVerifyInPython() async throws {
        try await withTestServer(routes: CapturingRoutes.add) { server in
            let pipeline = Pipeline(
                interceptors: [try SigningInterceptor.signing(secret: Self.secret, keyID: "2026-11")], dispatcher: CurlDispatcher())
            let get = try await Self.capture(
                Request(url: server.url("/capture/listings/./%E4%B8%8A%E6%B5%B7/rent?q=a+b&city=%E4%B8%8A%E6%B5%B7&page=2")),
                through: pipeline)
            #expect(get.path == "/capture/listings/%E4%B8%8A%E6%B5%B7/rent")
            let form = try await Self.capture(
                Request(
                    method: .post, url: server.url("/capture/orders?source=app"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data("qty=1+2&item=42&note=%26%3D".utf8)),
                through: pipeline)
            for request in [get, form] {
                #expect(request.headers["x-runway-key-id"] == "2026-11")
                let accepted = try await Self.verify(request, keyID: "2026-11")
                #expect(accepted.status == 0, "\(accepted)")
                #expect(accepted.output == "ok\n", "\(accepted)")
                let rejected = try await Self.verify(Self.tampered(request), keyID: "2026-11")
                #expect(rejected.status == 1, "\(rejected)")
                #expect(rejected.output.hasPrefix("signatureMismatch"), "\(rejected)")
            }
        }
    }

    /// With the compression interceptor before signing (the default order), the body arrives
    /// gzipped and the signature covers the gzip bytes: Python verifies the bytes as received, a
    /// JSON body and a form body (whose parameters then take the `?` form) alike.
    @Test func gzippedRequestsVerifyInPython() async throws {
        try await withTestServer(routes: CapturingRoutes.add) { server in
            let pipeline = Pipeline(
                interceptors: [try .compression(threshold: 64), try SigningInterceptor.signing(secret: Self.secret)],
                dispatcher: CurlDispatcher())
            let json = try await Self.capture(
                Request(
                    method: .post, url: server.url("/capture/listings/batch?dry_run=1"), headers: ["Content-Type": "application/json"],
                    body: Data(String(repeating: #"{"city":"Shanghai","note":"quiet street"},"#, count: 20).utf8)),
                through: pipeline)
            let form = try await Self.capture(
                Request(
                    method: .post, url: server.url("/capture/orders?source=app"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Data(("item=42&note=" + String(repeating: "please+ring+twice%2C+", count: 20)).utf8)),
                through: pipeline)
            for request in [json, form] {
                #expect(request.headers["content-encoding"] == "gzip")
                #expect(request.body.prefix(2) == Data([0x1F, 0x8B]))
                let accepted = try await Self.verify(request)
                #expect(accepted.status == 0, "\(accepted)")
                let rejected = try await Self.verify(Self.tampered(request))
                #expect(rejected.status == 1, "\(rejected)")
                #expect(rejected.output.hasPrefix("signatureMismatch"), "\(rejected)")
            }
        }
    }
}
