import Foundation

/// The content of `/bytes/{n}`, `/download/{n}` and `/gzip/{n}`: byte `i` is `i % 251`.
///
/// The period is prime, so a body resumed at the wrong offset or with a missing chunk does
/// not match by accident.
public enum DeterministicBytes {
    /// The byte at position `index`.
    @inline(__always)
    public static func byte(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: index % 251)
    }

    /// `count` bytes of content starting at position `offset`.
    public static func data(count: Int, offset: Int = 0) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count { bytes[i] = byte(at: offset + i) }
        return Data(bytes)
    }
}
