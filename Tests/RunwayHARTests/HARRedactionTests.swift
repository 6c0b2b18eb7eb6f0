import Foundation
import Runway
import RunwayHAR
import RunwayTesting
import Testing

/// Secrets found from outside in places the first redaction did not look: the HAR file hides
/// them as the log does.
@Suite struct HARRedactionTests {
    /// The entry of one call of `request`, answered with `response`, and the whole file as text.
    func record(_ request: Request, answer response: Response = Response(status: 200)) async throws -> (HAR.Entry, String) {
        let recorder = HARRecorder()
        _ = try await Pipeline(interceptors: [.har(recorder)], dispatcher: StubDispatcher { _ in response }).send(request)
        return (try #require(recorder.har().log.entries.first), String(decoding: try recorder.data(), as: UTF8.self))
    }

    @Test func urlsInRefererLinkAndRefreshHeadersAreRedacted() async throws {
        let response = Response(
            status: 200,
            headers: HTTPHeaders([
                ("Refresh", "0;URL=https://app.test/next?token=rf-1"),
                ("Link", "<https://api.test/items?page=3&access_token=lk-2>;rel=next"),
            ]))
        let request = try Request("https://api.test/a", headers: ["Referer": "https://app.test/p?access_token=rr-3&tab=info"])
        let (entry, file) = try await record(request, answer: response)
        #expect(entry.request.headers == [.init(name: "Referer", value: "https://app.test/p?access_token=<redacted>&tab=info")])
        #expect(
            entry.response.headers == [
                .init(name: "Refresh", value: "0;URL=https://app.test/next?token=<redacted>"),
                .init(name: "Link", value: "<https://api.test/items?page=3&access_token=<redacted>>;rel=next"),
            ])
        for secret in ["rf-1", "lk-2", "rr-3"] { #expect(!file.contains(secret), "\(secret) in the HAR") }
    }
}

extension HARRedactionTests {
    /// A secret after a `;` in the query is hidden in the URL and in `queryString`, where the
    /// item it is part of keeps the rest of its value.
    @Test func semicolonSeparatedQueryItemsAreRedacted() async throws {
        let (entry, file) = try await record(try Request("https://api.test/s?a=1;password=sc-1&token=sc-2&b=x;y"))
        #expect(entry.request.url == "https://api.test/s?a=1;password=<redacted>&token=<redacted>&b=x;y")
        #expect(
            entry.request.queryString == [
                .init(name: "a", value: "1;password=<redacted>"), .init(name: "token", value: "<redacted>"), .init(name: "b", value: "x;y"),
            ])
        for secret in ["sc-1", "sc-2"] { #expect(!file.contains(secret), "\(secret) in the HAR") }
    }
}

extension HARRedactionTests {
    /// A form with one line break at its end is a form, its break kept.
    @Test(arguments: ["\n", "\r\n"])
    func aFormEndingInALineBreakIsRedacted(_ lineBreak: String) async throws {
        let request = try Request(
            method: .post, "https://api.test/f", headers: ["Content-Type": "text/plain"], body: Data("password=lb-1\(lineBreak)".utf8))
        let (entry, file) = try await record(request, answer: Response(status: 200, body: Data("a=1&token=lb-2\(lineBreak)".utf8)))
        #expect(entry.request.postData?.text == "password=<redacted>\(lineBreak)")
        #expect(entry.response.content.text == "a=1&token=<redacted>\(lineBreak)")
        for secret in ["lb-1", "lb-2"] { #expect(!file.contains(secret), "\(secret) in the HAR") }
    }
}

extension HARRedactionTests {
    /// `send(api:)` takes a path, query included: a secret in it was hidden in the entry's URL
    /// and `queryString` but written as it was in `_apiName`.
    @Test func aSecretInAnAPINamesQueryIsHidden() async throws {
        let recorder = HARRecorder()
        var builder = ServiceRegistry.Builder(
            environment: .release, pipeline: Pipeline(interceptors: [.har(recorder)], dispatcher: StubDispatcher(status: 200)))
        builder.register(RecordedService())
        _ = try await builder.build().send(api: "item/7?token=ap-1&page=1;session=ap-2", of: "recorded", method: .get)
        let entry = try #require(recorder.har().log.entries.first)
        #expect(entry.apiName == "item/7?token=<redacted>&page=1;session=<redacted>")
        let file = String(decoding: try recorder.data(), as: UTF8.self)
        for secret in ["ap-1", "ap-2"] { #expect(!file.contains(secret), "\(secret) in the HAR") }
    }
}

struct RecordedService: Service {
    let id: ServiceID = "recorded"
    let baseURLs = BaseURLs("https://api.test/v1")
}
