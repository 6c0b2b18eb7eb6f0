import Foundation
import HTTPTypes
import OpenAPIRuntime
import Runway
import RunwayCurl
import RunwayOpenAPI
import RunwayTestServer
import Testing

/// Every kind of operation of the generated client, sent through `RunwayTransport` and libcurl
/// to the test server: parameters, JSON bodies, error responses, no content.
@Suite struct OperationTests {
    @Test func pathAndHeaderParametersReachTheServer() async throws {
        let routes = ItemRoutes()
        try await withTestServer(routes: routes.routes) { server in
            let client = makeClient(server)
            let output = try await client.getItem(path: .init(itemID: "a b/42"), headers: .init(xTraceID: "trace-7"))
            let ok = try output.ok
            // The path parameter is percent-encoded on the way, and decoded by the server.
            #expect(try ok.body.json.id == "a b/42")
            #expect(try ok.body.json.traceID == "trace-7")
            #expect(ok.headers.xServedBy == "item-routes")
        }
    }

    @Test func aPathParameterThatIsADotSegmentIsRefusedAndNothingIsSent() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server)
            for id in [".", ".."] {
                // Sent as is, libcurl would remove it; as %2E%2E, a normalizing server would: another endpoint.
                let error = await clientError { try await client.getItem(path: .init(itemID: id)) }?.runwayError
                #expect(error?.code == .invalidURL, "\(String(describing: error))")
                #expect(error?.message.contains("nothing was sent") == true)
                #expect(error?.neverSent == true)
            }
            #expect(server.stats.totalRequests == 0)
            for id in ["a..b", ".hidden", "..."] {
                let got = try await client.getItem(path: .init(itemID: id)).ok.body.json.id
                #expect(got == id)
            }
        }
    }

    @Test func queryParametersReachTheServer() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server)
            let list = try await client.listItems(query: .init(limit: 2, tag: ["red", "big"])).ok.body.json
            #expect(list.items.map(\.id) == ["1", "2"])
            #expect(list.items.first?.tags == ["red", "big"])
        }
    }

    @Test func jsonBodiesGoBothWays() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server)
            let output = try await client.createItem(body: .json(.init(name: "Lamp", tags: ["light"])))
            let created = try output.created
            #expect(created.headers.location == "/items/9")
            #expect(try created.body.json == .init(id: "9", name: "Lamp", tags: ["light"]))
        }
    }

    @Test func documentedErrorResponsesAreTypedOutputs() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server)
            let missing = try await client.getItem(path: .init(itemID: "missing"))
            #expect(try missing.notFound.body.json == .init(code: 4040, message: "no item missing"))

            let invalid = try await client.createItem(body: .json(.init(name: "")))
            #expect(try invalid.unprocessableContent.body.json.code == 4221)
        }
    }

    @Test func noContentAndUndocumentedStatuses() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server)
            _ = try await client.deleteItem(path: .init(itemID: "7")).noContent

            let locked = try await client.deleteItem(path: .init(itemID: "locked"))
            guard case .undocumented(let status, let payload) = locked else {
                Issue.record("expected an undocumented response, got \(locked)")
                return
            }
            #expect(status == 409)
            let body = try await String(collecting: try #require(payload.body), upTo: 1024)
            #expect(body.contains("the item is locked"))
        }
    }

    @Test func aServerThatCannotBeReachedIsARunwayErrorInsideTheClientError() async throws {
        let client = Client(
            serverURL: try #require(URL(string: "http://127.0.0.1:1")),
            transport: RunwayTransport(pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher())))
        let error = try #require(await clientError { try await client.getItem(path: .init(itemID: "1")) })
        #expect(error.operationID == "getItem")
        #expect(error.runwayError?.code == .cannotConnect)
        #expect(error.runwayError?.stage?.kind == "dispatcher")
    }

    @Test func aRequestThatCannotBeConvertedFailsInTheTransport() async throws {
        let recorder = ContextRecorder()
        let client = Client(
            serverURL: try #require(URL(string: "ftp://127.0.0.1/v1")),
            transport: RunwayTransport(pipeline: Pipeline(interceptors: [recorder], dispatcher: CurlDispatcher())))
        let error = try #require(await clientError { try await client.getItem(path: .init(itemID: "1")) })
        #expect(error.runwayError?.code == .unsupportedScheme)
        #expect(error.runwayError?.stage == RunwayError.Stage(kind: "transport", name: "RunwayTransport"))
        #expect(recorder.seen.all.isEmpty)
    }
}
