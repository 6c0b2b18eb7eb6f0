import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceRegistry {
    /// Sends a request whose body you built yourself to one API of a registered service, through
    /// that service's chain: for uploads whose wire format is fixed (a batch of logged actions),
    /// where an ``APIManager`` would add the service's common parameters to the body.
    ///
    /// What a manager's call gets, this gets too: the base URL of the registry's environment, the
    /// service's common headers (a header of the same name in `headers` wins), its proxy and
    /// client certificate (unless `options` names its own), the app's interceptors (logging, retry, compression, signing, ...),
    /// token refresh and the service's own interceptors, and the reachability check. What it does not do: parameters, load
    /// policies, delivery, and the service's ``Service/error(for:json:)`` mapping — any status is
    /// a response, as from `Pipeline.send(_:context:)`.
    /// ```swift
    /// let response = try await registry.send(
    ///     api: "actions/batch", of: .analytics, headers: ["Content-Type": "application/json"], body: body)
    /// ```
    /// - Parameters:
    ///   - apiName: The API's name (as ``APIManager/apiName``), which is also its path under the
    ///     service's base URL.
    ///   - serviceID: The registered service.
    ///   - method: The HTTP method (default POST).
    ///   - headers: Headers of this call, sent after the service's common headers.
    ///   - body: The body, sent as is.
    ///   - options: Transport options.
    ///   - context: The call's context; its `RequestContext.apiName` and
    ///     `RequestContext.serviceID` are set to `apiName` and `serviceID`.
    /// - Throws: `RunwayError`: `.configuration` for an unknown service, `.invalidURL` for an API
    ///   name that makes no URL, `.noNetwork` when the registry's monitor reports the network
    ///   unreachable, or whatever the chain throws.
    public func send(
        api apiName: String, of serviceID: ServiceID, method: HTTPMethod = .post, headers: HTTPHeaders = [:],
        body: Data? = nil, options: RequestOptions = RequestOptions(), context: RequestContext = RequestContext()
    ) async throws(RunwayError) -> Response {
        let entry = try entry(serviceID)
        if let reachability, reachability.shouldFailFast(host: entry.endpoint) {
            throw RunwayError(
                .noNetwork, "the network, or \(entry.endpoint), is unreachable", stage: .service(serviceID), neverSent: true)
        }
        let request = Request(
            method: method, url: try entry.url(apiName), headers: entry.headers(merging: headers), body: body,
            options: entry.options(options))
        var context = context
        context.apiName = apiName
        context.serviceID = serviceID
        context.setService(of: entry)
        do {
            let response = try await entry.pipeline.send(request, context: context)
            reachability?.recordCall(failure: nil, host: entry.endpoint)
            return response
        } catch {
            reachability?.recordCall(failure: error, host: entry.endpoint)
            throw error
        }
    }
}
