/// The one error type the mediator throws.
///
/// A struct with a ``Code`` over a private enum (new codes never break a `switch` in user code),
/// the URL, target and action involved, the registration sources of both sides of a conflict,
/// and the underlying error. Match on codes:
/// ```swift
/// catch let error as MediatorError where error.code == .notFound { ... }
/// ```
public struct MediatorError: Error, Sendable {
    /// What kind of failure this is.
    public var code: Code
    /// What happened, for people.
    public var message: String
    /// The URL being opened or parsed, if any.
    public var url: String?
    /// The target involved, if any.
    public var target: String?
    /// The action involved, if any.
    public var action: String?
    /// The parameter at fault, for parameter errors.
    public var field: String?
    /// Where the registrations involved were declared (both sides of a duplicate or conflict).
    public var sources: [String]
    /// The error this one wraps (an action's or an interceptor's own error).
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, url: String? = nil, target: String? = nil, action: String? = nil,
        field: String? = nil, sources: [String] = [], underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.url = url
        self.target = target
        self.action = action
        self.field = field
        self.sources = sources
        self.underlying = underlying
    }
}

extension MediatorError {
    /// The kind of a ``MediatorError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedURL, malformedPattern, notFound, remoteCallForbidden
            case duplicateTarget, duplicateAction, conflictingRoute, invalidRegistration
            case parameterMissing, parameterInvalid, unexpectedResult
            case actionFailed, interceptorFailed, cannotBuildURL, lifecycle, cancelled, callDepthExceeded
        }

        private let base: Base

        public var description: String { base.rawValue }

        /// The URL string is not a valid mediator URL (bad scheme, bad escape, control bytes, ...).
        public static let malformedURL = Code(base: .malformedURL)
        /// A route pattern could not be parsed (reported at registration).
        public static let malformedPattern = Code(base: .malformedPattern)
        /// No target, action or route matched, and no fallback handled the call.
        public static let notFound = Code(base: .notFound)
        /// A remote call (a URL from outside) tried to reach a local-only action.
        public static let remoteCallForbidden = Code(base: .remoteCallForbidden)
        /// Two targets were registered under the same name; ``MediatorError/sources`` names both.
        public static let duplicateTarget = Code(base: .duplicateTarget)
        /// A target declared the same action twice; ``MediatorError/sources`` names both.
        public static let duplicateAction = Code(base: .duplicateAction)
        /// Two routes match exactly the same URLs; ``MediatorError/sources`` names both.
        public static let conflictingRoute = Code(base: .conflictingRoute)
        /// A registration is invalid (bad name, unknown converter, unknown fallback, module cycle).
        public static let invalidRegistration = Code(base: .invalidRegistration)
        /// A required parameter is absent; ``MediatorError/field`` names it.
        public static let parameterMissing = Code(base: .parameterMissing)
        /// A parameter has the wrong type or cannot be converted; ``MediatorError/field`` names it.
        public static let parameterInvalid = Code(base: .parameterInvalid)
        /// An action returned a value of another type than the caller asked for.
        public static let unexpectedResult = Code(base: .unexpectedResult)
        /// An action could not run: its target instance is not of the type its actions were
        /// registered for. (Errors an action throws reach the caller as themselves.)
        public static let actionFailed = Code(base: .actionFailed)
        /// Reserved for failures of the route-interceptor chain itself. (Errors a route
        /// interceptor throws reach the caller as themselves.)
        public static let interceptorFailed = Code(base: .interceptorFailed)
        /// Reverse routing could not build a URL (missing or mistyped parameter, no route).
        public static let cannotBuildURL = Code(base: .cannotBuildURL)
        /// A module lifecycle step failed or ran out of order (started twice, stopped before start).
        public static let lifecycle = Code(base: .lifecycle)
        /// The call was cancelled: its action or a route interceptor threw `CancellationError`
        /// (a cancelled task's `Task.sleep`, `Task.checkCancellation()`).
        public static let cancelled = Code(base: .cancelled)
        /// Calls nested more than ``Mediator/maxCallDepth`` deep: an action, a route interceptor or
        /// the unmatched-URL handler calls the mediator in a loop (a redirect back to itself).
        public static let callDepthExceeded = Code(base: .callDepthExceeded)
    }
}

extension MediatorError: CustomStringConvertible {
    /// One line for a log. A URL, target or action name over 512 bytes is cut there, with its
    /// size: a URL from outside can be megabytes long (the properties keep the whole of it).
    public var description: String {
        var text = "MediatorError.\(code): \(message)"
        if let url { text += " [url \(Self.quoted(url))]" }
        if let target { text += " [target \(Self.quoted(target))" + (action.map { " action \(Self.quoted($0))" } ?? "") + "]" }
        if let field { text += " [field \(field)]" }
        if !sources.isEmpty { text += " [declared at \(sources.joined(separator: " and "))]" }
        if let underlying, !(underlying is MediatorError) { text += " (\(underlying))" }
        return text
    }
}

extension MediatorError {
    /// The most bytes of a URL or a name that ``description`` quotes.
    static let quoteLimit = 512

    /// `text`, or its first ``quoteLimit`` bytes (whole characters) and its size.
    static func quoted(_ text: String) -> String {
        let size = text.utf8.count
        guard size > quoteLimit else { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            bytes += text[index].utf8.count
            guard bytes <= quoteLimit else { break }
            end = text.index(after: index)
        }
        return "\(text[..<end])… (\(size) bytes)"
    }
}
