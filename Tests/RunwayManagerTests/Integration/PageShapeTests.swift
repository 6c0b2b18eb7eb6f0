import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Where a paged manager finds a page's list by default, against a real server: at the top, or
/// one level down in `data` or `result`; and a page without a list fails instead of ending the
/// paging as an empty last page.
@Suite struct PageShapeTests {
    static let catalog: ServiceID = "catalog"

    struct CatalogService: Service {
        let id: ServiceID = PageShapeTests.catalog
        let baseURLs: BaseURLs
    }

    final class CatalogPagesAPIManager: PagedAPIManager {
        let engine: ManagerEngine
        let apiName: String
        let serviceID = PageShapeTests.catalog
        var pageSize: Int { 2 }

        init(registry: ServiceRegistry, shape: String) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
            apiName = shape
        }
    }

    /// Five items, two per page, in the shape the path names; `/catalog/broken` answers its
    /// first request without a list, then as `bare` does.
    private func withCatalog(_ body: (ServiceRegistry, EventLog) async throws -> Void) async throws {
        let asked = EventLog()
        let brokenOnce = Counter()
        let server = try await TestServer.start(routes: { router in
            router.get("/catalog/:shape") { request, context -> Response in
                let shape = context.parameters.get("shape") ?? ""
                let page = request.uri.queryParameters.get("page").flatMap { Int($0) } ?? 0
                asked.append("\(shape) \(page)")
                let ids = Array(0..<5).dropFirst((page - 1) * 2).prefix(2)
                let list = "[" + ids.map { #"{"id":\#($0)}"# }.joined(separator: ",") + "]"
                let text: String
                switch shape {
                case "bare": text = list
                case "nested": text = #"{"code":0,"data":{"list":\#(list),"total":5}}"#
                case "records": text = #"{"result":{"records":\#(list)}}"#
                case "broken" where brokenOnce.increment() == 1: text = #"{"code":0,"message":"ok"}"#
                case "broken": text = list
                default: text = #"{"rows":\#(list)}"#
                }
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            }
        })
        let registry = try makeRegistry(
            CurlDispatcher(), services: [CatalogService(baseURLs: BaseURLs(server.url("/catalog").absoluteString))])
        do {
            try await body(registry, asked)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test(arguments: ["bare", "nested", "records"])
    func theListIsFoundAtTheTopOrOneLevelDown(shape: String) async throws {
        try await withCatalog { registry, _ in
            let manager = CatalogPagesAPIManager(registry: registry, shape: shape)
            var ids: [Int] = []
            while !manager.isLastPage {
                let page = try await manager.loadNextPage()
                ids += try manager.items(in: page).compactMap { $0["id"]?.int }
            }
            #expect(ids == [0, 1, 2, 3, 4])
            #expect(manager.currentPage == 3)
        }
    }

    @Test func aPageWithoutAListFailsAndIsAskedForAgain() async throws {
        try await withCatalog { registry, asked in
            let manager = CatalogPagesAPIManager(registry: registry, shape: "broken")
            let failure = await outcome { try await manager.loadNextPage() }.failure
            #expect(failure?.code == .responseInvalid, "\(String(describing: failure))")
            #expect(failure?.response?.status == 200)
            #expect(manager.currentPage == nil)
            #expect(!manager.isLastPage)
            // The failed page counts as not loaded: the next call asks for it again.
            try await manager.loadNextPage()
            #expect(manager.currentPage == 1)
            #expect(asked.events == ["broken 1", "broken 1"])
        }
    }

    @Test func aListUnderAnotherNameIsAnErrorNotAnEmptyLastPage() async throws {
        try await withCatalog { registry, _ in
            let manager = CatalogPagesAPIManager(registry: registry, shape: "rows")
            let failure = await outcome { try await manager.loadNextPage() }.failure
            #expect(failure?.code == .responseInvalid)
            #expect(failure?.message.contains("items(in:)") == true)
            #expect(!manager.isLastPage)
        }
    }
}
