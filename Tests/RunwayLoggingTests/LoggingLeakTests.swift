import Foundation
import Logging
import Runway
import RunwayLogging
import RunwayTesting
import Testing

/// Secrets found from outside in places the first redaction did not look.
extension LoggingInterceptorTests {
    /// The URLs a `Referer`, a `Link` (each `<…>`) and a `Refresh` (its `url=`) name lose their
    /// secret query values; the rest of each value is as it was.
    @Test func urlsInRefererLinkAndRefreshHeadersAreRedacted() async throws {
        let stub = StubDispatcher { _ in
            Response(
                status: 200,
                headers: HTTPHeaders([
                    ("Refresh", "5; url='https://app.test/next?token=rf-1&page=2'"),
                    ("Link", #"<https://api.test/items?access_token=lk-2&page=3>; rel="next", </items?page=1>; rel="first""#),
                ]))
        }
        let request = try Request("https://api.test/a", headers: ["Referer": "https://app.test/p?access_token=rr-3&tab=info"])
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(request)
        #expect(text.contains("-H 'Referer: https://app.test/p?access_token=<redacted>&tab=info'"), "\(text)")
        #expect(text.contains("Refresh: 5; url='https://app.test/next?token=<redacted>&page=2'"), "\(text)")
        #expect(
            text.contains(#"Link: <https://api.test/items?access_token=<redacted>&page=3>; rel="next", </items?page=1>; rel="first""#),
            "\(text)")
        for secret in ["rf-1", "lk-2", "rr-3"] { #expect(!text.contains(secret), "\(secret) reached the log") }
    }
}
