#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Least-recently-used entries in memory, bounded by entry count and by bytes.
///
/// The list state is a value (``LRUList``); this class applies changes to it under a lock.
final class MemoryCache: Sendable {
    let maxEntries: Int
    let maxBytes: Int
    private let list = Locked(LRUList())

    init(maxEntries: Int, maxBytes: Int) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// The entry for `key`, marked as most recently used.
    func get(_ key: CacheKey) -> CacheEntry? {
        list.withLock { $0.get(key) }
    }

    /// Stores `entry`, evicting the least recently used entries beyond the limits. An entry
    /// larger than the whole byte budget is not stored.
    func set(_ key: CacheKey, _ entry: CacheEntry) {
        let size = entry.size
        list.withLock { list in
            guard size <= maxBytes else {
                list.remove(key)
                return
            }
            list.set(key, entry, size: size)
            while list.count > maxEntries || list.bytes > maxBytes {
                list.removeLeastRecent()
            }
        }
    }

    func remove(_ key: CacheKey) {
        list.withLock { $0.remove(key) }
    }

    func removeAll(api: String) {
        list.withLock { $0.removeAll { $0.api == api } }
    }

    func removeAll(resources: Set<String>) {
        list.withLock { $0.removeAll { resources.contains($0.resource) } }
    }

    func removeAll() {
        list.withLock { $0 = LRUList() }
    }

    var count: Int { list.withLock { $0.count } }
    var bytes: Int { list.withLock { $0.bytes } }
}

/// A doubly linked recency list threaded through a dictionary: O(1) get, set and eviction.
struct LRUList {
    private struct Node {
        var entry: CacheEntry
        var size: Int
        var newer: CacheKey?
        var older: CacheKey?
    }

    private var nodes: [CacheKey: Node] = [:]
    private var newest: CacheKey?
    private var oldest: CacheKey?
    private(set) var bytes = 0

    var count: Int { nodes.count }

    mutating func get(_ key: CacheKey) -> CacheEntry? {
        guard let node = nodes[key] else { return nil }
        moveToFront(key)
        return node.entry
    }

    mutating func set(_ key: CacheKey, _ entry: CacheEntry, size: Int) {
        remove(key)
        nodes[key] = Node(entry: entry, size: size, newer: nil, older: newest)
        if let newest { nodes[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
        bytes += size
    }

    mutating func remove(_ key: CacheKey) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
        bytes -= node.size
    }

    mutating func removeLeastRecent() {
        if let oldest { remove(oldest) }
    }

    mutating func removeAll(where predicate: (CacheEntry) -> Bool) {
        for (key, node) in nodes where predicate(node.entry) { remove(key) }
    }

    private mutating func moveToFront(_ key: CacheKey) {
        guard newest != key, let node = nodes[key] else { return }
        let size = node.size
        remove(key)
        set(key, node.entry, size: size)
    }
}

#endif
