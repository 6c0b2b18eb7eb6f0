import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Gzips request bodies above a threshold, for every call or for the services and APIs its
/// ``Scope`` names (``Scope/all`` unless told otherwise), and makes sure responses are asked for
/// compressed.
///
/// ```swift
/// let pipeline = Pipeline(
///     interceptors: [try .compression(threshold: 1024, scope: .services(["listing"]))],
///     dispatcher: CurlDispatcher())
/// ```
/// - A body of at least ``threshold`` bytes, in scope, without a `Content-Encoding` of its own,
///   is replaced by its gzip form and gets `Content-Encoding: gzip` (any `Content-Length` the
///   caller set is dropped; the dispatcher sends the right one). A body that gzip would not
///   shrink is sent as it is.
/// - Responses: turns `RequestOptions.acceptCompressedResponses` on, so the dispatcher asks
///   for gzip and deflate and decodes them; `RequestOptions.maxResponseSize` bounds the
///   **decoded** size, so a gzip bomb fails with `.responseTooLarge` instead of filling memory.
/// - A call can override the scope: `context[CompressionInterceptor.Key.self] = true` (or `false`).
///
/// ## Where it belongs
/// After retry and **before signing** (see `DefaultOrder`): the signature's body hash then
/// covers the gzip bytes actually sent, which is what a verifier receives. Compressing once per
/// attempt is cheap next to the network.
public struct CompressionInterceptor: PerAttemptInterceptor {
    /// Which calls have their request bodies compressed.
    public struct Scope: Sendable, Equatable {
        private enum Kind: Sendable, Equatable {
            case all, none
            case services(Set<ServiceID>)
            case apis(Set<String>)
        }

        private let kind: Kind

        /// Every call.
        public static let all = Scope(kind: .all)
        /// No call, unless it opts in through ``CompressionInterceptor/Key``.
        public static let none = Scope(kind: .none)
        /// Calls whose `RequestContext.serviceID` is one of these.
        public static func services(_ ids: Set<ServiceID>) -> Scope { Scope(kind: .services(ids)) }
        /// Calls whose `RequestContext.apiName` is one of these.
        public static func apis(_ names: Set<String>) -> Scope { Scope(kind: .apis(names)) }

        func contains(_ context: RequestContext) -> Bool {
            switch kind {
            case .all: true
            case .none: false
            case .services(let ids): context.serviceID.map(ids.contains) ?? false
            case .apis(let names): context.apiName.map(names.contains) ?? false
            }
        }

        var isEmptySet: Bool {
            switch kind {
            case .services(let set): set.isEmpty
            case .apis(let set): set.isEmpty
            case .all, .none: false
            }
        }
    }

    /// A per-call override of the ``Scope``: `true` compresses, `false` does not.
    public enum Key: ContextKey {
        public typealias Value = Bool
    }

    /// The smallest body compressed, in bytes.
    public let threshold: Int
    /// The gzip level, 1 (fastest) to 9 (smallest).
    public let level: Int
    /// Which calls opted in.
    public let scope: Scope
    /// Whether responses are asked for compressed.
    public let acceptsCompressedResponses: Bool

    /// `"compression"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "compression" }

    /// Creates the interceptor.
    /// - Throws: `RunwayError` `.configuration` for a negative threshold, a level outside
    ///   1...9, or an empty service/API set.
    public init(threshold: Int = 1024, level: Int = 6, scope: Scope = .all, acceptsCompressedResponses: Bool = true) throws(RunwayError) {
        func bad(_ field: String, _ message: String) -> RunwayError {
            RunwayError(.configuration, "compression: \(message)", stage: .interceptor("compression"), field: field)
        }
        guard threshold >= 0 else { throw bad("threshold", "threshold must not be negative, got \(threshold)") }
        guard (1...9).contains(level) else { throw bad("level", "gzip level must be within 1...9, got \(level)") }
        guard !scope.isEmptySet else { throw bad("scope", "the scope names no service or API; use .none to opt in per call") }
        self.threshold = threshold
        self.level = level
        self.scope = scope
        self.acceptsCompressedResponses = acceptsCompressedResponses
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        // Set only when it changes: writing it copies the request's storage.
        if acceptsCompressedResponses, !request.options.acceptCompressedResponses { request.options.acceptCompressedResponses = true }
        if let body = request.body, body.count >= threshold, request.headers["Content-Encoding"] == nil,
            context[Key.self] ?? scope.contains(context)
        {
            let packed: Data
            do {
                packed = try Gzip.compress(body, level: level)
            } catch {
                throw RunwayError(.interceptorFailed, "gzip failed: \(error)", stage: .interceptor(name), underlying: error)
            }
            if packed.count < body.count {
                request.body = packed
                request.headers["Content-Encoding"] = "gzip"
                request.headers["Content-Length"] = nil
            }
        }
        let response = try await next(request, context)
        // Dispatchers enforce this while decoding; checking again costs nothing and covers any
        // dispatcher that does not.
        if response.body.count > request.options.maxResponseSize {
            throw RunwayError(
                .responseTooLarge, "decoded response is \(response.body.count) bytes, the limit is \(request.options.maxResponseSize)",
                stage: .interceptor(name), response: nil)
        }
        return response
    }
}

extension Interceptor where Self == CompressionInterceptor {
    /// Gzips request bodies of at least `threshold` bytes for the calls in `scope`, and asks for
    /// compressed responses (see ``CompressionInterceptor``). Belongs after retry, before signing.
    /// - Throws: `RunwayError` `.configuration` for bad values.
    public static func compression(
        threshold: Int = 1024, level: Int = 6, scope: CompressionInterceptor.Scope = .all
    ) throws(RunwayError) -> CompressionInterceptor {
        try CompressionInterceptor(threshold: threshold, level: level, scope: scope)
    }
}
