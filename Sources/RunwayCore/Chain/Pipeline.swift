/// The ordered interceptor chain and the dispatcher that ends it, frozen at start-up.
///
/// Build it once and share it; it is an immutable `Sendable` value.
/// ```swift
/// let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
///     UserAgent()
///     LoggingInterceptor(logger: logger)
/// }
/// let response = try await pipeline.send(try Request("https://api.example.com/items"))
/// ```
/// Requests pass the interceptors first-to-last, then the dispatcher; responses come back
/// last-to-first (see ``Interceptor``). Every error leaving ``send(_:context:)`` is a
/// ``RunwayError`` whose ``RunwayError/stage`` names the interceptor or the dispatcher that
/// failed.
public struct Pipeline: Sendable {
    /// The interceptors, in the order requests pass them.
    public var interceptors: [any Interceptor] { storage.interceptors }
    /// The dispatcher at the end of the chain.
    public var dispatcher: any Dispatcher { storage.dispatcher }

    private let storage: Storage

    /// Creates a pipeline from interceptors in order and a dispatcher.
    public init(interceptors: [any Interceptor], dispatcher: any Dispatcher) {
        storage = Storage(interceptors: interceptors, dispatcher: dispatcher)
    }

    /// Creates a pipeline from interceptors listed in order in a builder block.
    ///
    /// The block may call throwing factories (`try .signing(...)`, `try ResponseCache(...)`);
    /// their configuration error is rethrown here, at start-up.
    public init(dispatcher: any Dispatcher, @InterceptorsBuilder _ interceptors: () throws -> [any Interceptor]) rethrows {
        self.init(interceptors: try interceptors(), dispatcher: dispatcher)
    }

    /// Sends a request through every interceptor and the dispatcher.
    ///
    /// The request's progress stream (``Request/progress``) ends with the call, however it ends:
    /// also when no transfer ran (a cache hit, a call joined to another, an interceptor that
    /// refused it), and for a streamed body when the body ends.
    /// - Throws: ``RunwayError``, attributed to the stage that failed.
    public func send(_ request: Request, context: RequestContext = RequestContext()) async throws(RunwayError) -> Response {
        do {
            guard let progress = request.progress else { return try await Next(storage: storage, index: 0)(request, context) }
            do {
                var response = try await Next(storage: storage, index: 0)(request, context)
                progress.finish(after: &response)
                return response
            } catch {
                progress.finish()
                throw error
            }
        } catch let error as RunwayError {
            throw error
        } catch {
            // `Next` only throws RunwayError; this keeps the typed signature honest.
            throw RunwayError.attributing(error, to: .dispatcher(storage.dispatcher.name), fallback: .transport)
        }
    }

    /// Returns a pipeline with the same dispatcher and `extra` interceptors appended after these.
    public func appending(_ extra: [any Interceptor]) -> Pipeline {
        Pipeline(interceptors: storage.interceptors + extra, dispatcher: storage.dispatcher)
    }

    /// The rest of the chain from one interceptor on; call it to continue.
    public struct Next: Sendable {
        fileprivate let storage: Storage
        fileprivate let index: Int

        fileprivate init(storage: Storage, index: Int) {
            self.storage = storage
            self.index = index
        }

        /// Runs the remaining interceptors and the dispatcher.
        public func callAsFunction(_ request: Request, _ context: RequestContext) async throws -> Response {
            let interceptors = storage.interceptors
            if index < interceptors.count {
                let interceptor = interceptors[index]
                do {
                    return try await interceptor.intercept(request, context: context, next: Next(storage: storage, index: index + 1))
                } catch {
                    throw RunwayError.attributing(error, to: .interceptor(interceptor.name))
                }
            }
            do {
                return try await storage.dispatcher.dispatch(request, context: context)
            } catch {
                throw RunwayError.attributing(error, to: .dispatcher(storage.dispatcher.name), fallback: .transport)
            }
        }
    }

    /// Shared, immutable state behind every `Next` of one pipeline (one allocation per pipeline,
    /// none per call).
    fileprivate final class Storage: Sendable {
        let interceptors: [any Interceptor]
        let dispatcher: any Dispatcher

        init(interceptors: [any Interceptor], dispatcher: any Dispatcher) {
            self.interceptors = interceptors
            self.dispatcher = dispatcher
        }
    }
}

/// Lists interceptors in order, allowing the static-member shorthand (`.signing(...)`).
@resultBuilder
public enum InterceptorsBuilder {
    public static func buildExpression<I: Interceptor>(_ interceptor: I) -> [any Interceptor] { [interceptor] }
    public static func buildExpression(_ interceptors: [any Interceptor]) -> [any Interceptor] { interceptors }
    public static func buildBlock(_ parts: [any Interceptor]...) -> [any Interceptor] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [any Interceptor]?) -> [any Interceptor] { part ?? [] }
    public static func buildEither(first part: [any Interceptor]) -> [any Interceptor] { part }
    public static func buildEither(second part: [any Interceptor]) -> [any Interceptor] { part }
    public static func buildArray(_ parts: [[any Interceptor]]) -> [any Interceptor] { parts.flatMap { $0 } }
}
