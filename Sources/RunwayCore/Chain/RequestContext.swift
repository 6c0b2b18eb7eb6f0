import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Facts about one call that travel with the request through the chain.
///
/// Interceptors read the API and service names, and share typed values through
/// ``subscript(_:)`` with a ``ContextKey`` (no stringly keys). A value: an interceptor that sets
/// something passes its modified copy to `next`.
public struct RequestContext: Sendable {
    /// A process-unique number for this call, for correlating logs.
    public let callID: UInt64
    /// The API's name: its identity for the per-API policies (validation, cache, compression,
    /// retry, merging, signing scope), logs, metrics and cache keys, e.g. `"listings/rent"`. Set
    /// by API managers (`APIManager.apiName`) and `ServiceRegistry.send(api:of:)`; `nil` on a
    /// call sent through a bare `Pipeline` unless you set it.
    public var apiName: String?
    /// ``apiName`` without the query, path parameters or fragment a name may carry
    /// (`item/7?token=…` is `item/7`; `send(api:)` takes a path): for span names and metric
    /// labels, which must keep no secret and not grow a series per value.
    package var apiLabel: String? {
        apiName.map { name in String(name.prefix { !"?;#".contains($0) }) }
    }
    /// The service the API belongs to (set by API managers and `ServiceRegistry`).
    public var serviceID: ServiceID?
    /// The attempt number, starting at 1; retry interceptors increase it.
    public var attempt: Int
    /// Who the call acts for, as caches must tell callers apart: set from the service's
    /// `TokenAuthenticator` (its `TokenAuthenticator.credentialScope`) by the service's
    /// chain, before the app's interceptors; `nil` for a call that carries no credentials of a
    /// service's. A response cache keeps entries of different scopes apart.
    public var credentialScope: String?
    /// The service sending the call, as the app layer keeps it (`RequestContext.service` in
    /// `Runway`): by reference, outside ``values``, since nearly every call carries one.
    package var serviceObject: (any AnyObject & Sendable)?
    /// What the caller will refuse among the responses this call may get, for a store that
    /// keeps responses for later calls (the cache): set by an API manager's call, for its own
    /// response validator. Outside ``values``, as it is set on every manager call.
    package var acceptance: (any ResponseAcceptance)?
    /// The response rule a validation interceptor registered for the call's API, asked the same
    /// way (a rule set for the call itself travels in ``values``).
    package var ruleAcceptance: (any ResponseAcceptance)?
    private var values: [ObjectIdentifier: any Sendable]

    /// Creates a context with a fresh call ID.
    public init(apiName: String? = nil, serviceID: ServiceID? = nil) {
        self.callID = CallIDs.next()
        self.apiName = apiName
        self.serviceID = serviceID
        self.attempt = 1
        self.credentialScope = nil
        self.serviceObject = nil
        self.acceptance = nil
        self.ruleAcceptance = nil
        self.values = [:]
    }

    /// The value stored for `key`, if any.
    public subscript<Key: ContextKey>(_ key: Key.Type) -> Key.Value? {
        get {
            // Most contexts carry no values: no hashing, and no dynamic cast of a nil.
            guard !values.isEmpty, let value = values[ObjectIdentifier(key)] else { return nil }
            return value as? Key.Value
        }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// What a caller refuses of a response after the chain returns it (an API manager's response
/// validator), asked by an interceptor that keeps responses for later calls, so it keeps none
/// that would fail them all.
package protocol ResponseAcceptance: AnyObject, Sendable {
    /// Why the caller would refuse `response`, or `nil` when it takes it. Free of side effects.
    func refusal(of response: Response) -> RunwayError?
}

/// A typed key for a value kept in a ``RequestContext``.
///
/// ```swift
/// enum CachePolicyKey: ContextKey { typealias Value = CachePolicy }
/// context[CachePolicyKey.self] = .memory(ttl: .seconds(180))
/// ```
public protocol ContextKey {
    /// The type of value stored under this key.
    associatedtype Value: Sendable
}

/// Hands out call IDs; an atomic counter shared by the process.
enum CallIDs {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
