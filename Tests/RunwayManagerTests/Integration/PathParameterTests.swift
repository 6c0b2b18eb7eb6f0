import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Parameters that fill a manager's path placeholders, end to end: a placeholder used twice, and
/// validation rules on parameters that are in no query or body once they are in the path.
@Suite struct PathParameterTests {
    static let shop: ServiceID = "shop"

    struct ShopService: Service {
        let id: ServiceID = PathParameterTests.shop
        let baseURLs: BaseURLs
    }

    final class PathAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName: String
        let path: String
        let serviceID = PathParameterTests.shop

        init(registry: ServiceRegistry, apiName: String, path: String) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
            self.apiName = apiName
            self.path = path
        }
    }

    /// A server echoing the path it was asked for, under the base `/shop` and at `/admin` above
    /// it, and the number of requests it answered.
    private func withShop(
        interceptors: [any Interceptor], _ body: (ServiceRegistry, Counter) async throws -> Void
    ) async throws {
        let requests = Counter()
        let server = try await TestServer.start(routes: { router in
            for route in ["/shop/**", "/admin"] {
                router.get(RouterPath(route)) { request, _ -> Response in
                    _ = requests.increment()
                    let text = #"{"path": "\#(request.uri.path)"}"#
                    return Response(
                        status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
                }
            }
        })
        let registry = try makeRegistry(
            CurlDispatcher(), services: [ShopService(baseURLs: BaseURLs(server.url("/shop").absoluteString))],
            interceptors: interceptors)
        do {
            try await body(registry, requests)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func aPlaceholderUsedTwiceTakesTheSameValueBothTimes() async throws {
        try await withShop(interceptors: []) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "compare", path: "items/{id}/compare/{id}")
            let json = try await manager.load(params: ["id": "a b", "other": 1])
            #expect(json["path"]?.string == "/shop/items/a%20b/compare/a%20b")
            #expect(requests.value == 1)
        }
    }

    /// A brace that makes no placeholder is a mistyped template, refused before anything is sent:
    /// it is not percent-encoded into the path, nor a parameter sent in the query instead.
    @Test(arguments: [
        ("items/id}", "a '}' that closes no '{'"), ("items/{id}}", "a '}' that closes no '{'"),
        ("items/{id}/x}y", "a '}' that closes no '{'"), ("items/{{id}}", "a '{' inside a placeholder"),
        ("items/{id", "a '{' without its '}'"), ("items/{}", "an empty {}"),
    ])
    func aBraceThatMakesNoPlaceholderIsAConfigurationError(_ path: String, _ problem: String) async throws {
        try await withShop(interceptors: []) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "item", path: path)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["id": 1]) }
            #expect(error?.code == .configuration, "\(path)")
            #expect(error?.field == "path", "\(path)")
            #expect(error?.message.contains(problem) == true, "\(path): \(String(describing: error?.message))")
            #expect(error?.neverSent == true, "\(path)")
            #expect(requests.value == 0)
        }
    }

    /// A URL error names what the manager declared: a `path` of its own is blamed as the path,
    /// not the API name the user finds nothing wrong with.
    @Test(arguments: ["search results/{id}", "items/{id}#top", "it\u{7F}ems/{id}"])
    func aPathThatMakesNoURLIsNamedAsThePathAndNothingIsSent(_ path: String) async throws {
        try await withShop(interceptors: []) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "search", path: path)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["id": 1]) }
            #expect(error?.code == .invalidURL)
            #expect(error?.field == "path")
            #expect(error?.message.hasPrefix("path ") == true)
            #expect(requests.value == 0)
        }
    }

    /// A `..` segment in what the manager declared would climb above the service's base URL
    /// (libcurl removes dot segments before it sends): refused as `.invalidURL` naming the
    /// declaration, and nothing is sent, above the base or under it.
    @Test(arguments: [
        ("admin", "../admin"), ("admin", "items/../../admin"), ("admin", "items/{id}/../../../admin"), ("admin", ".."),
        ("../admin", "../admin"), ("admin", "/../admin?x=1"), ("admin", "%2e%2e/admin"), ("admin", "items/.%2E/%2E./admin"),
        ("%2E%2E", "%2E%2E"),
    ])
    func aPathWithADotDotSegmentIsRefusedAndNothingIsSent(_ apiName: String, _ path: String) async throws {
        try await withShop(interceptors: []) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: apiName, path: path)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["id": 1]) }
            #expect(error?.code == .invalidURL, "\(String(describing: error))")
            #expect(error?.field == (apiName == path ? "apiName" : "path"))
            #expect(requests.value == 0)
            // Dots that are not a whole segment stay, and the call goes out under the base.
            let dotted = PathAPIManager(registry: registry, apiName: "dotted", path: "items/..{id}/v1.2/.../%2E%2E%2E")
            let json = try await dotted.load(params: ["id": 1])
            #expect(json["path"]?.string == "/shop/items/..1/v1.2/.../%2E%2E%2E")
        }
    }

    @Test func aCallRefusedBeforeItsRequestIsMadeSaysNothingWasSent() async throws {
        try await withShop(interceptors: []) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "product", path: "products/{id}")
            let missing = await #expect(throws: RunwayError.self) { try await manager.load(params: [:]) }
            #expect(missing?.code == .paramsInvalid)
            #expect(missing?.neverSent == true)
            let climbing = PathAPIManager(registry: registry, apiName: "up", path: "../admin")
            let refused = await #expect(throws: RunwayError.self) { try await climbing.load() }
            #expect(refused?.code == .invalidURL)
            #expect(refused?.neverSent == true)
            #expect(requests.value == 0)
        }
    }

    @Test func validationRulesCheckTheParametersThatWentIntoThePath() async throws {
        let rules = try ValidationInterceptor.validation([
            "product": APIValidation(parameters: [ParameterRule("id", .required, .type(.integer), .range(1...1000))])
        ])
        try await withShop(interceptors: [rules]) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "product", path: "products/{id}")
            // A valid id passes: `.required` finds it although it is in no query or body.
            let json = try await manager.load(params: ["id": 5])
            #expect(json["path"]?.string == "/shop/products/5")
            // Out of range, or not an integer: refused before the network, naming the parameter.
            for bad: JSON in [5000, "abc"] {
                let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["id": bad]) }
                #expect(error?.code == .paramsInvalid)
                #expect(error?.field == "id")
                #expect(error?.neverSent == true)
            }
            #expect(requests.value == 1)
        }
    }

    @Test func aParameterGivenAsNullInAQueryIsAbsentForARequiredRule() async throws {
        let rules = try ValidationInterceptor.validation(["search": APIValidation(parameters: [ParameterRule("city", .required)])])
        try await withShop(interceptors: [rules]) { registry, requests in
            let manager = PathAPIManager(registry: registry, apiName: "search", path: "search")
            let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["city": nil]) }
            #expect(error?.code == .paramsInvalid)
            #expect(error?.field == "city")
            // An empty string is present, as the rule says.
            _ = try await manager.load(params: ["city": ""])
            #expect(requests.value == 1)
        }
    }
}
