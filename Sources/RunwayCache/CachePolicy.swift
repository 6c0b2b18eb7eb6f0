#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

/// Whether and how one API's responses are cached: where (memory, disk, both), for how long,
/// and whether a cached answer is followed by a network refresh.
///
/// ```swift
/// policies: [
///     "listing.detail": .memoryAndDisk(ttl: .seconds(180)),
///     "listing.rent": .memory().cacheThenNetwork(),
///     "account.balance": .never,            // money is never served from a cache
/// ]
/// ```
/// The TTL defaults to 3 minutes (about an average session).
/// TTLs are checked when the ``ResponseCache`` is created: zero or negative is a
/// `.configuration` error.
public struct CachePolicy: Sendable, Equatable {
    /// Where entries are kept.
    struct Storage: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let memory = Storage(rawValue: 1)
        static let disk = Storage(rawValue: 2)
    }

    enum Mode: Sendable, Equatable {
        case cacheFirst
        case cacheThenNetwork(maxStale: Duration)
    }

    let storage: Storage
    /// How long an entry is fresh.
    public let ttl: Duration
    let mode: Mode

    /// The TTL used when none is given: 3 minutes.
    public static let defaultTTL: Duration = .seconds(180)

    /// Never cache (balances, anything personal and volatile).
    public static let never = CachePolicy(storage: [], ttl: defaultTTL, mode: .cacheFirst)

    /// Keep entries in memory only.
    public static func memory(ttl: Duration = defaultTTL) -> CachePolicy {
        CachePolicy(storage: .memory, ttl: ttl, mode: .cacheFirst)
    }

    /// Keep entries on disk only (SQLite).
    public static func disk(ttl: Duration = defaultTTL) -> CachePolicy {
        CachePolicy(storage: .disk, ttl: ttl, mode: .cacheFirst)
    }

    /// Keep entries in memory and on disk; a disk hit is copied into memory.
    public static func memoryAndDisk(ttl: Duration = defaultTTL) -> CachePolicy {
        CachePolicy(storage: [.memory, .disk], ttl: ttl, mode: .cacheFirst)
    }

    /// This policy, answering from the cache at once even when the entry is stale (up to
    /// `maxStale` past its TTL) and always refreshing from the network in the background.
    ///
    /// The caller gets the cached response (its `Response.origin` says which cache); the
    /// refreshed response is stored and handed to the ``CacheRefreshObserver`` in the call's
    /// context, if any. With nothing cached the call goes to the network as usual and there is
    /// no second delivery.
    public func cacheThenNetwork(maxStale: Duration = .seconds(86_400)) -> CachePolicy {
        CachePolicy(storage: storage, ttl: ttl, mode: .cacheThenNetwork(maxStale: maxStale))
    }

    /// Whether this policy caches at all.
    public var isEnabled: Bool { !storage.isEmpty }

    func check(_ api: String) throws(RunwayError) {
        guard ttl > .zero else {
            throw RunwayError(.configuration, "cache TTL of \"\(api)\" must be positive, not \(ttl)")
        }
        if case .cacheThenNetwork(let maxStale) = mode, maxStale < .zero {
            throw RunwayError(.configuration, "maxStale of \"\(api)\" must not be negative")
        }
    }

    /// Carries a policy for one call in a `RequestContext`, overriding the registered one.
    public enum Key: ContextKey {
        public typealias Value = CachePolicy
    }
}

#endif
