import Foundation
import Runway
import RunwaySigning
import Testing

@Suite struct CanonicalRequestTests {
    @Test func layout() throws {
        let request = try Request(method: .post, "https://api.test/v1/a%7eb?b=2&a=1", body: Data())
        let canonical = CanonicalRequest(request, timestamp: "1700000000", nonce: "n0nce")
        #expect(
            canonical.text == """
                RUNWAY-HMAC-SHA256
                POST
                /v1/a~b
                a=1&b=2
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                1700000000
                n0nce

                """)
    }

    @Test(
        "paths are normalised: dot segments removed, each segment re-encoded; a normal path is kept as it is",
        arguments: [
            ("", "/"), ("/", "/"), ("/v1/items", "/v1/items"), ("/a-b_c~d/E.9", "/a-b_c~d/E.9"), ("//a//", "//a//"),
            ("/.hidden/...", "/.hidden/..."), ("/a./.b", "/a./.b"), ("/v1/./x", "/v1/x"), ("/v1/../x", "/x"), ("/v1/x/.", "/v1/x/"),
            ("/v1/x/..", "/v1/"), ("/.", "/"), ("/..", "/"), ("/a%7eb", "/a~b"), ("/a:b", "/a%3Ab"), ("/a%zz", "/a%zz"),
            ("/%2e%2e/x", "/../x"), ("relative/./p", "relative/p"),
            // Split at every `/` byte, whatever follows it: a combining mark, a zero-width joiner.
            ("/a/\u{301}b", "/a/%CC%81b"), ("/a%2F%CC%81b", "/a%2F%CC%81b"), ("/a\u{200D}/b", "/a%E2%80%8D/b"),
        ])
    func pathNormalisation(path: String, expected: String) {
        let canonical = CanonicalRequest(
            method: "GET", percentEncodedPath: path, percentEncodedQuery: nil, contentType: nil, body: nil, timestamp: "1", nonce: "n")
        #expect(canonical.path == expected)
    }

    @Test func serverAndClientViewsAgree() throws {
        let request = try Request("https://api.test/p%20q/r?z=%E4%B8%8A&y=1+2")
        let client = CanonicalRequest(request, timestamp: "1", nonce: "n")
        let server = CanonicalRequest(
            method: "get", percentEncodedPath: "/p%20q/r", percentEncodedQuery: "y=1%202&z=%e4%b8%8a", contentType: nil,
            body: nil, timestamp: "1", nonce: "n")
        #expect(client == server)
    }

    @Test(
        "signed parameters are the canonical form, whether the query already is one or not, form fields included",
        arguments: [
            ("", nil, nil), ("a=1", nil, nil), ("a=1&b=2", nil, nil), ("b=2&a=1", nil, nil), ("a=2&a=1", nil, nil),
            ("a=&b.c=~-_", nil, nil), ("a=1&&b=2", nil, nil), ("a=1&", nil, nil), ("flag&a=1", nil, nil), ("a==1", nil, nil),
            ("A=1&a=2", nil, nil), ("a=%41", nil, nil), ("a=x+y", nil, nil), ("b=1&a=%7E", nil, nil),
            ("a=1", "application/x-www-form-urlencoded", "c=3&b=2"),
            ("a=1", " Application/X-WWW-Form-URLEncoded ; charset=utf-8", "b=2"),
            ("a=1", "application/json", #"{"b":2}"#), ("a=1", "application/x-www-form-urlencoded", ""),
        ] as [(String, String?, String?)])
    func signedParameters(query: String, contentType: String?, body: String?) {
        let body = body.map { Data($0.utf8) }
        let canonical = CanonicalRequest(
            method: "GET", percentEncodedPath: "/", percentEncodedQuery: query, contentType: contentType, body: body, timestamp: "1",
            nonce: "n")
        #expect(canonical.parameters == RequestParameters(percentEncodedQuery: query, contentType: contentType, body: body).canonicalForm)
    }
}
