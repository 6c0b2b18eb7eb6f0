import Detail
import Foundation
import HouseHunterOpenAPI
import HouseHunterServer
import OpenAPIRuntime
import Runway
import RunwayCache
import RunwayCurl
import RunwayOpenAPI
import RunwaySigning
import Testing

/// The platform API's generated client (OpenAPI/openapi.yaml) through a Runway chain to the
/// sample server, which verifies every signature.
@Suite("Platform API (OpenAPI)")
struct PlatformAPITests {
    static let secret = "platform-test-secret"

    func withServer(_ body: (SampleServer, URL) async throws -> Void) async throws {
        let server = try await SampleServer.start(
            .init(addresses: [.init("127.0.0.1", delay: .zero)], secret: Self.secret, hostNames: ["api.househunter.test"]))
        do {
            try await body(server, server.url.appending(path: "api"))
            await server.shutdown()
        } catch {
            await server.shutdown()
            throw error
        }
    }

    @Test func theOperationsKeepTheManagersAPINames() {
        #expect(PlatformAPI.apiNames["getListingDetail"] == DetailCaching.apiName)
    }

    @Test func signedCallsVerifyAndTheDetailIsCachedUnderItsAPIName() async throws {
        try await withServer { server, url in
            let cache = try ResponseCache(policies: [DetailCaching.apiName: .memory(ttl: DetailCaching.ttl)])
            let pipeline = Pipeline(interceptors: [cache.interceptor, try .signing(secret: Self.secret)], dispatcher: CurlDispatcher())
            let platform = PlatformAPI(pipeline: pipeline, serverURL: url)
            for _ in 0..<2 {
                let listing = try #require(try await platform.listing(id: 13))
                #expect(listing.id == 13)
                #expect(listing.kind == "rent")
            }
            #expect(server.servers[0].stats.requests(path: "/api/listings/detail") == 1)
            #expect(try await platform.listing(id: 999_999) == nil)

            let tokens = try await platform.logIn(user: "demo", password: "househunter")
            #expect(tokens.user == "demo")
            await #expect(throws: PlatformAPI.Refusal(status: 401, code: 1002, message: "wrong user name or password")) {
                try await platform.logIn(user: "demo", password: "nope")
            }
        }
    }

    @Test func anUnsignedCallIsRefusedByTheServer() async throws {
        try await withServer { _, url in
            let platform = PlatformAPI(pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()), serverURL: url)
            await #expect(throws: PlatformAPI.Refusal(status: 403, code: 4030, message: "signature: missingHeader")) {
                try await platform.listing(id: 13)
            }
        }
    }

    @Test func aServerThatCannotBeReachedIsARunwayErrorInTheClientError() async throws {
        let platform = PlatformAPI(
            pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()), serverURL: URL(string: "http://127.0.0.1:1")!)
        do {
            _ = try await platform.listing(id: 13)
            Issue.record("the call succeeded")
        } catch let error as ClientError {
            #expect(error.operationID == "getListingDetail")
            #expect(error.runwayError?.code == .cannotConnect)
        }
    }

    @Test func theAppsPlatformCommandRunsTheClientThroughItsChain() async throws {
        let run = try await HouseHunterProcess.run(["platform", "--id", "13"])
        #expect(run.status == 0, "\(run.stderr)")
        let out = run.stdout.components(separatedBy: "\n")
        #expect(out.filter { $0.hasPrefix("getListingDetail 13: ") }.count == 2)
        #expect(out.contains("login demo: token for demo, expires in 60 s"))
        #expect(out.contains("login demo with a wrong password: refused (code 1002)"))
        #expect(out.contains("4 operations, 3 sent to the network (the second detail came from the cache)"))
    }
}
