import Foundation
import Runway
import RunwayCompression
import RunwayTesting
import Testing

@Suite struct CompressionInterceptorTests {
    let big = Data(String(repeating: "{\"district\":\"xuhui\",\"rent\":2500}", count: 100).utf8)

    func send(_ interceptor: CompressionInterceptor, body: Data?, headers: HTTPHeaders = [:], context: RequestContext = RequestContext())
        async throws -> Request
    {
        let stub = StubDispatcher(status: 200)
        var request = try Request(method: .post, "http://api.test/upload", headers: headers, body: body)
        request.options.acceptCompressedResponses = false
        _ = try await Pipeline(interceptors: [interceptor], dispatcher: stub).send(request, context: context)
        return try #require(stub.requests.first)
    }

    @Test func gzipsBodiesAboveTheThreshold() async throws {
        let sent = try await send(try .compression(threshold: 1024), body: big, headers: ["Content-Length": "\(big.count)"])
        #expect(sent.headers["Content-Encoding"] == "gzip")
        #expect(sent.headers["Content-Length"] == nil)
        #expect(try Gzip.decompress(try #require(sent.body), limit: big.count) == big)
        #expect(sent.options.acceptCompressedResponses)
    }

    @Test func leavesSmallBodiesAndForeignEncodingsAlone() async throws {
        let small = Data("{\"a\":1}".utf8)
        let sentSmall = try await send(try .compression(threshold: 1024), body: small)
        #expect(sentSmall.body == small)
        #expect(sentSmall.headers["Content-Encoding"] == nil)

        let sentEncoded = try await send(try .compression(threshold: 16), body: big, headers: ["Content-Encoding": "br"])
        #expect(sentEncoded.body == big)
        #expect(sentEncoded.headers["Content-Encoding"] == "br")

        let sentNone = try await send(try .compression(threshold: 0), body: nil)
        #expect(sentNone.body == nil)
    }

    @Test func incompressibleBodiesAreSentAsTheyAre() async throws {
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let sent = try await send(try .compression(threshold: 16), body: noise)
        #expect(sent.body == noise)
        #expect(sent.headers["Content-Encoding"] == nil)
    }

    @Test func onlyOptedInServicesAndAPIsAreCompressed() async throws {
        let interceptor = try CompressionInterceptor(threshold: 16, scope: .services(["listing"]))
        let listing = try await send(interceptor, body: big, context: RequestContext(apiName: "listing.upload", serviceID: "listing"))
        #expect(listing.headers["Content-Encoding"] == "gzip")
        let account = try await send(interceptor, body: big, context: RequestContext(apiName: "account.update", serviceID: "account"))
        #expect(account.headers["Content-Encoding"] == nil)

        var optedIn = RequestContext(serviceID: "account")
        optedIn[CompressionInterceptor.Key.self] = true
        #expect(try await send(interceptor, body: big, context: optedIn).headers["Content-Encoding"] == "gzip")
        var optedOut = RequestContext(serviceID: "listing")
        optedOut[CompressionInterceptor.Key.self] = false
        #expect(try await send(interceptor, body: big, context: optedOut).headers["Content-Encoding"] == nil)

        let byAPI = try CompressionInterceptor(threshold: 16, scope: .apis(["listing.upload"]))
        #expect(try await send(byAPI, body: big, context: RequestContext(apiName: "listing.upload")).headers["Content-Encoding"] == "gzip")
        #expect(try await send(byAPI, body: big, context: RequestContext(apiName: "listing.rent")).headers["Content-Encoding"] == nil)
        #expect(try await send(try .compression(threshold: 16, scope: .none), body: big).headers["Content-Encoding"] == nil)
    }

    @Test func oversizedDecodedResponsesAreRejected() async throws {
        let stub = StubDispatcher(status: 200, body: Data(count: 2048))
        var request = try Request("http://api.test/")
        request.options.maxResponseSize = 4096
        let pipeline = Pipeline(interceptors: [try CompressionInterceptor()], dispatcher: stub)
        #expect(try await pipeline.send(request).body.count == 2048)
        // The stub enforces the limit itself; a dispatcher that forgets is caught here.
        struct Careless: Dispatcher {
            func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
                Response(status: 200, body: Data(count: 8192))
            }
        }
        await #expect {
            try await Pipeline(interceptors: [try CompressionInterceptor()], dispatcher: Careless()).send(request)
        } throws: { ($0 as? RunwayError)?.code == .responseTooLarge }
    }

    @Test func badConfigurationIsRejectedAtRegistration() {
        func field(_ make: () throws -> CompressionInterceptor) -> String? {
            do {
                _ = try make()
                return nil
            } catch let error as RunwayError where error.code == .configuration { return error.field } catch { return "wrong error" }
        }
        #expect(field { try .compression(threshold: -1) } == "threshold")
        #expect(field { try .compression(level: 0) } == "level")
        #expect(field { try .compression(level: 10) } == "level")
        #expect(field { try .compression(scope: .services([])) } == "scope")
        #expect(field { try .compression(scope: .apis([])) } == "scope")
        #expect(field { try .compression() } == nil)
    }
}
