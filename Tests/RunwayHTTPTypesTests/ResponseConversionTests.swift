import Foundation
import HTTPTypes
import RunwayCore
import RunwayHTTPTypes
import Testing

/// `Response` to `HTTPResponse` and back: status, reason phrase, header fields.
@Suite struct ResponseConversionTests {
    static let headers = RunwayCore.HTTPHeaders([
        ("Content-Type", "application/json"), ("Set-Cookie", "a=1; Path=/"), ("Vary", "Accept"),
        ("Set-Cookie", "b=2; Secure"), ("X-Obs", "caf\u{E9} \u{2615}"),
    ])

    @Test func statusReasonPhraseAndFieldsInOrder() throws {
        let response = Response(status: 201, headers: Self.headers, body: Data("{}".utf8))
        let converted = try HTTPResponse(response)
        #expect(converted.status == .created)
        #expect(converted.status.reasonPhrase == "Created")
        #expect(
            HeaderConversionTests.pairs(converted.headerFields) == [
                "Content-Type: application/json", "Set-Cookie: a=1; Path=/", "Vary: Accept", "Set-Cookie: b=2; Secure",
                "X-Obs: caf\u{E9} \u{2615}",
            ])
        #expect(converted.headerFields[values: .setCookie] == ["a=1; Path=/", "b=2; Secure"])
    }

    @Test(
        "every named status gets its standard reason phrase",
        arguments: [
            (100, "Continue"), (200, "OK"), (204, "No Content"), (304, "Not Modified"), (404, "Not Found"),
            (418, ""), (429, "Too Many Requests"), (503, "Service Unavailable"), (599, ""), (999, ""),
        ])
    func standardReasonPhrases(_ code: Int, _ phrase: String) throws {
        let converted = try HTTPResponse(Response(status: code))
        #expect(converted.status.code == code)
        #expect(converted.status.reasonPhrase == phrase)
    }

    @Test func aReasonPhraseOfYourOwn() throws {
        let converted = try HTTPResponse(Response(status: 299), reasonPhrase: "Mostly Fine \u{E9}")
        #expect(converted.status.code == 299)
        #expect(converted.status.reasonPhrase == "Mostly Fine \u{E9}")
    }

    @Test func aReasonPhraseWithAControlCharacterIsRejectedNotBlanked() {
        let error = #expect(throws: RunwayError.self) { try HTTPResponse(Response(status: 200), reasonPhrase: "OK\r\nX-Injected: 1") }
        #expect(error?.code == .responseInvalid)
    }

    @Test("a status that is not three digits is .responseInvalid, with the response", arguments: [0, 42, 99, 1000, -1, Int.max])
    func statusOutOfRange(_ status: Int) {
        let error = #expect(throws: RunwayError.self) { try HTTPResponse(Response(status: status, body: Data("raw".utf8))) }
        #expect(error?.code == .responseInvalid)
        #expect(error?.response?.body == Data("raw".utf8))
    }

    @Test func aHeaderFieldThatCannotBeAnHTTPFieldIsResponseInvalid() {
        let response = Response(status: 200, headers: RunwayCore.HTTPHeaders([("Bad Name", "x")]))
        let error = #expect(throws: RunwayError.self) { try HTTPResponse(response) }
        #expect(error?.code == .responseInvalid)
        #expect(error?.field == "Bad Name")
        #expect(error?.response?.status == 200)
        #expect((error?.underlying as? RunwayError)?.code == .invalidHeader)
    }

    @Test func httpResponseToResponseKeepsStatusFieldsAndBody() throws {
        let original = HTTPResponse(
            status: .notFound, headerFields: [.contentType: "text/plain", .setCookie: "a=1", .setCookie: "b=2", .cacheControl: "no-store"])
        let response = try Response(original, body: Data("missing".utf8))
        #expect(response.status == 404)
        #expect(response.body == Data("missing".utf8))
        #expect(response.origin == .network)
        #expect(
            HeaderConversionTests.pairs(response.headers) == [
                "Content-Type: text/plain", "Set-Cookie: a=1", "Set-Cookie: b=2", "Cache-Control: no-store",
            ])
        #expect(try HTTPResponse(response) == original)
    }

    @Test("Response to HTTPResponse and back is the same response", arguments: [200, 204, 301, 418, 503])
    func roundTrip(_ status: Int) throws {
        let original = Response(status: status, headers: Self.headers, body: Data("body".utf8))
        let back = try Response(HTTPResponse(original), body: original.body)
        #expect(back.status == original.status)
        #expect(back.headers == original.headers)
        #expect(back.body == original.body)
    }
}
