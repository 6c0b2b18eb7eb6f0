#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reports every call that passes, with its outcome and duration; never changes a call.
public struct RouteAnalytics: RouteInterceptor {
    /// One observed call.
    public struct Event: Sendable {
        /// The target and action the call reached (after interceptors before this one).
        public var target: String
        /// The action's name.
        public var action: String
        /// Where the call came from.
        public var origin: CallOrigin
        /// The URL, for URL calls.
        public var url: String?
        /// Whether the rest of the chain returned a value (`false`: it threw).
        public var succeeded: Bool
        /// How long the rest of the chain took.
        public var duration: Duration
    }

    let report: @Sendable (Event) -> Void

    /// Creates an observer that calls `report` after each call.
    public init(report: @escaping @Sendable (Event) -> Void) { self.report = report }

    public var name: String { "RouteAnalytics" }

    public func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let result = try await next(call)
            report(
                Event(
                    target: call.target, action: call.action, origin: call.origin, url: call.url, succeeded: true,
                    duration: clock.now - start))
            return result
        } catch {
            report(
                Event(
                    target: call.target, action: call.action, origin: call.origin, url: call.url, succeeded: false,
                    duration: clock.now - start))
            throw error
        }
    }
}

extension RouteInterceptor where Self == RouteAnalytics {
    /// A ``RouteAnalytics`` observer.
    public static func analytics(report: @escaping @Sendable (RouteAnalytics.Event) -> Void) -> RouteAnalytics {
        RouteAnalytics(report: report)
    }
}
