/// The one error type Runway throws.
///
/// A struct with a ``Code`` (over a private enum, so new codes never break a `switch` in user
/// code), the ``Stage`` that failed (which interceptor, the dispatcher, which API manager), a
/// human-readable message, and the underlying error. Match on codes:
/// ```swift
/// catch let error as RunwayError where error.code == .timeout { ... }
/// ```
public struct RunwayError: Error, Sendable {
    /// What kind of failure this is.
    public var code: Code
    /// Everything but the code, in one shared box: a `RunwayError` is two words, so the results
    /// and typed-throws slots that carry one through every async frame of a call stay small
    /// (the frames are allocated per call). Never mutated; a setter stores a new box.
    private var details: Details

    private final class Details: Sendable {
        let stage: Stage?
        let message: String
        let field: String?
        let response: Response?
        let underlying: (any Error)?
        let neverSent: Bool

        init(stage: Stage?, message: String, field: String?, response: Response?, underlying: (any Error)?, neverSent: Bool) {
            self.stage = stage
            self.message = message
            self.field = field
            self.response = response
            self.underlying = underlying
            self.neverSent = neverSent
        }

        func with(
            stage: Stage?? = nil, message: String? = nil, field: String?? = nil, response: Response?? = nil,
            underlying: (any Error)?? = nil, neverSent: Bool? = nil
        ) -> Details {
            Details(
                stage: stage ?? self.stage, message: message ?? self.message, field: field ?? self.field,
                response: response ?? self.response, underlying: underlying ?? self.underlying,
                neverSent: neverSent ?? self.neverSent)
        }
    }

    /// Where it failed; `nil` until the chain attributes it.
    public var stage: Stage? {
        get { details.stage }
        set { details = details.with(stage: .some(newValue)) }
    }
    /// What happened, for people.
    public var message: String {
        get { details.message }
        set { details = details.with(message: newValue) }
    }
    /// The parameter or field at fault, for validation failures.
    public var field: String? {
        get { details.field }
        set { details = details.with(field: .some(newValue)) }
    }
    /// The response, when one was received (the raw data is kept for inspection).
    public var response: Response? {
        get { details.response }
        set { details = details.with(response: .some(newValue)) }
    }
    /// The error this one wraps, if any.
    public var underlying: (any Error)? {
        get { details.underlying }
        set { details = details.with(underlying: .some(newValue)) }
    }

    /// Whether the request certainly never left this machine: no connection was made for it
    /// (refused, unreachable, a connect timeout, a name that did not resolve), so sending it
    /// again cannot repeat it at the server. `false` when it may have been sent, or nobody knows.
    /// Dispatchers set it, and so does what refuses a request before it is sent (``Request/validate()``,
    /// a manager's checks and its reachability gate, the validation interceptor);
    /// `RetryInterceptor` retries such failures for every method, when their code is one it retries.
    public var neverSent: Bool {
        get { details.neverSent }
        set { details = details.with(neverSent: newValue) }
    }

    /// Creates an error.
    public init(
        _ code: Code, _ message: String = "", stage: Stage? = nil, field: String? = nil,
        response: Response? = nil, underlying: (any Error)? = nil, neverSent: Bool = false
    ) {
        self.code = code
        details = Details(
            stage: stage, message: message, field: field, response: response, underlying: underlying, neverSent: neverSent)
    }
}

extension RunwayError {
    /// The kind of a ``RunwayError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidURL, unsupportedScheme, invalidHeader, invalidRequest, requestTooLarge
            case timeout, cannotConnect, dnsFailure, connectionLost, tls, responseTooLarge
            case tooManyRedirects, cancelled, transport, fileIO, interceptorFailed
            case paramsInvalid, responseInvalid, noNetwork, noContent, needsLogin, serverError
            case configuration
        }

        private let base: Base

        public var description: String { base.rawValue }

        /// The URL is malformed, relative, or has no host.
        public static let invalidURL = Code(base: .invalidURL)
        /// The URL's scheme is not `http` or `https`.
        public static let unsupportedScheme = Code(base: .unsupportedScheme)
        /// A header name is not a token, or a value holds CR, LF or NUL (header injection).
        public static let invalidHeader = Code(base: .invalidHeader)
        /// The request cannot be sent as it is (for example an invalid method token).
        public static let invalidRequest = Code(base: .invalidRequest)
        /// The request body is over ``RequestOptions/maxRequestBodySize``, or its URL and header
        /// fields over ``Request/maxHeadSize``.
        public static let requestTooLarge = Code(base: .requestTooLarge)
        /// A connect or total timeout expired (a connect timeout has ``RunwayError/neverSent``).
        public static let timeout = Code(base: .timeout)
        /// No connection could be made (refused, unreachable).
        public static let cannotConnect = Code(base: .cannotConnect)
        /// The host name did not resolve.
        public static let dnsFailure = Code(base: .dnsFailure)
        /// The connection broke mid-transfer (reset, closed early, truncated body).
        public static let connectionLost = Code(base: .connectionLost)
        /// TLS failed: untrusted or mismatched certificate, pin mismatch, handshake error.
        public static let tls = Code(base: .tls)
        /// The decompressed response body is over ``RequestOptions/maxResponseSize``.
        public static let responseTooLarge = Code(base: .responseTooLarge)
        /// More redirects than the ``RedirectPolicy`` allows.
        public static let tooManyRedirects = Code(base: .tooManyRedirects)
        /// The call was cancelled (task cancellation, a load policy, a released manager).
        public static let cancelled = Code(base: .cancelled)
        /// Any other transport failure; see ``RunwayError/underlying``.
        public static let transport = Code(base: .transport)
        /// A download file could not be written or moved.
        public static let fileIO = Code(base: .fileIO)
        /// An interceptor threw an error of its own type; see ``RunwayError/underlying``.
        public static let interceptorFailed = Code(base: .interceptorFailed)
        /// Parameters failed validation before the call; ``RunwayError/field`` names the field.
        public static let paramsInvalid = Code(base: .paramsInvalid)
        /// The response failed validation; ``RunwayError/response`` keeps the raw data.
        public static let responseInvalid = Code(base: .responseInvalid)
        /// The network is unreachable.
        public static let noNetwork = Code(base: .noNetwork)
        /// The call succeeded but returned nothing to show.
        public static let noContent = Code(base: .noContent)
        /// The call needs a (fresh) login or token.
        public static let needsLogin = Code(base: .needsLogin)
        /// The server reported a failure (5xx, or a business error code).
        public static let serverError = Code(base: .serverError)
        /// A component was configured wrongly (reported at registration, not on first use).
        public static let configuration = Code(base: .configuration)
    }

    /// Where in the pipeline an error arose.
    public struct Stage: Hashable, Sendable, CustomStringConvertible {
        /// The layer: `interceptor`, `dispatcher`, `manager`, `service`, ...
        public let kind: String
        /// The name of the component within that layer.
        public let name: String

        public init(kind: String, name: String) {
            self.kind = kind
            self.name = name
        }

        /// An interceptor, by its ``Interceptor/name``.
        public static func interceptor(_ name: String) -> Stage { Stage(kind: "interceptor", name: name) }
        /// The dispatcher that ends the chain.
        public static func dispatcher(_ name: String) -> Stage { Stage(kind: "dispatcher", name: name) }
        /// An API manager.
        public static func manager(_ name: String) -> Stage { Stage(kind: "manager", name: name) }

        public var description: String { "\(kind) \(name)" }
    }
}

extension RunwayError: CustomStringConvertible {
    public var description: String {
        var text = "RunwayError.\(code)"
        if let stage { text += " at \(stage)" }
        if !message.isEmpty { text += ": \(message)" }
        if let field { text += " [field \(field)]" }
        if let underlying, !(underlying is RunwayError) { text += " (\(underlying))" }
        return text
    }
}

extension RunwayError {
    /// `error` as a ``RunwayError`` attributed to `stage`, unless a deeper stage already claimed it.
    ///
    /// A `CancellationError` becomes `.cancelled`; any other foreign error becomes `fallback`
    /// with the original kept in ``underlying``.
    public static func attributing(_ error: any Error, to stage: Stage, fallback: Code = .interceptorFailed) -> RunwayError {
        if var runway = error as? RunwayError {
            if runway.stage == nil { runway.stage = stage }
            return runway
        }
        if error is CancellationError {
            return RunwayError(.cancelled, "cancelled", stage: stage, underlying: error)
        }
        return RunwayError(fallback, "\(error)", stage: stage, underlying: error)
    }
}
