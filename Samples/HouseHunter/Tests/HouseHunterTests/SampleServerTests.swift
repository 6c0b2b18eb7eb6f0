import Foundation
import HouseHunterServer
import Runway
import RunwayCompression
import RunwayCurl
import RunwayDNSBypass
import RunwaySigning
import Testing

/// The sample API server, driven through a signing pipeline and the libcurl dispatcher.
@Suite("Sample server")
struct SampleServerTests {
    static let secret = "test-secret"

    /// Runs `body` against a two-address server (1 ms and 300 ms) and always stops it; its
    /// access tokens live by `clock`.
    func withServer<T>(
        tokenLifetime: Duration = .seconds(60), clock: TokenClock = TokenClock(), _ body: (SampleServer, Client) async throws -> T
    ) async throws -> T {
        let server = try await SampleServer.start(
            .init(
                addresses: [.init("127.0.0.1", delay: .milliseconds(1)), .init("127.0.0.2", delay: .milliseconds(300))],
                secret: Self.secret, hostNames: ["api.househunter.test", "rent.househunter.test"], tokenLifetime: tokenLifetime,
                filterDelay: .milliseconds(20), now: { clock.now }))
        do {
            let result = try await body(server, try Client(server: server))
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// Signed requests to the server's first address.
    struct Client {
        let server: SampleServer
        let signed: Pipeline
        let unsigned: Pipeline

        init(server: SampleServer) throws {
            self.server = server
            let curl = CurlDispatcher()
            signed = Pipeline(interceptors: [try SigningInterceptor.signing(secret: SampleServerTests.secret)], dispatcher: curl)
            unsigned = Pipeline(interceptors: [], dispatcher: curl)
        }

        func get(_ path: String, headers: HTTPHeaders = [:], signed sign: Bool = true) async throws -> (Response, JSON) {
            try await send(Request(url: server.url, headers: headers), path: path, sign: sign)
        }

        func post(_ path: String, _ body: JSON, headers: HTTPHeaders = [:]) async throws -> (Response, JSON) {
            var headers = headers
            headers["Content-Type"] = "application/json"
            let request = Request(method: .post, url: server.url, headers: headers, body: body.serializedData())
            return try await send(request, path: path, sign: true)
        }

        private func send(_ request: Request, path: String, sign: Bool) async throws -> (Response, JSON) {
            var request = request
            request.url = try #require(URL(string: server.url.absoluteString + path))
            let response = try await (sign ? signed : unsigned).send(request)
            return (response, response.body.isEmpty ? .null : try JSON(parsing: response.body))
        }
    }

    @Test func everyRequestMustBeSigned() async throws {
        try await withServer { server, client in
            let (unsigned, body) = try await client.get("/ping", signed: false)
            #expect(unsigned.status == 403)
            #expect(body["message"]?.string == "signature: missingHeader")
            let (signed, pong) = try await client.get("/ping")
            #expect(signed.status == 200 && pong["pong"] == true)
            // A request changed after it was signed is refused too.
            var request = try client.signed.interceptors[0].signedCopy(
                of: Request(url: try #require(URL(string: server.url.absoluteString + "/rent/v1/rentals?city=sh"))))
            request.url = try #require(URL(string: server.url.absoluteString + "/rent/v1/rentals?city=bj"))
            #expect(try await client.unsigned.send(request).status == 403)
        }
    }

    @Test func theThreeTeamsNameTheirKeysDifferently() async throws {
        try await withServer { _, client in
            let (_, sale) = try await client.get("/esf/v2/houses?city=sh&page=1&page_size=5")
            #expect(sale["code"] == 0)
            #expect(sale["data"]?["houses"]?.array?.count == 5)
            #expect(sale["data"]?["houses"]?[0]?["house_id"]?.int != nil)
            let (_, rent) = try await client.get("/rent/v1/rentals?city=sh&page=1&pageSize=5")
            #expect(rent["items"]?[0]?["id"]?.string != nil)
            #expect(rent["items"]?[0]?["monthly_rent"]?.int != nil)
            #expect(rent["hasMore"] == true)
            let (_, new) = try await client.get("/xf/projects/search?cityCode=sh&p=1&size=5")
            #expect(new["result"]?["projects"]?[0]?["projectId"]?.int != nil)
            #expect(new["result"]?["count"] == 12)
            // Each team reports a bad city its own way.
            let (saleError, saleBody) = try await client.get("/esf/v2/houses?city=xx")
            #expect(saleError.status == 200 && saleBody["code"] == 2001)
            let (rentError, rentBody) = try await client.get("/rent/v1/rentals?city=xx")
            #expect(rentError.status == 400 && rentBody["error"]?.string?.contains("city") == true)
            let (_, newBody) = try await client.get("/xf/projects/search?cityCode=xx")
            #expect(newBody["status"] == "error")
        }
    }

    @Test func pagesEndWithAShortPageAndFiltersCapThePrice() async throws {
        try await withServer { _, client in
            let (_, last) = try await client.get("/rent/v1/rentals?city=bj&page=3&pageSize=5")
            #expect(last["items"]?.array?.count == 2)
            #expect(last["hasMore"] == false)
            let (_, filtered) = try await client.get("/rent/v1/rentals?city=sh&maxRent=6000&pageSize=50")
            let rents = filtered["items"]?.array?.compactMap { $0["monthly_rent"]?.int } ?? []
            #expect(!rents.isEmpty && rents.allSatisfy { $0 <= 6000 })
            #expect(rents.count < 12)
        }
    }

    @Test func detailsAreFoundByIdOrAre404() async throws {
        try await withServer { _, client in
            let (response, body) = try await client.get("/api/listings/detail?id=42")
            #expect(response.status == 200)
            #expect(body["listing"]?["id"] == 42)
            #expect(body["listing"]?["title"]?.string == Catalogue.listing(id: 42)?.title)
            let (missing, problem) = try await client.get("/api/listings/detail?id=100000")
            #expect(missing.status == 404 && problem["code"] == 404)
            #expect(try await client.get("/api/listings/detail?id=abc").0.status == 400)
        }
    }

    @Test func largeAnswersAreGzippedWhenTheClientAcceptsGzip() async throws {
        try await withServer { _, client in
            let (response, body) = try await client.get("/xf/projects/search?cityCode=gz&p=1&size=12")
            #expect(response.headers["Content-Encoding"] == "gzip")
            #expect(body["result"]?["projects"]?.array?.count == 12)
        }
    }

    @Test func accessTokensExpireAndTheRefreshTokenMintsANewOne() async throws {
        // The tokens' clock moves only when the test says: a token is valid however slowly the
        // calls go, and expired once its minute has passed.
        let clock = TokenClock()
        try await withServer(tokenLifetime: .seconds(60), clock: clock) { server, client in
            let (wrong, wrongBody) = try await client.post("/api/account/login", ["user": "demo", "password": "nope"])
            #expect(wrong.status == 401 && wrongBody["code"] == 1002)
            let (_, tokens) = try await client.post("/api/account/login", ["user": "demo", "password": "househunter"])
            let access = try #require(tokens["access_token"]?.string)
            let refresh = try #require(tokens["refresh_token"]?.string)
            let (ok, favourites) = try await client.get("/api/account/favourites", headers: ["Authorization": "Bearer \(access)"])
            #expect(ok.status == 200 && favourites["favourites"]?.array?.count == 3)
            let (anonymous, anonymousBody) = try await client.get("/api/account/favourites")
            #expect(anonymous.status == 401 && anonymousBody["code"] == 1004)
            clock.advance(by: 60)
            let (expired, expiredBody) = try await client.get("/api/account/favourites", headers: ["Authorization": "Bearer \(access)"])
            #expect(expired.status == 401 && expiredBody["code"] == 1001)
            let (_, renewed) = try await client.post("/api/account/token/refresh", ["refresh_token": .string(refresh)])
            let fresh = try #require(renewed["access_token"]?.string)
            #expect(try await client.get("/api/account/favourites", headers: ["Authorization": "Bearer \(fresh)"]).0.status == 200)
            #expect(server.accounts.refreshCount == 1)
            let (rejected, rejectedBody) = try await client.post("/api/account/token/refresh", ["refresh_token": "forged"])
            #expect(rejected.status == 401 && rejectedBody["code"] == 1003)
        }
    }

    static func batch(_ id: UUID, _ records: [UUID]) -> JSON {
        [
            "batch": .string(id.uuidString),
            "records": .array(
                records.enumerated().map { index, record in
                    [
                        "id": .string(record.uuidString), "name": "screen.opened", "at": .int(1_700_000_000_000 + Int64(index)),
                        "attributes": ["screen": "listing/list"],
                    ]
                }),
        ]
    }

    @Test func actionBatchesAreDeduplicatedByRecordAndBatch() async throws {
        try await withServer { server, client in
            let (a, b, c) = (UUID(), UUID(), UUID())
            let first = UUID()
            let (response, ack) = try await client.post(
                "/api/actions/batch", Self.batch(first, [a, b]), headers: ["Idempotency-Key": first.uuidString])
            #expect(response.status == 200 && ack["accepted"] == 2 && ack["duplicates"] == 0)
            // The same batch again (a lost answer, say): acknowledged again, nothing counted twice.
            let (resent, again) = try await client.post(
                "/api/actions/batch", Self.batch(first, [a, b]), headers: ["Idempotency-Key": first.uuidString])
            #expect(resent.status == 200 && again["accepted"] == 0 && again["duplicates"] == 2)
            // A new batch carrying an old record: only the new one is accepted.
            let second = UUID()
            let (_, overlap) = try await client.post(
                "/api/actions/batch", Self.batch(second, [b, c]), headers: ["Idempotency-Key": second.uuidString])
            #expect(overlap["accepted"] == 1 && overlap["duplicates"] == 1)
            #expect(server.actionLog.records.map(\.id) == [a, b, c].map(\.uuidString))
            #expect(server.actionLog.records.first?.attributes == ["screen": "listing/list"])
            #expect(server.actionLog.batchCount == 2 && server.actionLog.requestCount == 3)
        }
    }

    @Test func malformedBatchesAreRefusedAndNothingIsStored() async throws {
        try await withServer { server, client in
            let id = UUID()
            let (wrongKey, _) = try await client.post(
                "/api/actions/batch", Self.batch(id, [UUID()]), headers: ["Idempotency-Key": UUID().uuidString])
            #expect(wrongKey.status == 400)
            var noTime = Self.batch(id, [UUID()])
            if case .object(var members) = noTime, case .array(var records) = members["records"], case .object(var record) = records[0] {
                record["at"] = "yesterday"
                records[0] = .object(record)
                members["records"] = .array(records)
                noTime = .object(members)
            }
            let (badTime, problem) = try await client.post("/api/actions/batch", noTime, headers: ["Idempotency-Key": id.uuidString])
            #expect(badTime.status == 400 && problem["message"]?.string?.contains("records[0].at must be an integer") == true)
            #expect(server.actionLog.records.isEmpty)
        }
    }

    @Test func gzipBodiesAreVerifiedAsSentAndDecodedForTheRoute() async throws {
        try await withServer { server, _ in
            let curl = CurlDispatcher()
            let pipeline = Pipeline(
                interceptors: [try .compression(threshold: 64), try SigningInterceptor.signing(secret: Self.secret)], dispatcher: curl)
            let id = UUID()
            let body = Self.batch(id, (0..<20).map { _ in UUID() }).serializedData()
            let request = Request(
                method: .post, url: try #require(URL(string: server.url.absoluteString + "/api/actions/batch")),
                headers: ["Content-Type": "application/json", "Idempotency-Key": id.uuidString], body: body)
            let response = try await pipeline.send(request)
            #expect(response.status == 200)
            #expect(try JSON(parsing: response.body)["accepted"] == 20)
        }
    }

    @Test func theIPListNamesEveryAddressAndTheBypassPicksTheFastest() async throws {
        try await withServer { server, client in
            let (_, list) = try await client.get("/ip-list")
            #expect(list["hosts"]?["rent.househunter.test"]?.array?.compactMap(\.string) == server.endpoints)
            let curl = CurlDispatcher()
            let signed = SignedTestDispatcher(pipeline: client.signed)
            let bypass = try DNSBypass(
                .init(
                    hosts: ["rent.househunter.test": [server.endpoints[1]]],
                    ipListSource: IPListSource(url: server.url.appending(path: "ip-list"), dispatcher: signed),
                    probe: .httpPing(path: "/ping", scheme: "http", samples: 1, dispatcher: signed), fallsBackToDNS: false))
            await bypass.start()
            #expect(bypass.endpoints(for: "rent.househunter.test").map(\.description) == server.endpoints)
            // Through the bypass, the host name stays the host name.
            let pipeline = Pipeline(
                interceptors: [try SigningInterceptor.signing(secret: Self.secret), .dnsBypass(bypass)], dispatcher: curl)
            let response = try await pipeline.send(try Request("http://rent.househunter.test/ping"))
            #expect(try JSON(parsing: response.body)["host"] == "rent.househunter.test")
            #expect(response.metrics.remoteAddress == server.endpoints[0])
        }
    }
}

/// A signing pipeline as a dispatcher, for the DNS bypass's fetch and pings.
struct SignedTestDispatcher: Dispatcher {
    let pipeline: Pipeline

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        try await pipeline.send(request, context: context)
    }
}

extension Interceptor {
    /// `request` as this interceptor (a signing one) passes it on.
    func signedCopy(of request: Request) throws -> Request {
        guard let signing = self as? SigningInterceptor else { throw RunwayError(.configuration, "not a signing interceptor") }
        return try signing.sign(request, apiName: nil)
    }
}

/// The time the sample server's tokens live by: the system clock's, plus what the test added.
final class TokenClock: Sendable {
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var offset: TimeInterval = 0

    var now: Date { Date().addingTimeInterval(lock.withLock { offset }) }

    func advance(by seconds: TimeInterval) { lock.withLock { offset += seconds } }
}
