import Foundation
import HTTPTypes
import RunwayCore
import RunwayCurl
import RunwayHTTPTypes
import RunwayTestServer
import Testing

// The code between the BEGIN/END markers is quoted by the guide
// (Sources/RunwayHTTPTypes/RunwayHTTPTypes.docc/HTTPTypesInterop.md), whose blocks the sample's
// ReadmeExcerptTests check line by line against this file; the tests below run it.

// BEGIN guide: Send an HTTPRequest through Runway
/// Sends an `HTTPRequest` and its body through Runway's pipeline, as a swift-openapi-runtime
/// `ClientTransport` is asked to in `send(_:body:baseURL:operationID:)`.
struct PipelineTransport: Sendable {
    let pipeline: Pipeline

    func send(_ request: HTTPRequest, body: Data?, baseURL: URL) async throws -> (HTTPResponse, Data) {
        // The base URL's path comes first: https://api.example.com/v1 + /pets?limit=10.
        let response = try await pipeline.send(Request(request, baseURL: baseURL, body: body))
        // The status and every header field, in order; the body stays apart, as in HTTPTypes.
        return (try HTTPResponse(response), response.body)
    }
}
// END guide

// BEGIN guide: Hand a Runway request to HTTPTypes code
func describe(_ request: Request) throws(RunwayError) -> String {
    let converted = try HTTPRequest(request)
    // https://api.example.com:8443/v1/pets?limit=10#top becomes
    // scheme "https", authority "api.example.com:8443", path "/v1/pets?limit=10".
    return "\(converted.method) \(converted.scheme ?? "")://\(converted.authority ?? "")\(converted.path ?? "")"
}
// END guide

@Suite struct GuideExampleTests {
    @Test func theTransportSendsAndConverts() async throws {
        try await withTestServer { server in
            // BEGIN guide: Use the transport
            let transport = PipelineTransport(pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()))
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo?source=guide")
            let (response, body) = try await transport.send(request, body: Data("hi".utf8), baseURL: server.baseURL)
            // END guide
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentType] == "application/json")
            #expect(body.count > 0)
        }
    }

    @Test func describeShowsThePieces() throws {
        let request = try Request(method: .get, "https://api.example.com:8443/v1/pets?limit=10#top")
        #expect(try describe(request) == "GET https://api.example.com:8443/v1/pets?limit=10")
    }

    @Test func aRequestWithoutATargetIsATypedError() {
        // BEGIN guide: Conversion errors
        let pathOnly = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/pets")
        do {
            _ = try Request(pathOnly)  // no scheme, no authority, no base URL
        } catch {
            // error.code == .invalidURL: "... has no scheme or authority and no base URL was given ..."
            #expect(error.code == .invalidURL)
        }
        // END guide
        #expect(throws: RunwayError.self) { try Request(pathOnly) }
    }
}
