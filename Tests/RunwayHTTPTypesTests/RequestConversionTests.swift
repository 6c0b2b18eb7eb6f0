import Foundation
import HTTPTypes
import RunwayCore
import RunwayHTTPTypes
import Testing

/// `Request` to `HTTPRequest` and back: method, scheme, authority, path and query, header fields.
@Suite struct RequestConversionTests {
    /// A request with `path` and, unless `nil`, a scheme and an authority.
    static func request(
        _ method: HTTPRequest.Method = .get, scheme: String? = nil, authority: String? = nil, path: String?,
        headerFields: HTTPFields = [:]
    ) -> HTTPRequest {
        HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: headerFields)
    }

    /// The URL text of the Runway request made from `request` and `baseURL`.
    static func urlText(_ request: HTTPRequest, baseURL: String? = nil) throws -> String {
        try Request(request, baseURL: baseURL.map { try #require(URL(string: $0)) }).url.absoluteString
    }

    // MARK: Request to HTTPRequest

    @Test(
        "a URL splits into scheme, authority and path with the query, the fragment left out",
        arguments: [
            ("https://api.example.com/v1/pets?limit=10#top", "https", "api.example.com", "/v1/pets?limit=10"),
            ("http://api.example.com:8080/", "http", "api.example.com:8080", "/"),
            ("http://[::1]:8080/x?y", "http", "[::1]:8080", "/x?y"),
            ("https://[2001:db8::1]/", "https", "[2001:db8::1]", "/"),
            ("http://127.0.0.1", "http", "127.0.0.1", "/"),
            ("http://h.example?q=1", "http", "h.example", "/?q=1"),
            ("http://h.example/a%2Fb/%E2%82%AC?q=%20x&r=a+b", "http", "h.example", "/a%2Fb/%E2%82%AC?q=%20x&r=a+b"),
            ("HTTPS://Mixed.Example.COM/Path", "HTTPS", "Mixed.Example.COM", "/Path"),
        ])
    func requestToHTTPRequest(_ url: String, _ scheme: String, _ authority: String, _ path: String) throws {
        let converted = try HTTPRequest(Request(method: .put, url, headers: ["X-A": "1", "X-A": "2"], body: Data("b".utf8)))
        #expect(converted.method == .put)
        #expect(converted.scheme == scheme)
        #expect(converted.authority == authority)
        #expect(converted.path == path)
        #expect(converted.headerFields[values: try #require(HTTPField.Name("X-A"))] == ["1", "2"])
        // Pseudo-headers are the request's own properties, never among its header fields.
        #expect(!converted.headerFields.contains { $0.name.rawName.hasPrefix(":") })
    }

    @Test func userinfoInTheURLIsRejectedNotDropped() throws {
        let request = try Request("https://user:secret@api.example.com/x")
        let error = #expect(throws: RunwayError.self) { try HTTPRequest(request) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains("Authorization") == true)
    }

    @Test func aBadHeaderNameFailsTheRequest() throws {
        let request = try Request("https://api.example.com/x", headers: ["Bad Name": "1"])
        let error = #expect(throws: RunwayError.self) { try HTTPRequest(request) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.field == "Bad Name")
    }

    @Test func aSchemeOtherThanHTTPIsUnsupported() throws {
        let error = #expect(throws: RunwayError.self) { try HTTPRequest(Request(url: try #require(URL(string: "ftp://h.example/x")))) }
        #expect(error?.code == .unsupportedScheme)
    }

    // MARK: HTTPRequest to Request

    @Test func anAbsoluteRequestKeepsItsTargetMethodHeadersAndBody() throws {
        let fields: HTTPFields = [.accept: "application/json", .contentType: "application/json", .accept: "text/plain"]
        let body = Data(#"{"name":"Rex"}"#.utf8)
        let request = try Request(
            Self.request(.post, scheme: "https", authority: "api.example.com:8443", path: "/v1/pets?limit=10", headerFields: fields),
            body: body)
        #expect(request.method == .post)
        #expect(request.url.absoluteString == "https://api.example.com:8443/v1/pets?limit=10")
        #expect(
            HeaderConversionTests.pairs(request.headers) == [
                "Accept: application/json", "Content-Type: application/json", "Accept: text/plain",
            ])
        #expect(request.body == body)
    }

    /// It went to the authority with `Host: evil.example`: connected to one host, addressed to another.
    @Test func aHostFieldThatIsNotTheAuthorityIsRefused() throws {
        let fields: HTTPFields = [HTTPField.Name("Host")!: "evil.example"]
        let error = #expect(throws: RunwayError.self) {
            try Request(Self.request(.get, scheme: "http", authority: "127.0.0.1:8080", path: "/x", headerFields: fields))
        }
        #expect(error?.code == .invalidHeader)
        // The same host, in another case, is the authority.
        let same: HTTPFields = [HTTPField.Name("Host")!: "API.example.com"]
        _ = try Request(Self.request(.get, scheme: "https", authority: "api.example.com", path: "/x", headerFields: same))
    }

    @Test(
        "a path is appended to the base URL's path, as a swift-openapi-runtime transport does",
        arguments: [
            ("https://api.example.com/v1", "/pets?limit=10", "https://api.example.com/v1/pets?limit=10"),
            ("https://api.example.com", "/pets", "https://api.example.com/pets"),
            ("https://api.example.com/", "/pets", "https://api.example.com/pets"),
            ("https://api.example.com/v1/", "/pets/", "https://api.example.com/v1/pets/"),
            ("https://api.example.com/v1", "", "https://api.example.com/v1"),
            ("https://api.example.com/v1?key=k", "/pets?limit=1", "https://api.example.com/v1/pets?key=k&limit=1"),
            ("https://api.example.com/v1?key=k", "/pets", "https://api.example.com/v1/pets?key=k"),
            ("https://api.example.com/v1#part", "/pets", "https://api.example.com/v1/pets"),
            ("http://127.0.0.1:8080", "/a%2Fb?q=%E2%82%AC", "http://127.0.0.1:8080/a%2Fb?q=%E2%82%AC"),
            ("http://[::1]:9000/api", "/x", "http://[::1]:9000/api/x"),
            ("https://user:pw@api.example.com", "/x", "https://user:pw@api.example.com/x"),
        ])
    func baseURLJoining(_ base: String, _ path: String, _ expected: String) throws {
        #expect(try Self.urlText(Self.request(path: path), baseURL: base) == expected)
    }

    @Test func aNilPathWithABaseURLIsTheBaseURL() throws {
        #expect(try Self.urlText(Self.request(path: nil), baseURL: "https://api.example.com/v1") == "https://api.example.com/v1")
    }

    @Test func theBaseURLDecidesWhereARequestWithAnAuthorityGoes() throws {
        let request = Self.request(scheme: "https", authority: "original.example", path: "/x")
        #expect(try Self.urlText(request, baseURL: "http://127.0.0.1:8080") == "http://127.0.0.1:8080/x")
    }

    @Test func charactersAURLCannotHoldRawArePercentEncoded() throws {
        let text = try Self.urlText(Self.request(path: "/caf\u{E9}|{x}"), baseURL: "https://api.example.com")
        #expect(text == "https://api.example.com/caf%C3%A9%7C%7Bx%7D")
    }

    @Test(
        "an HTTPRequest that has no URL, or a bad one, is a typed error",
        arguments: [
            (request(path: "/x"), nil, RunwayError.Code.invalidURL),  // no scheme, authority or base URL
            (request(scheme: "https", path: "/x"), nil, .invalidURL),  // no authority
            (request(scheme: "https", authority: "h.example", path: nil), nil, .invalidURL),  // no path
            (request(scheme: "https", authority: "h.example", path: ""), nil, .invalidURL),
            (request(scheme: "ftp", authority: "h.example", path: "/x"), nil, .unsupportedScheme),
            (request(scheme: "https", authority: "user:pw@h.example", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "h.example/evil", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "h.example?x", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "h.example:99999", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "h.example:port", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "", path: "/x"), nil, .invalidURL),
            (request(scheme: "https", authority: "h .example", path: "/x"), nil, .invalidURL),
            (request(path: "x"), "https://h.example", .invalidURL),  // not "/"
            (request(path: "https://other.example/x"), "https://h.example", .invalidURL),
            (request(path: "/x#frag"), "https://h.example", .invalidURL),
            (request(path: "/a b"), "https://h.example", .invalidURL),
            (request(path: "/a\r\nHost: evil"), "https://h.example", .invalidURL),
            (request(path: "/x"), "/relative", .invalidURL),
            (request(path: "/x"), "mailto:someone@h.example", .invalidURL),
            (request(path: "/x"), "ftp://h.example", .unsupportedScheme),
            (request(path: "/x"), "https://h.example:70000", .invalidURL),
            (request(.connect, authority: "h.example:443", path: nil), "https://h.example", .invalidRequest),
            (request(.options, path: "*"), "https://h.example", .invalidRequest),
            (request(try! #require(HTTPRequest.Method("get")), path: "/x"), "https://h.example", .invalidRequest),
        ] as [(HTTPRequest, String?, RunwayError.Code)])
    func invalidRequests(_ request: HTTPRequest, _ base: String?, _ code: RunwayError.Code) throws {
        let baseURL = try base.map { try #require(URL(string: $0)) }
        let error = #expect(throws: RunwayError.self) { try Request(request, baseURL: baseURL) }
        #expect(error?.code == code, "\(error?.description ?? "no error")")
    }

    @Test(
        "an error names a path or URL without its query, which may hold a secret",
        arguments: [
            (request(path: "/p?token=tk-1#x"), "https://h.example", #"path "/p?…" holds a fragment (#)"#),
            (request(path: "p?token=tk-2"), "https://h.example", #"path "p?…" does not start with "/""#),
            (request(path: "/p?token=tk-3"), nil, "request GET /p?… has no scheme or authority"),
            (
                request(scheme: "https", authority: "h.example:70000", path: "/p?token=tk-4"), nil,
                #"port 70000 is over 65535: "https://h.example:70000/p?…""#
            ),
            (request(path: "/p"), "https://h.example:70000/v1?token=tk-5", #"port 70000 is over 65535: "https://h.example:70000/v1?…""#),
            (request(path: "/p"), "/relative?token=tk-6", #"base URL "/relative?…" is not absolute"#),
            (request(scheme: "https", authority: "user:tk-7@h.example", path: "/x"), nil, #"authority "…@h.example" has userinfo"#),
            (request(scheme: "https", authority: "h.example?token=tk-8", path: "/x"), nil, #"authority "h.example?…" is not host[:port]"#),
        ] as [(HTTPRequest, String?, String)])
    func errorsLeaveTheQueryOut(_ request: HTTPRequest, _ base: String?, _ message: String) throws {
        let baseURL = try base.map { try #require(URL(string: $0)) }
        let error = #expect(throws: RunwayError.self) { try Request(request, baseURL: baseURL) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains("tk-") == false, "\(error?.message ?? "no error")")
    }

    @Test(
        "a % not followed by two hex digits is an error, never re-encoded as %25",
        arguments: [
            ("/a%zz?token=pe-1", #"path "/a%zz?…" holds a "%" not followed by two hex digits at byte 2"#),
            ("/a?q=%&token=pe-2", #"path "/a?…" holds a "%" not followed by two hex digits at byte 5"#),
            ("/a?token=pe-3&q=%4", #"path "/a?…" holds a "%" not followed by two hex digits at byte 16"#),
            ("/%G0", #"path "/%G0" holds a "%" not followed by two hex digits at byte 1"#),
        ])
    func badPercentEscapesAreRejected(_ path: String, _ message: String) throws {
        for base in [nil, "https://h.example/v1"] {
            let request = Self.request(scheme: "https", authority: "h.example", path: path)
            let baseURL = try base.map { try #require(URL(string: $0)) }
            let error = #expect(throws: RunwayError.self) { try Request(request, baseURL: baseURL) }
            #expect(error?.code == .invalidURL)
            #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
            #expect(error?.message.contains("pe-") == false)
        }
        // Escapes of either case are taken as they are.
        #expect(
            try Self.urlText(Self.request(path: "/a%2f%E2%82%ac?q=%3d"), baseURL: "https://h.example")
                == "https://h.example/a%2f%E2%82%ac?q=%3d")
    }

    @Test func extendedConnectIsRejected() throws {
        var request = Self.request(.connect, scheme: "https", authority: "h.example", path: "/chat")
        request.extendedConnectProtocol = "websocket"
        let error = #expect(throws: RunwayError.self) { try Request(request) }
        #expect(error?.code == .invalidRequest)
    }

    // MARK: Round trips

    @Test(
        "HTTPRequest to Request and back is the same request",
        arguments: [
            request(.get, scheme: "https", authority: "api.example.com", path: "/v1/pets?limit=10&tag=a%20b"),
            request(.post, scheme: "http", authority: "[::1]:8080", path: "/a%2Fb/%E2%82%AC"),
            request(.query, scheme: "http", authority: "127.0.0.1:9", path: "/search?q=x"),
            request(
                .delete, scheme: "https", authority: "h.example", path: "/",
                headerFields: [.setCookie: "a=1", .accept: "*/*", .setCookie: "b=2", .userAgent: "caf\u{E9}/1.0"]),
        ])
    func httpRequestRoundTrip(_ original: HTTPRequest) throws {
        let request = try Request(original, body: Data([1, 2, 3]))
        let back = try HTTPRequest(request)
        #expect(back == original)
        #expect(HeaderConversionTests.pairs(back.headerFields) == HeaderConversionTests.pairs(original.headerFields))
    }

    @Test(
        "Request to HTTPRequest and back is the same request",
        arguments: [
            "https://api.example.com/v1/pets?limit=10", "http://[::1]:8080/x%2Fy?q=%E2%82%AC", "http://127.0.0.1:65535/",
        ])
    func runwayRequestRoundTrip(_ url: String) throws {
        let headers: RunwayCore.HTTPHeaders = ["Set-Cookie": "a=1", "X-Obs": "caf\u{E9}", "Set-Cookie": "b=2"]
        let original = try Request(method: HTTPMethod(rawValue: "PROPFIND"), url, headers: headers)
        let back = try Request(HTTPRequest(original))
        #expect(back.method == original.method)
        #expect(back.url.absoluteString == original.url.absoluteString)
        #expect(back.headers == original.headers)
    }
}
