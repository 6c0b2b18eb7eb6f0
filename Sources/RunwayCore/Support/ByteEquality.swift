import Foundation

/// Byte-for-byte equality, for the call path's memos and cache keys: `==` on strings compares
/// by Unicode canonical equivalence (composed and decomposed "é" are equal, their bytes are
/// not), and `Data ==` costs more than one `memcmp`.
@usableFromInline package enum ByteEquality {
    /// Whether the two buffers hold the same bytes (at once when they are the same memory).
    @inlinable package static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress, x != y else { return true }
        return memcmp(x, y, a.count) == 0
    }

    /// Whether the two hold the same bytes: at once when they share their storage (a cache hit
    /// hands out the body it stored).
    @inlinable package static func equal(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in equal(x, y) } }
    }
}

extension String {
    /// Whether the two are the same representation: the same literal, the same storage, or the
    /// same small (inline) string — and so the same text. Sound, not complete: equal text in
    /// different storage is reported different.
    @inlinable package func hasSameRepresentation(as other: String) -> Bool {
        if MemoryLayout<String>.size == 16 {
            return unsafeBitCast(self, to: (UInt64, UInt64).self) == unsafeBitCast(other, to: (UInt64, UInt64).self)
        }
        return withUnsafeBytes(of: self) { a in withUnsafeBytes(of: other) { b in ByteEquality.equal(a, b) } }
    }

    /// Whether the two are the same UTF-8 bytes (`==` compares by Unicode canonical equivalence).
    package func hasSameUTF8(as other: String) -> Bool {
        if hasSameRepresentation(as: other) { return true }
        let (mine, theirs) = (utf8, other.utf8)
        guard mine.count == theirs.count else { return false }
        let same = mine.withContiguousStorageIfAvailable { a in
            theirs.withContiguousStorageIfAvailable { b in ByteEquality.equal(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
        }
        return (same ?? nil) ?? mine.elementsEqual(theirs)
    }
}
