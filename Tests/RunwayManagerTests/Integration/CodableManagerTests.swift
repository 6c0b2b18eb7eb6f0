import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Codable both ways, end to end: typed results decoded from the bytes a real server sent, with
/// the service's or the manager's decoder, and typed parameters encoded into the request.
@Suite struct CodableManagerTests {
    static let shop: ServiceID = "shop"

    struct Product: Decodable, Equatable {
        let id: Int
        let productName: String
        let priceCents: Int
        let listedAt: Date
    }

    struct ProductList: Decodable {
        struct Item: Decodable {
            let id: Int
            let name: String
        }

        let items: [Item]
    }

    struct NewItem: Encodable {
        let productID: Int
        let quantity: Int
    }

    struct Cart: Decodable, Equatable {
        let productId: Int
        let quantity: Int
    }

    /// The shop's convention: snake_case keys, ISO 8601 dates; said once, on the service.
    struct ShopService: Service {
        let id: ServiceID = CodableManagerTests.shop
        let baseURLs: BaseURLs
        let decoder: JSONDecoder = {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }()
    }

    final class ProductAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "product.detail"
        let path = "products/{id}"
        let serviceID = CodableManagerTests.shop
        let decoder: JSONDecoder?

        init(registry: ServiceRegistry, decoder: JSONDecoder? = nil) {
            self.engine = ManagerEngine(registry: registry, delivery: .inline)
            self.decoder = decoder
        }
    }

    final class ListAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName: String
        let path: String
        let serviceID = CodableManagerTests.shop

        init(registry: ServiceRegistry, path: String = "broken") {
            self.engine = ManagerEngine(registry: registry, delivery: .inline)
            self.path = path
            self.apiName = "products.\(path)"
        }
    }

    /// Posts its parameters as a JSON body; the server echoes them.
    final class CartAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "cart.add"
        let path = "cart"
        let serviceID = CodableManagerTests.shop
        let method = HTTPMethod.post
        let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            return encoder
        }()

        init(registry: ServiceRegistry) { self.engine = ManagerEngine(registry: registry, delivery: .inline) }
    }

    /// A manager whose response validator reads the typed body.
    final class ValidatedListAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "products.broken.validated"
        let path = "broken"
        let serviceID = CodableManagerTests.shop

        init(registry: ServiceRegistry) { self.engine = ManagerEngine(registry: registry, delivery: .inline) }

        func validate(response: APIResponse) throws(RunwayError) {
            _ = try response.decode(ProductList.self)
        }
    }

    private func withShop(_ body: (TestServer, ServiceRegistry, Counter) async throws -> Void) async throws {
        let carts = Counter()
        let server = try await TestServer.start(routes: { router in
            router.get("/shop/products/:id") { _, context -> Response in
                let id = context.parameters.get("id") ?? "0"
                let epoch = #"{"id": \#(id), "product_name": "Loft", "price_cents": 129900, "listed_at": "2026-11-24T06:00:00Z"}"#
                return Self.json(epoch)
            }
            router.get("/shop/broken") { _, _ -> Response in
                Self.json(#"{"items": [{"id": 1, "name": "a"}, {"id": "two", "name": "b"}]}"#)
            }
            router.get("/shop/unfit") { _, _ -> Response in
                Self.json(#"{"items": [{"id": 1, "name": "a"}, {"id": 2.5, "name": "b"}]}"#)
            }
            router.post("/shop/cart") { request, _ -> Response in
                _ = carts.increment()
                let body = try await request.body.collect(upTo: 1 << 16)
                return Self.json(String(buffer: body))
            }
        })
        let registry = try makeRegistry(CurlDispatcher(), services: [ShopService(baseURLs: BaseURLs(server.url("/shop").absoluteString))])
        do {
            try await body(server, registry, carts)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    private static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    @Test func aTypedResultIsDecodedWithTheServicesKeyAndDateStrategies() async throws {
        try await withShop { _, registry, _ in
            let manager = ProductAPIManager(registry: registry)
            let product = try await manager.load(as: Product.self, params: ["id": 42])
            #expect(
                product == Product(id: 42, productName: "Loft", priceCents: 129_900, listedAt: Date(timeIntervalSince1970: 1_795_500_000)))
            // The ordinary call happened too: raw data, and the typed view of it again.
            #expect(manager.rawData?["product_name"]?.string == "Loft")
            #expect(try manager.fetchData(as: Product.self) == product)
        }
    }

    @Test func theManagersDecoderWinsOverTheServices() async throws {
        try await withShop { _, registry, _ in
            // Default keys: `productName` is not in the body, so the manager's decoder was used.
            let manager = ProductAPIManager(registry: registry, decoder: JSONDecoder())
            let error = await #expect(throws: RunwayError.self) { try await manager.load(as: Product.self, params: ["id": 7]) }
            #expect(error?.code == .responseInvalid)
            #expect(error?.field == "productName")
            #expect(error?.message.contains("no value for key \"productName\"") == true)
        }
    }

    @Test func aBodyThatIsNotTheTypeNamesTheCodingPathAndKeepsTheResponse() async throws {
        try await withShop { _, registry, _ in
            let manager = ListAPIManager(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(as: ProductList.self) }
            #expect(error?.code == .responseInvalid)
            #expect(error?.field == "items[1].id")
            #expect(error?.message.contains("ProductList") == true)
            #expect(error?.underlying is DecodingError)
            #expect(error?.response?.status == 200)
            // Decoding is the caller's view: the call itself succeeded and its data is kept.
            #expect(manager.rawData?["items"]?[1]?["id"]?.string == "two")
            #expect(manager.lastError == nil)
            #expect(throws: RunwayError.self) { try manager.fetchData(as: ProductList.self) }
        }
    }

    /// A member whose coding key also has an integer value (Int-backed `CodingKeys`, a
    /// dictionary's key "42" under a decoder without a key strategy) is named as a member, not as
    /// an array element.
    struct NumberedItem: Decodable {
        let id: Int
        enum CodingKeys: Int, CodingKey { case id = 7 }
    }

    @Test func theCodingPathNamesMembersByNameAndOnlyArrayElementsByIndex() async throws {
        try await withShop { _, registry, _ in
            let list = ListAPIManager(registry: registry)
            let intKeys = await #expect(throws: RunwayError.self) { try await list.load(as: [String: [NumberedItem]].self) }
            #expect(intKeys?.field == "items[1].id")
            #expect(intKeys?.message.contains(" at items[1].id: ") == true, "\(String(describing: intKeys))")
        }
    }

    @Test func aNumberThatDoesNotFitItsTypeIsNotCalledInvalidJSON() async throws {
        try await withShop { _, registry, _ in
            let manager = ListAPIManager(registry: registry, path: "unfit")
            let error = await #expect(throws: RunwayError.self) { try await manager.load(as: ProductList.self) }
            #expect(error?.code == .responseInvalid)
            #expect(error?.underlying is DecodingError)
            if let field = error?.field {
                // Where JSONDecoder names the place (Apple's Foundation), it is kept.
                #expect(field == "items[1].id")
            } else {
                // Linux's Foundation says "not valid JSON" without a place: Runway says what it is.
                #expect(
                    error?.message.contains("the body is valid JSON, but a value in it does not fit") == true,
                    "\(String(describing: error))")
            }
        }
    }

    @Test func aValidatorThatDecodesFailsTheCallForEveryone() async throws {
        try await withShop { _, registry, _ in
            let manager = ValidatedListAPIManager(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.load() }
            #expect(error?.code == .responseInvalid)
            #expect(error?.field == "items[1].id")
            #expect(manager.lastError?.field == "items[1].id")
            #expect(manager.rawData == nil)
        }
    }

    @Test func encodableParametersGoOutWithTheManagersEncoder() async throws {
        try await withShop { _, registry, carts in
            let manager = CartAPIManager(registry: registry)
            let cart = try await manager.load(as: Cart.self, encoding: NewItem(productID: 42, quantity: 2))
            // The server echoed {"product_id": 42, "quantity": 2}: snake_case from the encoder.
            #expect(manager.rawData == ["product_id": 42, "quantity": 2])
            #expect(cart == Cart(productId: 42, quantity: 2))
            #expect(carts.value == 1)
        }
    }

    @Test func parametersThatAreNotAnObjectFailBeforeTheNetwork() async throws {
        try await withShop { _, registry, carts in
            let manager = CartAPIManager(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(encoding: [1, 2, 3]) }
            #expect(error?.code == .paramsInvalid)
            #expect(error?.message.contains("JSON object") == true)
            let nonFinite = await #expect(throws: RunwayError.self) { try await manager.load(encoding: ["price": Double.nan]) }
            #expect(nonFinite?.code == .paramsInvalid)
            #expect(nonFinite?.field == "price")
            // The value is named by its coding path, as a decoding error names one.
            struct Line: Encodable { let price: Double }
            struct Order: Encodable { let lines: [Line] }
            let nested = await #expect(throws: RunwayError.self) {
                try await manager.load(encoding: Order(lines: [Line(price: 1), Line(price: .infinity)]))
            }
            #expect(nested?.code == .paramsInvalid)
            #expect(nested?.field == "lines[1].price", "\(String(describing: nested))")
            #expect(carts.value == 0)
        }
    }

    @Test("parameters that do not encode fail the call as invalid parameters do: the delegate hears it, lastError holds it")
    func parametersThatDoNotEncodeReachTheDelegate() async throws {
        try await withShop { _, registry, carts in
            let manager = CartAPIManager(registry: registry)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let error = await #expect(throws: RunwayError.self) { try await manager.load(encoding: [1, 2, 3]) }
            #expect(error?.code == .paramsInvalid)
            #expect(await eventually { delegate.log.events == ["delegate.fail(paramsInvalid)"] }, "\(delegate.log.events)")
            #expect(manager.lastError?.code == .paramsInvalid)
            #expect(!manager.isLoading)
            #expect(carts.value == 0)
        }
    }

    struct Order: Encodable {
        let orderID: UInt64
        let total: Decimal
    }

    @Test("an Encodable number JSON cannot carry exactly (a large UInt64, a long Decimal) fails before the network, never sent rounded")
    func numbersThatWouldBeSentRoundedFailBeforeTheNetwork() async throws {
        try await withShop { _, registry, carts in
            let manager = CartAPIManager(registry: registry)
            let large = Order(orderID: .max, total: 1)
            let beyondInt64 = await #expect(throws: RunwayError.self) { try await manager.load(encoding: large) }
            #expect(beyondInt64?.code == .paramsInvalid)
            #expect(beyondInt64?.message.contains("18446744073709551615") == true, "\(String(describing: beyondInt64))")
            let long = Order(orderID: 1, total: Decimal(string: "12345678901234567890.5")!)
            let tooManyDigits = await #expect(throws: RunwayError.self) { try await manager.load(encoding: long) }
            #expect(tooManyDigits?.code == .paramsInvalid)
            #expect(tooManyDigits?.message.contains("12345678901234567890.5") == true, "\(String(describing: tooManyDigits))")
            // An integer beyond Int64 that a Double holds exactly would go out as `1e+19`, which a
            // server reading an integer refuses: it fails too, whether a UInt64 or a Decimal.
            for round in [Order(orderID: 10_000_000_000_000_000_000, total: 1), Order(orderID: 1, total: Decimal(string: "1e20")!)] {
                let beyond = await #expect(throws: RunwayError.self) { try await manager.load(encoding: round) }
                #expect(beyond?.code == .paramsInvalid)
                #expect(beyond?.message.contains("an integer beyond 64 bits") == true, "\(String(describing: beyond))")
            }
            #expect(carts.value == 0)
            // Numbers a Double or an Int64 holds go out as they are.
            let exact = Order(orderID: UInt64(Int64.max), total: Decimal(string: "19.99")!)
            try await manager.load(encoding: exact)
            #expect(manager.rawData == ["order_id": .int(.max), "total": 19.99])
            #expect(
                try JSON(encoding: ["ratio": 0.1, "tiny": 1e-7, "big": 1e300, "third": 1.0 / 3]) == [
                    "ratio": 0.1, "tiny": 1e-7, "big": 1e300, "third": .double(1.0 / 3),
                ])
            #expect(carts.value == 1)
        }
    }

    @Test("a number that is not finite, in the path, the query or deep in a body, fails before the network naming its parameter")
    func nonFiniteNumbersInParameters() async throws {
        try await withShop { _, registry, carts in
            let product = ProductAPIManager(registry: registry)
            for value: JSON in [.double(.nan), .double(.infinity), .double(-.infinity)] {
                let inPath = await #expect(throws: RunwayError.self) { try await product.load(params: ["id": value]) }
                #expect(inPath?.code == .paramsInvalid)
                #expect(inPath?.field == "id")
                #expect(inPath?.stage == .manager(product.apiName))
                let inQuery = await #expect(throws: RunwayError.self) { try await product.load(params: ["id": 1, "ratio": value]) }
                #expect(inQuery?.field == "ratio")
            }
            let cart = CartAPIManager(registry: registry)
            let deep = await #expect(throws: RunwayError.self) {
                try await cart.load(params: ["items": [["price": .double(.nan)]]])
            }
            #expect(deep?.code == .paramsInvalid)
            #expect(deep?.field == "items")
            #expect(carts.value == 0)
            // A finite double goes out as a number.
            let finite = try await product.load(as: Product.self, params: ["id": 3, "ratio": 0.5])
            #expect(finite.id == 3)
        }
    }

    @Test func aBodyThatIsNotTheTypeFailsAtTheManagersStage() async throws {
        try await withShop { _, registry, _ in
            let manager = ListAPIManager(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(as: ProductList.self) }
            #expect(error?.stage == .manager(manager.apiName))
        }
    }

    @Test func fetchDataAsBeforeAnyCallIsNoContent() async throws {
        try await withShop { _, registry, _ in
            let manager = ProductAPIManager(registry: registry)
            let error = #expect(throws: RunwayError.self) { try manager.fetchData(as: Product.self) }
            #expect(error?.code == .noContent)
        }
    }

    @Test func jsonEncodingHonoursTheEncodersStrategies() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.keyEncodingStrategy = .convertToSnakeCase
        struct Stamp: Encodable {
            let createdAt: Date
        }
        #expect(try JSON(encoding: Stamp(createdAt: Date(timeIntervalSince1970: 12)), encoder: encoder) == ["created_at": 12])
    }
}
