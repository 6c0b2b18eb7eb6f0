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

    @Test func serverAndClientViewsAgree() throws {
        let request = try Request("https://api.test/p%20q/r?z=%E4%B8%8A&y=1+2")
        let client = CanonicalRequest(request, timestamp: "1", nonce: "n")
        let server = CanonicalRequest(
            method: "get", percentEncodedPath: "/p%20q/r", percentEncodedQuery: "y=1%202&z=%e4%b8%8a", contentType: nil,
            body: nil, timestamp: "1", nonce: "n")
        #expect(client == server)
    }
}
