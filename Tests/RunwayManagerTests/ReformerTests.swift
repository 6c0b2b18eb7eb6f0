import Foundation
import Runway
import RunwayTesting
import Testing

// The seed's example: three listing APIs whose JSON keys differ, one reformer, one output.

final class SecondHandListAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "esf/list"
    let serviceID: ServiceID = .secondHand
    init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
}

final class RentalListingsAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "zufang/list"
    let serviceID: ServiceID = .rental
    init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
}

final class NewHomeListAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "xinfang/list"
    let serviceID: ServiceID = .newHome
    init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
}

/// The reformer's typed keys, named after it (the seed's `kPropertyListDataKey...`).
enum PropertyListKey {
    static let id = ReformedKey<String>("PropertyList.id")
    static let name = ReformedKey<String>("PropertyList.name")
    static let title = ReformedKey<String>("PropertyList.title")
    static let imageURL = ReformedKey<URL>("PropertyList.imageURL")
}

/// One reformer for the three listing APIs: the list cell's data, whatever the source.
struct PropertyListReformer: Reformer {
    struct MissingKey: Error { let key: String }

    func reform(_ data: JSON, from manager: any APIManager) throws -> [ReformedRecord] {
        let prefix: String
        switch manager {
        case is SecondHandListAPIManager: prefix = "esf_"
        case is NewHomeListAPIManager: prefix = "xinfang_"
        default: prefix = ""
        }
        return try (data["list"]?.array ?? []).map { item in
            func text(_ key: String) throws -> String {
                guard let value = item[prefix + key]?.string ?? item[prefix + key]?.int.map(String.init) else {
                    throw MissingKey(key: prefix + key)
                }
                return value
            }
            var record = ReformedRecord()
            record[PropertyListKey.id] = try text("id")
            record[PropertyListKey.name] = try text("name")
            record[PropertyListKey.title] = try text("title")
            record[PropertyListKey.imageURL] = URL(string: try text("imageUrl"))
            return record
        }
    }
}

/// Another reformer over the same API: map pins need only id and title.
struct MapPinReformer: Reformer {
    struct Pin: Equatable {
        let id: String
        let label: String
    }
    func reform(_ data: JSON, from manager: any APIManager) throws -> [Pin] {
        try PropertyListReformer().reform(data, from: manager).compactMap { record in
            guard let id = record[PropertyListKey.id], let title = record[PropertyListKey.title] else { return nil }
            return Pin(id: id, label: title)
        }
    }
}

@Suite struct ReformerTests {
    static let secondHandBody =
        #"{"list":[{"esf_id":"1","esf_name":"Garden Court","esf_title":"2 rooms","esf_imageUrl":"https://img.example.com/1.jpg"}]}"#
    static let rentalBody = #"{"list":[{"id":1,"name":"Garden Court","title":"2 rooms","imageUrl":"https://img.example.com/1.jpg"}]}"#
    static let newHomeBody =
        #"{"list":[{"xinfang_id":"1","xinfang_name":"Garden Court","xinfang_title":"2 "#
        + #"rooms","xinfang_imageUrl":"https://img.example.com/1.jpg"}]}"#

    private func registry() throws -> ServiceRegistry {
        let stub = StubDispatcher { request in
            let body: String
            switch request.url.host {
            case "esf.test": body = Self.secondHandBody
            case "zufang.test": body = Self.rentalBody
            default: body = Self.newHomeBody
            }
            return Response(status: 200, body: Data(body.utf8))
        }
        return try makeRegistry(
            stub,
            services: [
                TestService(id: .secondHand, baseURL: "http://esf.test"),
                TestService(id: .rental, baseURL: "http://zufang.test"),
                TestService(id: .newHome, baseURL: "http://xinfang.test"),
            ])
    }

    @Test func oneReformerNormalisesThreeListingAPIsWithDifferentKeys() async throws {
        let registry = try registry()
        let managers: [any APIManager] = [
            SecondHandListAPIManager(registry: registry), RentalListingsAPIManager(registry: registry),
            NewHomeListAPIManager(registry: registry),
        ]
        let raws = try await APIBatch.load(managers)
        #expect(Set(raws).count == 3)  // three different raw shapes
        let outputs = try managers.map { try $0.fetchData(with: PropertyListReformer()) }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[1] == outputs[2])
        let row = try #require(outputs[0].first)
        #expect(row[PropertyListKey.id] == "1")
        #expect(row[PropertyListKey.name] == "Garden Court")
        #expect(row[PropertyListKey.title] == "2 rooms")
        #expect(row[PropertyListKey.imageURL] == URL(string: "https://img.example.com/1.jpg"))
    }

    @Test func oneAPIFeedsManyReformersAndNoReformerGivesTheRawData() async throws {
        let manager = SecondHandListAPIManager(registry: try registry())
        try await manager.load()
        #expect(try manager.fetchData(with: MapPinReformer()) == [MapPinReformer.Pin(id: "1", label: "2 rooms")])
        #expect(try manager.fetchData(with: PropertyListReformer()).count == 1)
        #expect(manager.fetchData() == (try JSON(parsing: Self.secondHandBody)))
    }

    @Test func fetchingBeforeDataOrWithAFailingReformerIsATypedError() async throws {
        let manager = RentalListingsAPIManager(
            registry: try makeRegistry(
                jsonStub(#"{"list":[{"id":"1"}]}"#), services: [TestService(id: .rental)]))
        #expect(throws: RunwayError.self) { try manager.fetchData(with: PropertyListReformer()) }
        do {
            _ = try manager.fetchData(with: PropertyListReformer())
        } catch {
            #expect(error.code == .noContent)
        }
        try await manager.load()
        do {
            _ = try manager.fetchData(with: PropertyListReformer())
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .responseInvalid)
            #expect((error.underlying as? PropertyListReformer.MissingKey)?.key == "name")
        }
        // A reformer's own RunwayError goes on as it is, its field kept.
        struct StrictReformer: Reformer {
            func reform(_ data: JSON, from manager: any APIManager) throws -> Int {
                throw RunwayError(.responseInvalid, "no total", field: "total")
            }
        }
        do {
            _ = try manager.fetchData(with: StrictReformer())
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .responseInvalid && error.field == "total" && error.message == "no total" && error.underlying == nil)
        }
    }

    @Test func reformedRecordsCompareByTypedValues() {
        var a = ReformedRecord()
        a[PropertyListKey.id] = "7"
        var b = ReformedRecord()
        b[PropertyListKey.id] = "7"
        #expect(a == b)
        b[PropertyListKey.name] = "x"
        #expect(a != b)
        b[PropertyListKey.name] = nil
        #expect(a == b)
        #expect(a.keyNames == ["PropertyList.id"])
    }
}
