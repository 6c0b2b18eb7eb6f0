// The README's quick start, verbatim (checked line by line by the sample's ReadmeExcerptTests).
// It is compiled, not run: `start()` bootstraps the process-wide registry, which
// ReadmeExampleTests.swift does once for this test process with a stub dispatcher.

import Runway
import RunwayCurl

/// An API provider: where its APIs live and what its calls share.
struct Shop: Service {
    let id: ServiceID = "shop"
    let baseURLs = BaseURLs("https://shop.example.com/v1")
}

/// One API, one manager: `GET products/{id}`, decoded into `Product`.
final class ProductAPIManager: APIManager {
    let engine = ManagerEngine()
    let apiName = "product.detail"
    let path = "products/{id}"
    let serviceID: ServiceID = "shop"
}

struct Product: Decodable {
    let id: Int
    let title: String
}

func start() async throws {
    // Once, at start-up: the interceptors in order, and the dispatcher that ends the chain.
    let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
    var builder = ServiceRegistry.Builder(environment: .release, pipeline: pipeline)
    builder.register(Shop())
    try ServiceRegistry.bootstrap(builder.build())

    let product = try await ProductAPIManager().load(as: Product.self, params: ["id": 42])
    print(product.title)
}
