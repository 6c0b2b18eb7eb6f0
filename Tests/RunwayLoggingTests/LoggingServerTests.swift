import Foundation
import Hummingbird
import InMemoryLogging
import Logging
import Runway
import RunwayCurl
import RunwayLogging
import RunwayTestServer
import Testing

/// Logging of a real transfer through libcurl.
@Suite struct LoggingServerTests {
    /// A logger at `level` whose entries the handler keeps.
    static func memoryLogger(_ level: Logger.Level) -> (InMemoryLogHandler, Logger) {
        var handler = InMemoryLogHandler()
        handler.logLevel = level
        return (handler, Logger(label: "runway.test") { [handler] _ in handler })
    }

    @Test func aRealTransferIsLoggedWithItsTimings() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let (handler, logger) = Self.memoryLogger(.trace)
        let request = Runway.Request(url: server.url("/json?access_token=qwerty"), headers: ["Authorization": "Bearer s3cret"])
        let response = try await Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher()).send(request)
        #expect(response.status == 200)
        let summary = "\(try #require(handler.entries.first { $0.level == .info }).message)"
        #expect(summary.contains("→ 200 in "))
        #expect(summary.contains("[network]"))
        #expect(summary.contains("HTTP/1.1"))
        #expect(!summary.contains("total 0.000ms"))
        let all = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        #expect(all.contains(#""login":"runway""#))
        #expect(!all.contains("qwerty") && !all.contains("s3cret"))
    }

    /// A large JSON body is logged redacted as far as the body limit, never parsed whole (2.4 MB of
    /// it took seconds on the call's path), and nothing hidden shows.
    @Test func aLargeJSONBodyIsLoggedAsFarAsTheLimit() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let (handler, logger) = Self.memoryLogger(.trace)
        let items = (0..<40_000).map { #"{"id":\#($0),"token":"SECRET-\#($0)"}"# }.joined(separator: ",")
        let body = Data(#"{"session_id":"SECRET-top","items":[\#(items)]}"#.utf8)
        let request = Runway.Request(
            method: .post, url: server.url("/upload"), headers: ["Content-Type": "application/json"], body: body)
        let response = try await Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher()).send(request)
        #expect(response.status == 200)
        let all = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        let start = #"{"session_id":"<redacted>","items":[{"id":0,"token":"<redacted>"},{"id":1,"token":"<redacted>"}"#
        #expect(all.contains(start), "\(all.prefix(2000))")
        #expect(all.contains("… (of \(body.count) bytes)"))
        #expect(!all.contains("SECRET-0") && !all.contains("SECRET-top"))
        #expect(all.utf8.count < 20_000)
    }

    /// A secret member of a nested name (`card[cvv]`), in a query and in a form, is hidden.
    @Test func aNestedSecretNameIsHidden() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let (handler, logger) = Self.memoryLogger(.trace)
        let pipeline = Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher())
        let request = try Runway.Request(
            method: .post, server.url("/json").absoluteString + "?card%5Bcvv%5D=7331&page%5Bsize%5D=20",
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data("user[pin]=8642&user[name]=li".utf8))
        _ = try await pipeline.send(request)
        let all = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        #expect(all.contains("card%5Bcvv%5D=<redacted>") && all.contains("page%5Bsize%5D=20"), "\(all)")
        #expect(all.contains("user[pin]=<redacted>") && all.contains("user[name]=li"), "\(all)")
        #expect(!all.contains("7331") && !all.contains("8642"))
    }

    /// A parameter the app has logging hide, refused by validation: its value is in neither the
    /// log nor the error (the validation interceptor knows the standard secret names only).
    @Test func aRefusedParameterTheAppHidesIsNotLogged() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let (handler, logger) = Self.memoryLogger(.trace)
        let validation = try ValidationInterceptor.validation([
            "salaries": APIValidation(parameters: [ParameterRule("salary", .range(0...1000))])
        ])
        let pipeline = try Pipeline(dispatcher: CurlDispatcher()) {
            LoggingInterceptor.logging(logger, redacting: try .standard(parameters: ["salary"]))
            validation
        }
        let query = Runway.Request(url: server.url("/json?salary=987654321"))
        let form = Runway.Request(
            method: .post, url: server.url("/json"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("salary=987654322".utf8))
        let json = Runway.Request(
            method: .post, url: server.url("/json"), headers: ["Content-Type": "application/json"],
            body: Data(#"{"salary":987654323}"#.utf8))
        for request in [query, form, json] {
            let error = await #expect(throws: RunwayError.self) {
                try await pipeline.send(request, context: RequestContext(apiName: "salaries"))
            }
            #expect(error?.code == .paramsInvalid && error?.field == "salary")
            #expect(!"\(String(describing: error))".contains("98765432"))
        }
        let all = handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(all.contains("salary is outside 0...1000"))
        #expect(!all.contains("98765432"), "\(all)")
    }

    /// Each redirect the redirect interceptor follows is a line before the call's summary, where
    /// it leads redacted like the call's URL.
    @Test func eachRedirectFollowedIsLogged() async throws {
        let routes: TestServer.Routes = { router in
            router.post("/login") { _, _ in
                Hummingbird.Response(status: .seeOther, headers: [.location: "/echo?page=2&access_token=qwerty"])
            }
        }
        try await withTestServer(routes: routes) { server in
            let (handler, logger) = Self.memoryLogger(.info)
            let pipeline = Pipeline(interceptors: [.logging(logger), try .redirects()], dispatcher: CurlDispatcher())
            let response = try await pipeline.send(Runway.Request(method: .post, url: server.url("/login"), body: Data("a=1".utf8)))
            #expect(response.status == 200)
            let lines = handler.entries.map { "\($0.message)" }
            try #require(lines.count == 2, "\(lines)")
            let leadsTo = "redirect 1: 303 → GET \(server.url("/echo").absoluteString)?page=2&access_token=<redacted>"
            #expect(lines[0] == "POST \(server.url("/login").absoluteString) \(leadsTo)")
            #expect(lines[1].hasPrefix("POST \(server.url("/login").absoluteString) → 200 in "))
            #expect(!lines.joined().contains("qwerty"))
        }
    }
}

extension LoggingServerTests {
    /// `{"name":"ann","token":"gz-secret-1"}`, gzipped.
    static let gzippedJSON: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xAB, 0x56, 0xCA, 0x4B, 0xCC, 0x4D, 0x55, 0xB2, 0x52, 0x4A,
        0xCC, 0xCB, 0x53, 0xD2, 0x51, 0x2A, 0xC9, 0xCF, 0x4E, 0xCD, 0x03, 0xF2, 0xD2, 0xAB, 0x74, 0x8B, 0x53, 0x93, 0x8B, 0x52,
        0x4B, 0x74, 0x0D, 0x95, 0x6A, 0x01, 0x4D, 0x5B, 0xF4, 0xF9, 0x24, 0x00, 0x00, 0x00,
    ]

    /// The dispatcher decodes a gzipped body and leaves `Content-Encoding: gzip` in the headers:
    /// the dump shows the decoded body, redacted, and the byte count only of a body still gzipped.
    @Test func aDecodedGzipResponseIsDumpedAsItsTextRedacted() async throws {
        let server = try RawResponder(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                + "Content-Length: \(Self.gzippedJSON.count)\r\nConnection: close\r\n\r\n",
            extra: Self.gzippedJSON)
        defer { server.stop() }
        let (handler, logger) = Self.memoryLogger(.trace)
        let pipeline = Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher())
        let response = try await pipeline.send(Runway.Request(url: server.url("/profile")))
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"name":"ann","token":"gz-secret-1"}"#)
        var dump = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        #expect(dump.contains(#"{"name":"ann","token":"<redacted>"}"#), "\(dump)")
        #expect(!dump.contains("gz-secret-1") && !dump.contains("bytes gzip"), "\(dump)")

        // Asked for as sent: the body is gzip, shown by its size.
        var raw = Runway.Request(url: server.url("/profile"))
        raw.options.acceptCompressedResponses = false
        #expect(try await pipeline.send(raw).body.count == Self.gzippedJSON.count)
        dump = handler.entries.map { "\($0.message)" }.joined(separator: "\n")
        #expect(dump.contains("<\(Self.gzippedJSON.count) bytes gzip>"), "\(dump)")
    }

    /// `send(api:)` takes a path, query included: a secret in it was hidden in the logged URL but
    /// not in the line's `runway.api` metadata.
    @Test func aSecretInAnAPINamesQueryIsHidden() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let (handler, logger) = Self.memoryLogger(.trace)
        var builder = ServiceRegistry.Builder(
            environment: .release, pipeline: Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher()))
        builder.register(LoggedService(baseURLs: BaseURLs(server.url("/").absoluteString)))
        let registry = try builder.build()
        let response = try await registry.send(api: "json?access_token=an-1&page=2", of: "logged", method: .get)
        #expect(response.status == 200)
        let apis = Set(handler.entries.compactMap { $0.metadata["runway.api"].map { "\($0)" } })
        #expect(apis == ["json?access_token=<redacted>&page=2"], "\(apis)")
        let all = handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!all.contains("an-1"), "\(all)")
    }
}

struct LoggedService: Service {
    let id: ServiceID = "logged"
    let baseURLs: BaseURLs
}
