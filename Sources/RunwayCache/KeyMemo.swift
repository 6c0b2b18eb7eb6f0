import Foundation
import Runway

/// The cache keys of the last few requests, found again by the identity of their text.
///
/// An API manager sends the same URL value again when a call repeats its parameters (the
/// engine keeps the query URL it built), and a cache hit is by definition a repeated request:
/// such a request gets its key back without building the key's material and hashing it again.
/// A request matches an entry only when its URL string, method, service, API and credential
/// scope are the *same representations* (same storage, or the same inline small string), which implies the same
/// text; anything else (another URL, a URL built again, a body) builds the key as usual.
final class KeyMemo: Sendable {
    private struct Entry {
        let url: String
        let method: String
        let service: String?
        let api: String?
        let scope: String?
        let key: CacheKey
    }

    /// How many recent keys are kept: a few managers refreshing in turn still hit.
    private static let capacity = 4

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock` (so exclusivity is not checked at run time).
    @exclusivity(unchecked) nonisolated(unsafe) private var entries: [Entry] = []
    @exclusivity(unchecked) nonisolated(unsafe) private var oldest = 0

    /// The key of `request`: remembered, or made by `make` and remembered.
    func key(for request: Request, context: RequestContext, make: () -> CacheKey) -> CacheKey {
        guard request.body == nil else { return make() }
        let url = request.url.absoluteString, method = request.method.rawValue
        let found: CacheKey? = lock.withLock {
            for entry in entries
            where entry.url.hasSameRepresentation(as: url) && entry.method.hasSameRepresentation(as: method)
                && Self.same(entry.service, context.serviceID?.rawValue) && Self.same(entry.api, context.apiName)
                && Self.same(entry.scope, context.credentialScope)
            {
                return entry.key
            }
            return nil
        }
        if let found { return found }
        let key = make()
        let entry = Entry(
            url: url, method: method, service: context.serviceID?.rawValue, api: context.apiName, scope: context.credentialScope, key: key)
        lock.withLock {
            if entries.count < Self.capacity {
                entries.append(entry)
            } else {
                entries[oldest] = entry
                oldest = (oldest + 1) % Self.capacity
            }
        }
        return key
    }

    /// ``String/hasSameRepresentation(as:)`` for optional names (two `nil`s are the same).
    private static func same(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.hasSameRepresentation(as: b)
        default: false
        }
    }
}
