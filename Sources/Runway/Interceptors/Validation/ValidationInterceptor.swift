import RunwayCore

/// Checks parameters before anything else sees the request, and responses before the caller
/// sees them.
///
/// Rules are looked up per call: first ``APIValidation/Key`` in the context (an API manager may
/// set it for the call), then the rules registered for `RequestContext.apiName`. A call with
/// neither passes untouched.
///
/// A request breaking a parameter rule fails with `RunwayError.Code.paramsInvalid` and
/// `RunwayError.field` naming the parameter; nothing after this interceptor runs, so nothing
/// reaches the network. A response breaking the response rule fails with
/// `RunwayError.Code.responseInvalid` and keeps the raw response. A streamed response
/// (`Response.bodyStream`) is checked by its head only (status, content type), and a refused
/// one's transfer is aborted.
///
/// ## Position
/// After logging and before the cache, retry and signing (``DefaultOrder``):
/// `logging → validation → cache → retry → signing`.
/// - Before the cache, so an invalid call is never answered from it (a disk cache may outlive a
///   rule change), and a response is checked whenever it is returned, from the network or from
///   the cache: one that breaks the response rule is never delivered as valid. The rules go down
///   to the cache with the call's context: it never stores a response that breaks the response
///   rule, and a background refresh that brings one ends as `.responseInvalid`.
/// - Before retry, so a validation failure is never retried, and before signing, so nothing
///   invalid is signed or sent.
/// ```swift
/// let validation = try ValidationInterceptor.validation([
///     "listing.rent": APIValidation(parameters: [ParameterRule("city", .required)])
/// ])
/// let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
///     validation
///     // cache, retry, signing, ...
/// }
/// ```
public struct ValidationInterceptor: Interceptor {
    /// The rules per API name.
    public let apis: [String: APIValidation]
    /// The same rules, each in the object the cache asks before it stores a response: made
    /// once, so passing them down costs a call nothing.
    private let registered: [String: RegisteredRules]

    /// Creates a validation interceptor from rules per API name.
    /// - Throws: `RunwayError` `.configuration` for an empty API name. (The rules themselves
    ///   were checked when each ``APIValidation`` was created.)
    public init(_ apis: [String: APIValidation]) throws(RunwayError) {
        if apis.keys.contains(where: \.isEmpty) {
            throw RunwayError(.configuration, "validation rules registered for an empty API name")
        }
        self.apis = apis
        self.registered = apis.mapValues(RegisteredRules.init)
    }

    public var name: String { "validation" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let rules: APIValidation
        var context = context
        if let own = context[APIValidation.Key.self] {
            // Already in the context, where the cache finds them.
            rules = own
        } else if let name = context.apiName, let registered = registered[name] {
            rules = registered.rules
            // Passed down, so the cache stores no response that breaks the rule, and a background
            // refresh (which returns past this interceptor) delivers none as valid.
            if rules.response != nil { context.ruleAcceptance = registered }
        } else {
            return try await next(request, context)
        }
        do throws(RunwayError) {
            try rules.validate(
                request, pathParameters: context[PathParameters.self] ?? [:], nullQueryParameters: context[NullQueryParameters.self] ?? [])
        } catch {
            // Refused before it went down the chain: nothing was sent.
            var failure = error
            failure.neverSent = true
            throw failure
        }
        let response = try await next(request, context)
        do {
            try rules.validate(response)
        } catch {
            // A refused streamed response is not read: abort its transfer now rather than when
            // the error is let go.
            response.bodyStream?.cancel()
            throw error
        }
        return response
    }
}

/// The rules registered for one API, as the cache asks them (``ResponseAcceptance``).
private final class RegisteredRules: ResponseAcceptance {
    let rules: APIValidation

    init(_ rules: APIValidation) {
        self.rules = rules
    }

    func refusal(of response: Response) -> RunwayError? {
        do {
            try rules.validate(response)
            return nil
        } catch {
            return RunwayError.attributing(error, to: .interceptor("validation"))
        }
    }
}

extension APIValidation {
    /// Carries the rules for one call in a `RequestContext`, overriding those registered for
    /// its API name.
    public enum Key: ContextKey {
        public typealias Value = APIValidation
    }
}

extension Interceptor where Self == ValidationInterceptor {
    /// Validates parameters and responses with rules per API name; see ``ValidationInterceptor``.
    /// - Throws: `RunwayError` `.configuration` for an empty API name.
    public static func validation(_ apis: [String: APIValidation]) throws(RunwayError) -> ValidationInterceptor {
        try ValidationInterceptor(apis)
    }
}
