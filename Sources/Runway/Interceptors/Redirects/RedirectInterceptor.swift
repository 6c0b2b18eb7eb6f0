import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Follows a call's redirects inside the chain, so each request it leads to passes the
/// interceptors after this one again: signed for its own path with a fresh nonce, routed by
/// the DNS bypass, with the cookie jar's cookies for its URL, retried on its own failures.
///
/// ```swift
/// let pipeline = Pipeline(interceptors: [.cookies(jar), try .retry(maxAttempts: 3), try .redirects(max: 5), signing],
///                         dispatcher: CurlDispatcher())
/// ```
/// A redirect the dispatcher follows (`RequestOptions.redirects` `.follow(max:)`) never comes
/// back up the chain: the next request carries the first one's signature (which covers the
/// first path, so a verifying server refuses it), and the cookies a redirect sets are lost.
/// This interceptor sees each redirect as a response and sends the next request down the chain.
///
/// - **Same origin only.** A `301`, `302`, `303`, `307` or `308` whose `Location` (resolved
///   against the request's URL) has the request's scheme, host and port is followed, and so is
///   the upgrade of a URL with `http` on its default port to `https` on its default port of the
///   same host (`http://api.example.com/x` to `https://api.example.com/x`). Any other redirect
///   comes back as the response, unfollowed: one to another host or port, from `https` to
///   `http`, to a `Location` that is not a URL or is missing. The requests
///   after this interceptor carry the call's credentials — a token, a signature and its nonce,
///   an API key — which belong to the origin the call was made for; a redirect elsewhere is a
///   new call for the app to make (or let the dispatcher follow, where the targets are trusted).
/// - **Methods** (RFC 9110 §15.4, as browsers do): a `307` or `308` sends the method and body
///   again; a `303` turns every method but `HEAD` into a `GET`, and a `301` or `302` turns a
///   `POST` into a `GET`; such a `GET` has no body and no `Content-Type`, `Content-Length`,
///   `Content-Encoding`, `Content-Language` or `Content-Location`. Every other header goes on.
///   A streamed body that can be sent once (`RequestBodyStream.isReplayable` false) was read by
///   the first request: a redirect that would send it again comes back as the response.
/// - **Limits.** More than `maxRedirects` redirects in one call fail with `.tooManyRedirects`
///   (the last redirect is the error's `response`), before the next request is sent.
/// - An error of a request a redirect led to is never `neverSent`: the call sent the request
///   before it, which the server may have acted on, so retry treats it as sent.
/// - A redirect's streamed body (`Response.bodyStream`) is dropped unread, its transfer aborted.
/// - Each redirect followed goes to the ``Observers`` in the call's context first: a logging
///   interceptor before this one logs it with where it leads.
/// - A request that asks the dispatcher to follow redirects (`RequestOptions.redirects`) is
///   passed on as it is.
///
/// ## Where it belongs
/// **After retry, before compression, signing and the DNS bypass** (see ``DefaultOrder``): each
/// request it sends is compressed, signed and routed again, and a failed attempt is retried
/// from the call's first URL, within the call's total timeout. After the cookie interceptor,
/// which keeps what each redirect sets and sends the jar's cookies with the next request. The
/// cache and logging see the call: the request the app made and the response it ends with.
public struct RedirectInterceptor: PerAttemptInterceptor {
    /// A redirect about to be followed, for observers (logs, metrics).
    public struct Event: Sendable {
        /// Which redirect of the call it is (1 for the first).
        public var redirect: Int
        /// The redirect's status.
        public var status: Int
        /// The method of the request it leads to.
        public var method: HTTPMethod
        /// The URL of the request it leads to.
        public var url: URL
        /// The call's context.
        public var context: RequestContext

        /// Creates an event (the interceptor makes these; tests and adapters may too).
        public init(redirect: Int, status: Int, method: HTTPMethod, url: URL, context: RequestContext) {
            self.redirect = redirect
            self.status = status
            self.method = method
            self.url = url
            self.context = context
        }
    }

    /// Observers of one call's redirects, kept in its `RequestContext` by the interceptors before
    /// this one in the chain (logging adds its own, so each redirect followed reaches the log
    /// without wiring). Each is called before the request a redirect leads to is sent.
    public enum Observers: ContextKey {
        public typealias Value = [@Sendable (Event) -> Void]
    }

    /// The most redirects one call follows.
    public let maxRedirects: Int

    /// `"redirects"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "redirects" }

    /// Creates the interceptor.
    /// - Parameter maxRedirects: The most redirects one call follows; at least 1.
    /// - Throws: `RunwayError` `.configuration` when `maxRedirects` is less than 1.
    public init(maxRedirects: Int = 5) throws(RunwayError) {
        guard maxRedirects >= 1 else {
            throw RunwayError(
                .configuration, "maxRedirects must be at least 1, not \(maxRedirects) (leave the interceptor out to follow none)",
                field: "maxRedirects")
        }
        self.maxRedirects = maxRedirects
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        guard request.options.redirects.maxRedirects == 0 else { return try await next(request, context) }
        // Each request reports to the call's progress stream, which ends with the last.
        return try await CallProgress.spanning(request) { request in try await following(request, context: context, next: next) }
    }

    private func following(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        var followed = 0
        while true {
            let response: Response
            do {
                response = try await next(request, context)
            } catch var error as RunwayError where followed > 0 && error.neverSent {
                // The call did send: the request that was redirected, which the server may have
                // acted on (a 303 after a POST). Retry must not take it for never sent.
                error.neverSent = false
                throw error
            }
            guard let hop = Self.request(after: response, to: request) else { return response }
            // A redirect's body is not the call's answer: abort its transfer unread.
            response.bodyStream?.cancel()
            guard followed < maxRedirects else {
                throw RunwayError(
                    .tooManyRedirects,
                    "more than \(maxRedirects) redirects: the next (\(response.status)) leads to \(hop.url.path(percentEncoded: true))",
                    stage: .interceptor(name), response: response)
            }
            followed += 1
            if let observers = context[Observers.self] {
                let event = Event(redirect: followed, status: response.status, method: hop.method, url: hop.url, context: context)
                for observer in observers { observer(event) }
            }
            // The cookie jar keeps what the redirect set, and the next request carries the jar's
            // cookies for its own URL.
            request = ResendHandlers.request(hop, resentAfter: response, in: context)
        }
    }

    /// The fields that describe a body, dropped with it when a redirect turns a request into a `GET`.
    static let bodyFields = ["Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location"]

    /// The request `response` redirects `request` to, or `nil` when it is not a redirect this
    /// interceptor follows.
    static func request(after response: Response, to request: Request) -> Request? {
        guard RedirectPolicy.isFollowed(response.status), let location = response.headers["Location"], !location.isEmpty,
            let target = URL(string: Request.encodingWhatURLsCannotHold(location), relativeTo: request.url)?.absoluteURL,
            target.isSameOrigin(as: request.url)
                || isUpgrade(target, of: request.url)
        else { return nil }
        var next = request
        next.url = target
        let becomesGet =
            switch response.status {
            case 303: request.method != .head
            case 301, 302: request.method == .post
            default: false
            }
        if becomesGet {
            next.method = .get
            next.body = nil
            next.bodyStream = nil
            for field in bodyFields { next.headers.removeAll(named: field) }
        } else if request.bodyStream?.isReplayable == false {
            return nil
        }
        return next
    }

    /// Whether `target` is `url` upgraded from `http` on port 80 to `https` on port 443.
    static func isUpgrade(_ target: URL, of url: URL) -> Bool {
        url.scheme?.lowercased() == "http" && target.scheme?.lowercased() == "https" && isSameHost(target, url)
            && port(of: url) == 80 && port(of: target) == 443
    }

    private static func isSameHost(_ target: URL, _ url: URL) -> Bool {
        guard let host = url.host(percentEncoded: true)?.lowercased() else { return false }
        return target.host(percentEncoded: true)?.lowercased() == host
    }

    /// The URL's port, or its scheme's default.
    private static func port(of url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}

extension Interceptor where Self == RedirectInterceptor {
    /// Follows up to `max` redirects to the call's own origin in the chain; see
    /// ``RedirectInterceptor``.
    /// - Throws: `RunwayError` `.configuration` when `max` is less than 1.
    public static func redirects(max: Int = 5) throws(RunwayError) -> RedirectInterceptor {
        try RedirectInterceptor(maxRedirects: max)
    }
}
