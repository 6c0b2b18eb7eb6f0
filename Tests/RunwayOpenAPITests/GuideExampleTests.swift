import Foundation
import OpenAPIRuntime
import Runway
import RunwayCache
import RunwayCurl
import RunwayOpenAPI
import RunwaySigning
import RunwayTestServer
import Testing

// The code between the BEGIN/END markers is quoted by the guide
// (Sources/RunwayOpenAPI/RunwayOpenAPI.docc/GeneratedClients.md), whose blocks the sample's
// ReadmeExcerptTests check line by line against this file; the tests below run it.

// BEGIN guide: Set up
/// The generated client, sending every operation through the app's chain and libcurl.
func makeItemsClient(serverURL: URL) throws -> Client {
    let cache = try ResponseCache(policies: ["items.list": .memory(ttl: .seconds(60))])
    let pipeline = try Pipeline(dispatcher: CurlDispatcher()) {
        cache.interceptor
        try .retry(maxAttempts: 3)
        try .signing(secret: "app-secret-0123456789", keyID: "app")
    }
    // Each operation is one call, named by its operation ID unless this map renames it.
    let configuration = RunwayTransport.Configuration(apiNames: ["listItems": "items.list"])
    return Client(serverURL: serverURL, transport: RunwayTransport(pipeline: pipeline, configuration: configuration))
}
// END guide

// BEGIN guide: Handle errors
/// The item's name, or why there is none.
func itemName(_ id: String, client: Client) async -> String {
    do {
        switch try await client.getItem(path: .init(itemID: id)) {
        case .ok(let ok): return try ok.body.json.name
        case .notFound(let notFound): return "not found: " + (try notFound.body.json.message)
        case .undocumented(let status, _): return "status \(status)"
        }
    } catch let error as ClientError where error.runwayError?.code == .cannotConnect {
        return "the server cannot be reached"
    } catch {
        return "failed: \(error)"
    }
}
// END guide

@Suite struct GuideExampleTests {
    @Test func theGuidesClientIsSignedCachedAndRetried() async throws {
        let routes = ItemRoutes(verifier: try .hmacSHA256(secrets: ["app": "app-secret-0123456789"]))
        try await withTestServer(routes: routes.routes) { server in
            let client = try makeItemsClient(serverURL: server.baseURL)
            // BEGIN guide: Call an operation
            let items = try await client.listItems(query: .init(limit: 2)).ok.body.json.items
            // END guide
            #expect(items.map(\.id) == ["1", "2"])
            #expect(try await client.listItems(query: .init(limit: 2)).ok.body.json.items == items)
            #expect(server.stats.requests(path: "/items") == 1)
            #expect(await itemName("4", client: client) == "Item 4")
            #expect(await itemName("missing", client: client) == "not found: no item missing")
        }
    }

    @Test func theGuidesErrorHandlingNamesTheRunwayError() async throws {
        let client = try makeItemsClient(serverURL: try #require(URL(string: "http://127.0.0.1:1")))
        #expect(await itemName("4", client: client) == "the server cannot be reached")
    }
}
