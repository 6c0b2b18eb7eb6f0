import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An interceptor that records what passes through it and changes nothing.
///
/// Put several in a pipeline, sharing one ``Log``, to assert on the order of the chain.
public struct RecordingInterceptor: Interceptor {
    /// One thing a recording interceptor saw.
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        case request(interceptor: String, url: String)
        case response(interceptor: String, status: Int)
        case failure(interceptor: String, code: RunwayError.Code?)

        public var description: String {
            switch self {
            case .request(let name, _): "\(name)>"
            case .response(let name, _): "<\(name)"
            case .failure(let name, _): "!\(name)"
            }
        }
    }

    /// A thread-safe, shared list of events.
    public final class Log: Sendable {
        private let stored = Locked<[Event]>([])

        public init() {}

        /// The events so far, in order.
        public var events: [Event] { stored.withLock { $0 } }

        func append(_ event: Event) { stored.withLock { $0.append(event) } }
    }

    public let name: String
    /// Where events go.
    public let log: Log

    /// Creates a recorder named `name` writing to `log`.
    public init(name: String, log: Log = Log()) {
        self.name = name
        self.log = log
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        log.append(.request(interceptor: name, url: request.url.absoluteString))
        do {
            let response = try await next(request, context)
            log.append(.response(interceptor: name, status: response.status))
            return response
        } catch {
            log.append(.failure(interceptor: name, code: (error as? RunwayError)?.code))
            throw error
        }
    }
}
