#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Remembers the nonces seen within the replay window, so each is accepted once.
///
/// Entries older than the window are dropped (a request that old is refused for its stale
/// timestamp anyway), and the cache holds at most `capacity` live nonces: past that it refuses
/// new ones rather than forget one that could be replayed. Safe to share between threads.
public final class NonceCache: Sendable {
    /// The most live nonces kept.
    public let capacity: Int
    private let state = Locked(State())

    private struct State {
        /// Nonce → Unix seconds after which it may be forgotten.
        var expiries: [String: Int64] = [:]
        var nextPrune: Int64 = 0
    }

    /// Creates an empty cache.
    public init(capacity: Int = 1_000_000) {
        self.capacity = max(1, capacity)
    }

    /// Records `nonce` until `expiry`; `false` when it is already recorded and live.
    func insert(_ nonce: String, expiry: Int64, now: Int64) throws(SignatureVerificationError) -> Bool {
        try state.withLock { (state) throws(SignatureVerificationError) -> Bool in
            if now >= state.nextPrune || state.expiries.count >= capacity {
                state.expiries = state.expiries.filter { $0.value > now }
                state.nextPrune = now + 10
            }
            if let existing = state.expiries[nonce], existing > now { return false }
            guard state.expiries.count < capacity else {
                throw SignatureVerificationError(.tooManyNonces, "\(capacity) nonces are live; refusing new ones")
            }
            state.expiries[nonce] = expiry
            return true
        }
    }

    /// The number of nonces held.
    public var count: Int { state.withLock { $0.expiries.count } }
}

#endif
