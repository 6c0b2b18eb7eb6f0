#if Signing  // the whole module: without its package trait, only TraitCheck.swift's error

#if Signing  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif

/// HMAC-SHA256 (RFC 2104) under one key, keyed once: the hash states after the key's inner and
/// outer blocks are computed when the interceptor is made, and each MAC starts from copies of
/// them. Built on `SHA256` itself rather than swift-crypto's generic `HMAC`, whose per-call
/// key schedule and generic `DataProtocol` path cost more than the hashing of a short
/// canonical request. `SigningTests` check it against `HMAC<SHA256>` and RFC 4231's vectors.
///
/// `@unchecked Sendable` because `inner` and `outer` are never mutated after `init`: each
/// ``code(for:)`` works on copies, and swift-crypto's hash state is copy-on-write (the first
/// update of a copy copies the shared state), so the shared states are only ever read.
struct KeyedMAC: @unchecked Sendable {
    private let inner: SHA256
    private let outer: SHA256

    init(key: Data) {
        // A key longer than the block is hashed first; a shorter one is padded with zeros.
        var block = [UInt8](repeating: 0, count: SHA256.blockByteCount)
        if key.count > SHA256.blockByteCount {
            block.replaceSubrange(0..<SHA256.byteCount, with: Array(SHA256.hash(data: key)))
        } else {
            block.replaceSubrange(0..<key.count, with: key)
        }
        var inner = SHA256()
        inner.update(data: block.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(data: block.map { $0 ^ 0x5C })
        self.inner = inner
        self.outer = outer
    }

    /// The MAC of `text`'s UTF-8 bytes, lower-case hex.
    func code(for text: String) -> String {
        code(forMessage: Array(text.utf8))
    }

    /// The MAC of `message`, lower-case hex. The message is hashed in one update: each update of
    /// the digest costs about as much as hashing a hundred bytes.
    func code(forMessage message: [UInt8]) -> String {
        var inner = self.inner
        inner.update(data: message)
        var outer = self.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize().hexString
    }
}

#endif
