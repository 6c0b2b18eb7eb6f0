import Foundation
import Runway
import Testing

@testable import RunwayCache

@Suite struct MemoryCacheTests {
    func key(_ n: Int) -> CacheKey { CacheKey(bytes: Data([UInt8(n & 0xFF), UInt8(n >> 8)])) }
    func entry(_ size: Int) -> CacheEntry {
        CacheEntry(api: "a", status: 200, headers: [:], body: Data(count: size), storedAt: 0, expiresAt: 100)
    }

    @Test func evictsLeastRecentlyUsedByCount() {
        let cache = MemoryCache(maxEntries: 3, maxBytes: 1 << 20)
        for n in 0..<3 { cache.set(key(n), entry(10)) }
        _ = cache.get(key(0))  // 1 is now the least recent
        cache.set(key(3), entry(10))
        #expect(cache.get(key(1)) == nil)
        #expect(cache.get(key(0)) != nil)
        #expect(cache.get(key(2)) != nil)
        #expect(cache.get(key(3)) != nil)
        #expect(cache.count == 3)
    }

    @Test func evictsByBytesAndRefusesOversizedEntries() {
        let cache = MemoryCache(maxEntries: 100, maxBytes: 1_000)
        for n in 0..<10 { cache.set(key(n), entry(200)) }
        #expect(cache.bytes <= 1_000)
        #expect(cache.get(key(9)) != nil)
        #expect(cache.get(key(0)) == nil)
        cache.set(key(50), entry(5_000))
        #expect(cache.get(key(50)) == nil)
        #expect(cache.bytes <= 1_000)
    }

    @Test func replacingAnEntryKeepsTheByteCountRight() {
        let cache = MemoryCache(maxEntries: 10, maxBytes: 10_000)
        cache.set(key(1), entry(100))
        let one = cache.bytes
        cache.set(key(1), entry(100))
        #expect(cache.bytes == one)
        cache.remove(key(1))
        #expect(cache.bytes == 0)
        #expect(cache.count == 0)
    }
}
