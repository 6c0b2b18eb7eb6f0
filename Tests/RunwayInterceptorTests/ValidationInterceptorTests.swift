import Foundation
import Runway
import RunwayTesting
import Testing

@Suite struct ValidationInterceptorTests {
    static let rent = "listing.rent"

    static func rules() throws -> ValidationInterceptor {
        try .validation([
            rent: APIValidation(
                parameters: [
                    ParameterRule("city", .required, .type(.string), .length(1...20)),
                    ParameterRule("page", .type(.integer), .range(1...50)),
                    ParameterRule("sort", .oneOf(["price", "date"])),
                    ParameterRule("phone", .pattern(#"^1\d{10}$"#)),
                ],
                response: ResponseRule(
                    contentType: "application/json",
                    json: .object(["items": .array(of: .object(["id": .integer])), "total": .integer])))
        ])
    }

    static let goodBody = Data(#"{"items":[{"id":1},{"id":2}],"total":2}"#.utf8)

    func send(
        _ url: String, body: Data? = nil, contentType: String? = nil, responseBody: Data = goodBody,
        responseType: String = "application/json", status: Int = 200
    ) async throws -> (Result<Response, RunwayError>, StubDispatcher) {
        let stub = StubDispatcher { _ in
            Response(status: status, headers: ["Content-Type": responseType], body: responseBody)
        }
        let pipeline = Pipeline(interceptors: [try Self.rules()], dispatcher: stub)
        var headers: HTTPHeaders = [:]
        if let contentType { headers["Content-Type"] = contentType }
        let request = try Request(method: body == nil ? .get : .post, url, headers: headers, body: body)
        do {
            return (.success(try await pipeline.send(request, context: RequestContext(apiName: Self.rent))), stub)
        } catch {
            return (.failure(error), stub)
        }
    }

    func failure(_ result: Result<Response, RunwayError>) -> RunwayError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    @Test func rangesPrintAsTheyWereWritten() async throws {
        let (result, _) = try await send("https://api.test/rent?city=x&page=51")
        #expect(failure(result)?.message == "page is outside 1...50", "\(String(describing: failure(result)))")
        let fractional = try ValidationInterceptor.validation([
            Self.rent: APIValidation(parameters: [ParameterRule("ratio", .range(0.5...1.5))])
        ])
        let pipeline = Pipeline(interceptors: [fractional], dispatcher: StubDispatcher(status: 200))
        await #expect {
            try await pipeline.send(try Request("https://api.test/rent?ratio=2"), context: RequestContext(apiName: Self.rent))
        } throws: { ($0 as? RunwayError)?.message.contains("outside 0.5...1.5") == true }
    }

    @Test(
        "a number in a query or form is decimal: hexadecimal, inf and nan are refused", arguments: ["0x10", "0x1p4", "0X1A", "inf", "nan"])
    func numbersAreDecimal(_ text: String) async throws {
        let stub = StubDispatcher(status: 200)
        let rules = try ValidationInterceptor.validation([
            Self.rent: APIValidation(parameters: [ParameterRule("ratio", .type(.number)), ParameterRule("price", .range(0...100))])
        ])
        let pipeline = Pipeline(interceptors: [rules], dispatcher: stub)
        for name in ["ratio", "price"] {
            await #expect {
                try await pipeline.send(try Request("https://api.test/rent?\(name)=\(text)"), context: RequestContext(apiName: Self.rent))
            } throws: { ($0 as? RunwayError)?.field == name }
        }
        #expect(stub.requests.isEmpty)
        _ = try await pipeline.send(
            try Request("https://api.test/rent?ratio=-1.5e2&price=12.5"), context: RequestContext(apiName: Self.rent))
        #expect(stub.requests.count == 1)
    }

    @Test func aSecretsValueIsNotRepeatedInTheMessage() async throws {
        let pin = try ValidationInterceptor.validation([Self.rent: APIValidation(parameters: [ParameterRule("pin", .range(0...9999))])])
        let pipeline = Pipeline(interceptors: [pin], dispatcher: StubDispatcher(status: 200))
        await #expect {
            try await pipeline.send(try Request("https://api.test/rent?pin=98765432101"), context: RequestContext(apiName: Self.rent))
        } throws: { error in
            let message = (error as? RunwayError)?.message ?? ""
            return message == "pin is outside 0...9999" && !"\(error)".contains("98765432101")
        }
    }

    @Test func aSecretsLengthIsNotRepeatedInTheMessage() async throws {
        let rules = try ValidationInterceptor.validation([
            Self.rent: APIValidation(parameters: [ParameterRule("password", .length(8...64))])
        ])
        let pipeline = Pipeline(interceptors: [rules], dispatcher: StubDispatcher(status: 200))
        for (password, message) in [
            ("abcde", "password is shorter than 8, outside the length 8...64"),
            (String(repeating: "x", count: 77), "password is longer than 64, outside the length 8...64"),
        ] {
            await #expect {
                try await pipeline.send(
                    try Request("https://api.test/rent?password=\(password)"), context: RequestContext(apiName: Self.rent))
            } throws: { error in
                (error as? RunwayError)?.message == message && !"\(error)".contains("\(password.count)")
            }
        }
    }

    @Test func validRequestPasses() async throws {
        let (result, stub) = try await send("https://api.test/rent?city=Shanghai&page=3&sort=price&phone=13800138000")
        #expect(try result.get().status == 200)
        #expect(stub.requests.count == 1)
    }

    @Test(arguments: [
        ("https://api.test/rent?page=3", "city"),
        ("https://api.test/rent?city=", "city"),
        ("https://api.test/rent?city=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "city"),
        ("https://api.test/rent?city=x&page=three", "page"),
        ("https://api.test/rent?city=x&page=51", "page"),
        ("https://api.test/rent?city=x&page=0", "page"),
        ("https://api.test/rent?city=x&sort=rating", "sort"),
        ("https://api.test/rent?city=x&phone=12345", "phone"),
        ("https://api.test/rent?city=x&page=2&page=99", "page"),
    ])
    func invalidParameterIsRejectedBeforeTheNetwork(url: String, field: String) async throws {
        let (result, stub) = try await send(url)
        let error = try #require(failure(result))
        #expect(error.code == .paramsInvalid)
        #expect(error.field == field)
        #expect(error.stage == .interceptor("validation"))
        #expect(stub.requests.isEmpty)
    }

    @Test func formBodyParametersAreChecked() async throws {
        let (result, stub) = try await send(
            "https://api.test/rent", body: Data("city=Beijing&page=900".utf8),
            contentType: "application/x-www-form-urlencoded")
        #expect(failure(result)?.field == "page")
        #expect(stub.requests.isEmpty)
    }

    @Test func jsonBodyTypesAreJSONTypes() async throws {
        let ok = try await send(
            "https://api.test/rent", body: Data(#"{"city":"Beijing","page":4}"#.utf8), contentType: "application/json")
        #expect((try? ok.0.get()) != nil)
        let wrongType = try await send(
            "https://api.test/rent", body: Data(#"{"city":"Beijing","page":"4"}"#.utf8), contentType: "application/json")
        #expect(failure(wrongType.0)?.field == "page")
        let notObject = try await send("https://api.test/rent", body: Data("[1]".utf8), contentType: "application/json")
        #expect(failure(notObject.0)?.code == .paramsInvalid)
        #expect(notObject.1.requests.isEmpty)
    }

    @Test func responseRulesKeepTheRawResponse() async throws {
        let badShape = Data(#"{"items":[{"id":1},{"id":"two"}],"total":2}"#.utf8)
        let (result, stub) = try await send("https://api.test/rent?city=x", responseBody: badShape)
        let error = try #require(failure(result))
        #expect(error.code == .responseInvalid)
        #expect(error.field == "items[1].id")
        #expect(error.response?.body == badShape)
        #expect(stub.requests.count == 1)

        let wrongType = try await send("https://api.test/rent?city=x", responseType: "text/html")
        #expect(failure(wrongType.0)?.field == "Content-Type")
        let charset = try await send("https://api.test/rent?city=x", responseType: "application/json; charset=utf-8")
        #expect((try? charset.0.get()) != nil)
        let status = try await send("https://api.test/rent?city=x", status: 500)
        #expect(failure(status.0)?.field == "status")
        let missing = try await send("https://api.test/rent?city=x", responseBody: Data(#"{"items":[]}"#.utf8))
        #expect(failure(missing.0)?.field == "total")
        let notJSON = try await send("https://api.test/rent?city=x", responseBody: Data("<html>".utf8))
        #expect(failure(notJSON.0)?.field == "$")
    }

    @Test(
        "a content type matches ignoring case, blanks and parameters; type/* matches its subtypes",
        arguments: [
            ("application/json", "application/json", true), ("Application/JSON; charset=utf-8", "application/json", true),
            (" \tapplication/json \t;x", "application/json", true), ("application/jsonx", "application/json", false),
            ("application/jso", "application/json", false), ("text/html", "text/*", true), ("TEXT/plain", "text/*", true),
            ("textual/x", "text/*", false), ("", "application/json", false), (";", "text/*", false),
            ("application/json", "application/*", true), ("applicatioN/jsoN", "application/json", true),
            ("application\u{0}json", "application/json", false), ("applicationájson", "application/json", false),
        ])
    func mediaTypes(received: String, expected: String, matches: Bool) {
        #expect(ResponseRule.mediaType(of: received, matches: expected) == matches)
    }

    @Test func theMismatchMessageNamesTheReceivedType() async throws {
        let wrongType = try await send("https://api.test/rent?city=x", responseType: " Text/HTML ; charset=x")
        #expect(failure(wrongType.0)?.message == "content type \"text/html\" is not application/json")
    }

    @Test func contextRulesOverrideAndUnknownAPIsPass() async throws {
        let stub = StubDispatcher(status: 200)
        let pipeline = Pipeline(interceptors: [try Self.rules()], dispatcher: stub)
        _ = try await pipeline.send(try Request("https://api.test/other"), context: RequestContext(apiName: "other"))
        var context = RequestContext(apiName: "other")
        context[APIValidation.Key.self] = try APIValidation(parameters: [ParameterRule("token", .required)])
        await #expect(throws: RunwayError.self) {
            try await pipeline.send(try Request("https://api.test/other"), context: context)
        }
        #expect(stub.requests.count == 1)
    }

    @Test func badConfigurationIsRejectedAtRegistration() {
        func code(_ body: () throws -> Void) -> RunwayError.Code? {
            do {
                try body()
                return nil
            } catch { return (error as? RunwayError)?.code }
        }
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("p", .pattern("(unclosed"))]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("", .required)]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("a"), ParameterRule("a")]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("a", .length(-1...3))]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("a", .range(0...Double.infinity))]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("a", .oneOf([]))]) } == .configuration)
        #expect(code { _ = try APIValidation(parameters: [ParameterRule("a", .type(.string), .type(.integer))]) } == .configuration)
        #expect(code { _ = try APIValidation(response: ResponseRule(status: 0...99)) } == .configuration)
        #expect(code { _ = try APIValidation(response: ResponseRule(contentType: "json")) } == .configuration)
        #expect(code { _ = try ValidationInterceptor(["": APIValidation()]) } == .configuration)
    }
}
