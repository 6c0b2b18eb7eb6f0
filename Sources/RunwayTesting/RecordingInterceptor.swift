import Foundation
import Runway

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
        // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
        private let lock = NSLock()
        nonisolated(unsafe) private var stored: [Event] = []

        public init() {}

        /// The events so far, in order.
        public var events: [Event] { lock.withLock { stored } }

        func append(_ event: Event) { lock.withLock { stored.append(event) } }
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
