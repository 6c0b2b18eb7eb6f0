import Foundation
import HTTPTypes
import RunwayCore
import RunwayHTTPTypes
import Testing

/// Header fields and methods, both ways.
@Suite struct HeaderConversionTests {
    /// Every field of `fields` as name and value, in order.
    static func pairs(_ fields: HTTPFields) -> [String] {
        fields.map { "\($0.name.rawName): \($0.value)" }
    }

    /// Every field of `headers` as name and value, in order.
    static func pairs(_ headers: RunwayCore.HTTPHeaders) -> [String] {
        headers.map { "\($0.name): \($0.value)" }
    }

    @Test func orderNamesAndRepeatedFieldsAreKeptBothWays() throws {
        let headers: RunwayCore.HTTPHeaders = [
            "Accept": "application/json", "Set-Cookie": "a=1; Path=/", "X-Trace": "t1",
            "Set-Cookie": "b=2; HttpOnly", "accept": "text/plain", "X-EMPTY": "",
        ]
        let fields = try HTTPFields(headers)
        #expect(
            Self.pairs(fields) == [
                "Accept: application/json", "Set-Cookie: a=1; Path=/", "X-Trace: t1", "Set-Cookie: b=2; HttpOnly",
                "accept: text/plain", "X-EMPTY: ",
            ])
        #expect(fields[values: .setCookie] == ["a=1; Path=/", "b=2; HttpOnly"])
        #expect(fields[values: .accept] == ["application/json", "text/plain"])
        let back = try RunwayCore.HTTPHeaders(fields)
        #expect(back == headers)
    }

    @Test(
        "values keep their bytes: obs-text, whitespace, controls other than CR, LF and NUL",
        arguments: [
            "café ☕", "naïve\u{A0}text", "\u{FFFD}", " padded\t", "tab\there", "bell\u{07}", "del\u{7F}", "a,b, c",
        ])
    func valuesKeepTheirBytes(_ value: String) throws {
        let fields = try HTTPFields(RunwayCore.HTTPHeaders([("X-Value", value)]))
        #expect(Array(fields[0].value.utf8) == Array(value.utf8))
        #expect(try RunwayCore.HTTPHeaders(fields)["X-Value"] == value)
    }

    @Test(
        "a name that is not a token is .invalidHeader, naming it",
        arguments: [
            "Bad Name", "", "X:Y", "Name\r\nInjected", "é", "(comment)",
        ])
    func badNames(_ name: String) {
        let error = #expect(throws: RunwayError.self) { try HTTPFields(RunwayCore.HTTPHeaders([(name, "v")])) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.field == name)
    }

    @Test("a pseudo-header is never an ordinary header field", arguments: [":authority", ":path", ":status", ":method"])
    func pseudoHeadersAreRejected(_ name: String) {
        let error = #expect(throws: RunwayError.self) { try HTTPFields(RunwayCore.HTTPHeaders([(name, "x")])) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.message.contains("pseudo-header") == true)
        #expect(error?.field == name)
    }

    @Test func moreFieldsThanHTTPFieldsHoldsIsAnErrorNotATrap() throws {
        let most = Int(UInt16.max) - 1
        #expect(try HTTPFields(RunwayCore.HTTPHeaders(Array(repeating: ("X-A", "1"), count: most))).count == most)
        let error = #expect(throws: RunwayError.self) {
            try HTTPFields(RunwayCore.HTTPHeaders(Array(repeating: ("X-A", "1"), count: most + 1)))
        }
        #expect(error?.code == .invalidHeader)
    }

    @Test("CR, LF or NUL in a value is .invalidHeader, never a space", arguments: ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"])
    func injectionIsRejected(_ value: String) {
        let error = #expect(throws: RunwayError.self) { try HTTPFields(RunwayCore.HTTPHeaders([("X-Value", value)])) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.field == "X-Value")
    }

    @Test func aValueThatIsNotUTF8IsRejectedNotReplaced() throws {
        // 0xE9 alone is obs-text (ISO-8859-1 "é"): a valid field value, but no String holds it.
        let fields = HTTPFields([HTTPField(name: try #require(HTTPField.Name("X-Latin1")), value: [0x63, 0x61, 0x66, 0xE9] as [UInt8])])
        let error = #expect(throws: RunwayError.self) { try RunwayCore.HTTPHeaders(fields) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.field == "X-Latin1")
        #expect(error?.message.contains("UTF-8") == true)
    }

    @Test func methodsBothWaysIncludingExtensionMethods() throws {
        let methods: [(HTTPMethod, HTTPRequest.Method)] = [
            (.get, .get), (.head, .head), (.post, .post), (.put, .put), (.patch, .patch), (.delete, .delete),
            (.options, .options), (HTTPMethod(rawValue: "QUERY"), .query),
            (HTTPMethod(rawValue: "PROPFIND"), try #require(HTTPRequest.Method("PROPFIND"))),
        ]
        for (runway, httpTypes) in methods {
            #expect(try HTTPRequest.Method(runway) == httpTypes)
            #expect(try HTTPMethod(httpTypes) == runway)
        }
    }

    @Test func aLowerCaseMethodIsRejectedNotUpperCased() throws {
        let method = try #require(HTTPRequest.Method("propfind"))
        let error = #expect(throws: RunwayError.self) { try HTTPMethod(method) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("propfind") == true)
    }

    @Test func aMethodThatIsNotATokenIsInvalidRequest() {
        let error = #expect(throws: RunwayError.self) { try HTTPRequest.Method(HTTPMethod(rawValue: "BAD METHOD")) }
        #expect(error?.code == .invalidRequest)
    }
}
