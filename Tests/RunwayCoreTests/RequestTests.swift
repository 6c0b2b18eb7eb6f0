import Foundation
import Runway
import Testing

@Suite("Request")
struct RequestTests {
    @Test func aPrintedRequestShowsNoCredentialsQueryOrPathParameters() throws {
        let request = try Request(
            method: .post, "http://u:REQPASS@127.0.0.1:8080/x;jsessionid=SESSION/y?token=REQTOKEN#frag",
            headers: ["Authorization": "Bearer REQAUTH"])
        let text = "\(request)"
        #expect(text == "POST http://…@127.0.0.1:8080/x;…/y?…", "\(text)")
        for secret in ["REQPASS", "REQTOKEN", "SESSION", "REQAUTH", "frag"] { #expect(!text.contains(secret), "\(secret)") }
        #expect("\(try Request("https://api.test/v1/items"))" == "GET https://api.test/v1/items")
    }

    @Test func aURLStringKeepsItsEscapesAndItsHost() throws {
        let request = try Request("http://h.test/p%2Fq/[x]{y}?x=%2F&b=a|b&u=é#f^")
        #expect(request.url.absoluteString == "http://h.test/p%2Fq/%5Bx%5D%7By%7D?x=%2F&b=a%7Cb&u=%C3%A9#f%5E")
        let v6 = try Request("http://[::1]:8080/a[b]?c=%5B")
        #expect(v6.url.host == "::1")
        #expect(v6.url.absoluteString == "http://[::1]:8080/a%5Bb%5D?c=%5B")
        // A relative reference (a redirect's `Location`): "://" in its query names no authority.
        #expect(Request.encodingWhatURLsCannotHold("?a=%41&u=http://[x]") == "?a=%41&u=http://%5Bx%5D")
        #expect(Request.encodingWhatURLsCannotHold("/p#f://[x]") == "/p#f://%5Bx%5D")
        // Every byte from 0x21 to 0x7E: what a path and a query hold as it is stays, the rest is escaped.
        let printable = String(decoding: (0x21...0x7E).map { UInt8($0) }.filter { $0 != UInt8(ascii: "%") }, as: UTF8.self)
        #expect(
            Request.encodingWhatURLsCannotHold("/" + printable)
                == "/!%22#$&'()*+,-./0123456789:;%3C=%3E?@ABCDEFGHIJKLMNOPQRSTUVWXYZ%5B%5C%5D%5E_%60abcdefghijklmnopqrstuvwxyz%7B%7C%7D~")
        // Nothing to encode: the text as it is.
        #expect(try Request("https://h.test/a%20b?c=d&e=%41").url.absoluteString == "https://h.test/a%20b?c=d&e=%41")
    }

    @Test(
        "malformed and relative URL strings are .invalidURL",
        arguments: ["", "not a url", "/relative/path", "http://", "http:///nohost", "https://exa mple.com/"])
    func invalidURLs(_ string: String) {
        #expect {
            let request = try Request(string)
            try request.validate()
        } throws: { ($0 as? RunwayError)?.code == .invalidURL && ($0 as? RunwayError)?.neverSent == true }
    }

    @Test(
        "schemes other than http and https are .unsupportedScheme",
        arguments: ["ftp://example.com/", "file:///etc/passwd", "app://listing/detail"])
    func unsupportedSchemes(_ string: String) {
        #expect { try Request(string) } throws: {
            ($0 as? RunwayError)?.code == .unsupportedScheme && ($0 as? RunwayError)?.neverSent == true
        }
    }

    @Test("a URL set after the request was made is checked again when it is sent, in the copy that changed")
    func aURLSetLaterIsCheckedAgain() throws {
        // The string initializer checks its URL once; validate() skips that check until the URL
        // changes.
        let checked = try Request("https://example.com/a")
        var otherScheme = checked
        otherScheme.url = try #require(URL(string: "ftp://example.com/a"))
        #expect { try otherScheme.validate() } throws: { ($0 as? RunwayError)?.code == .unsupportedScheme }
        var noPort = checked
        noPort.url = try #require(URL(string: "https://example.com:70000/a"))
        #expect { try noPort.validate() } throws: { ($0 as? RunwayError)?.code == .invalidURL }
        var changedTwice = otherScheme
        changedTwice.headers.add(name: "X-Trace", value: "1")
        #expect { try changedTwice.validate() } throws: { ($0 as? RunwayError)?.code == .unsupportedScheme }
        try checked.validate()
        // Made from a URL value: checked when sent.
        let fromURL = Request(url: try #require(URL(string: "file:///etc/passwd")))
        #expect { try fromURL.validate() } throws: { ($0 as? RunwayError)?.code == .unsupportedScheme }
        var mended = otherScheme
        mended.url = checked.url
        try mended.validate()
    }

    @Test("CR, LF or NUL in a header value is .invalidHeader", arguments: ["a\r\nInjected: yes", "a\nb", "a\rb", "a\u{0}b"])
    func headerInjection(_ value: String) throws {
        let request = try Request("https://example.com/", headers: ["X-Value": value])
        #expect { try request.validate() } throws: { ($0 as? RunwayError)?.code == .invalidHeader }
    }

    @Test("a header name that is not a token is .invalidHeader", arguments: ["Bad Name", "Bad:Name", ""])
    func badHeaderName(_ name: String) throws {
        var request = try Request("https://example.com/")
        request.headers.add(name: name, value: "v")
        #expect { try request.validate() } throws: { ($0 as? RunwayError)?.code == .invalidHeader }
    }

    @Test("a header name is valid exactly when every byte is an RFC 9110 tchar")
    func everyByteOfAHeaderName() throws {
        let tchars = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            var request = try Request("https://example.com/")
            request.headers.add(name: String(decoding: [UInt8(ascii: "X"), byte], as: UTF8.self), value: "v")
            let valid = (try? request.validate()) != nil
            #expect(valid == tchars.contains(byte), "byte \(byte)")
        }
    }

    @Test(
        "a space or control character in a URL string is .invalidURL, never percent-encoded on the caller's behalf",
        arguments: [
            "http://h/echo\r\nX-Evil: 1", "http://h/echo\nX", "http://h/a\tb", "http://h/a\u{0}b", "http://h/a\u{7F}b",
            "http://h/a b", "http://h/a?q=1 2", "http://h/a#x y", " http://h/a", "http://h/a\u{1B}[31m",
        ])
    func controlCharactersInURLStrings(_ string: String) {
        #expect {
            try Request(string)
        } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .invalidURL && error.message.contains("percent-encode")
        }
    }

    @Test("escapes in a URL string are kept as written")
    func escapesPass() throws {
        let request = try Request("http://h/a%20b?q=%0D%0A&r=x%7Fy")
        #expect(request.url.absoluteString == "http://h/a%20b?q=%0D%0A&r=x%7Fy")
        try request.validate()
    }

    @Test(
        "a timeout of zero or below is .configuration before any I/O",
        arguments: [
            (Duration.zero, Duration?.some(.seconds(1))), (.seconds(-1), .seconds(1)), (.seconds(1), .zero),
            (.seconds(1), .milliseconds(-5)),
        ])
    func nonPositiveTimeouts(connect: Duration, total: Duration?) throws {
        var options = RequestOptions()
        options.connectTimeout = connect
        options.timeout = total
        let request = try Request("https://example.com/", options: options)
        #expect { try request.validate() } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .configuration && error.field?.hasPrefix("options.") == true
        }
    }

    @Test("a negative size limit is .configuration before any I/O, naming the option")
    func negativeSizeLimits() throws {
        var response = RequestOptions()
        response.maxResponseSize = -1
        var body = RequestOptions()
        body.maxRequestBodySize = -1
        for (options, field) in [(response, "options.maxResponseSize"), (body, "options.maxRequestBodySize")] {
            let error = #expect(throws: RunwayError.self) { try Request("https://example.com/", options: options).validate() }
            #expect(error?.code == .configuration)
            #expect(error?.field == field)
        }
        var zero = RequestOptions()
        zero.maxResponseSize = 0
        try Request("https://example.com/", options: zero).validate()
    }

    @Test("no total timeout (nil) is valid")
    func noTotalTimeout() throws {
        var options = RequestOptions()
        options.timeout = nil
        try Request("https://example.com/", options: options).validate()
    }

    @Test("a request head over Request.maxHeadSize is .requestTooLarge and says it is the request's")
    func hugeRequestHead() throws {
        let fits = try Request("https://example.com/", headers: ["X-Big": String(repeating: "a", count: Request.maxHeadSize - 100)])
        try fits.validate()
        let request = try Request("https://example.com/", headers: ["X-Big": String(repeating: "a", count: 1 << 20)])
        #expect { try request.validate() } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .requestTooLarge && error.message.contains("request's URL and header fields")
        }
    }

    @Test("a body over the limit is .requestTooLarge")
    func bodyLimit() throws {
        var options = RequestOptions()
        options.maxRequestBodySize = 10
        let request = try Request(method: .post, "https://example.com/", body: Data(count: 11), options: options)
        #expect { try request.validate() } throws: { ($0 as? RunwayError)?.code == .requestTooLarge }
    }

    @Test("an invalid method token is .invalidRequest")
    func badMethod() throws {
        let request = try Request(method: HTTPMethod(rawValue: "GE T"), "https://example.com/")
        #expect { try request.validate() } throws: { ($0 as? RunwayError)?.code == .invalidRequest }
    }

    @Test("headers are case-insensitive, ordered, and setting replaces every field of a name")
    func headers() {
        var headers: HTTPHeaders = ["Accept": "a", "X-Multi": "1"]
        headers.add(name: "x-multi", value: "2")
        #expect(headers.values(for: "X-MULTI") == ["1", "2"])
        headers["X-Multi"] = "3"
        #expect(headers.values(for: "x-multi") == ["3"])
        headers["accept"] = nil
        #expect(headers["Accept"] == nil)
        #expect(headers.count == 1)
    }

    @Test("methods are upper-cased and know whether they are idempotent")
    func methods() {
        #expect(HTTPMethod(rawValue: "get") == .get)
        #expect(HTTPMethod.put.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent)
    }

    @Test("errors describe their code, stage and cause")
    func errorDescription() {
        let error = RunwayError(.timeout, "took too long", stage: .dispatcher("curl"))
        #expect("\(error)" == "RunwayError.timeout at dispatcher curl: took too long")
    }

    @Test(
        "a URL refused at creation is named without what its credentials, query or fragment hold",
        arguments: [
            "http:///echo?token=SECRET", "http://SECRET-U:SECRET-P@127.0.0.1/a b?token=SECRET", "ftp//x?token=SECRET",
            "http://user:SE/CRET@host/x?token=SECRET",
        ])
    func refusedURLsKeepTheirSecrets(_ text: String) {
        do {
            _ = try Request(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(!"\(error)".contains("SECRET") && !"\(error)".contains("CRET"), "\(error)")
        }
    }

    @Test func errorTextKeepsHostPortAndPathButNotCredentials() {
        #expect(RunwayError.text(forURL: "http://host:8080/users/@me?token=S") == "http://host:8080/users/@me?…")
        #expect(RunwayError.text(forURL: "https://u:p@host/x#frag") == "https://…@host/x#…")
        #expect(RunwayError.text(forURL: "http://user:SE/CRET@host/x") == "http://…@host/x")
        // What the user information hid stays marked: this host is "evil" to a URL parser.
        #expect(RunwayError.text(forURL: "http://127.0.0.1:8080\\@evil/") == "http://…@evil/")
        #expect(RunwayError.text(forURL: "not a url") == "not a url")
        #expect(RunwayError.text(forURL: "https://h;x/a;sid=S/b;c/?q") == "https://h;x/a;…/b;…/?…")
    }

    @Test func aProxyURLThatIsNotOneIsNamedWithoutItsPassword() {
        do {
            _ = try Proxy(url: "http://puser:SECRET/PROXY@127.0.0.1:3128 x")
            Issue.record("accepted")
        } catch {
            #expect(!"\(error)".contains("SECRET") && !"\(error)".contains("PROXY"), "\(error)")
        }
    }

    @Test(
        "a no_proxy block of addresses names every address in it, and no other",
        arguments: [
            ("127.0.0.0/8", "http://127.0.0.1/", true), ("127.0.0.0/8", "http://127.255.3.4/", true),
            ("127.0.0.0/8", "http://128.0.0.1/", false), ("10.1.0.0/16", "http://10.1.200.3/", true),
            ("10.1.0.0/16", "http://10.2.0.1/", false), ("192.168.1.128/25", "http://192.168.1.200/", true),
            ("192.168.1.128/25", "http://192.168.1.100/", false), ("0.0.0.0/0", "http://203.0.113.9/", true),
            ("fd00::/8", "http://[fd12::1]/", true), ("fd00::/8", "http://[fe80::1]/", false),
            ("::1/128", "http://[::1]/", true), ("127.0.0.0/8", "http://localhost/", false),
            ("127.0.0.0/33", "http://127.0.0.1/", false), ("127.0.0.0/x", "http://127.0.0.1/", false),
            ("fd00::/8", "http://127.0.0.1/", false), (" example.com, 10.0.0.0/8 ", "http://10.9.9.9/", true),
        ])
    func noProxyBlocks(_ list: String, _ url: String, _ excluded: Bool) throws {
        let server = try Proxy.environment.server(
            for: try #require(URL(string: url)), environment: ["http_proxy": "http://127.0.0.1:3128", "no_proxy": list])
        #expect((server == nil) == excluded)
    }
}
