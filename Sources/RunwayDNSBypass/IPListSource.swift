import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The API that hands out the current IP list, fetched at most once per refresh interval.
///
/// It answers `GET url` with
/// ```json
/// {"hosts": {"api.example.com": ["203.0.113.7", "198.51.100.9:8443"]}}
/// ```
/// Fetch it over HTTPS with normal DNS: the list decides where traffic goes, so it must come
/// from the real host.
public struct IPListSource: Sendable {
    /// Where the list is fetched from.
    public let url: URL
    let dispatcher: any Dispatcher
    let options: RequestOptions

    /// Creates a source.
    /// - Parameters:
    ///   - url: The IP-list API.
    ///   - dispatcher: What sends the request (usually the app's `CurlDispatcher`).
    ///   - options: Timeouts and TLS settings for the fetch.
    public init(url: URL, dispatcher: any Dispatcher, options: RequestOptions = RequestOptions()) {
        self.url = url
        self.dispatcher = dispatcher
        self.options = options
    }

    private struct Body: Decodable {
        var hosts: [String: [String]]
    }

    /// Fetches and parses the list.
    func fetch() async -> Result<[String: [Endpoint]], DNSBypassError> {
        let response: Response
        do {
            response = try await dispatcher.dispatch(Request(method: .get, url: url, options: options), context: RequestContext())
        } catch {
            return .failure(.ipListFetchFailed("\(error)"))
        }
        guard response.isSuccess else { return .failure(.ipListFetchFailed("status \(response.status)")) }
        guard let body = try? JSONDecoder().decode(Body.self, from: response.body) else {
            return .failure(.ipListInvalid("the body is not {\"hosts\": {host: [address]}}"))
        }
        do {
            let hosts = try DNSBypass.Configuration.parse(body.hosts)
            return hosts.isEmpty ? .failure(.ipListInvalid("no hosts")) : .success(hosts)
        } catch {
            return .failure(.ipListInvalid(error.message))
        }
    }
}
