import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The content of `/bytes/{n}`, `/download/{n}` and `/gzip/{n}`: byte `i` is `i % 251`.
///
/// The period is prime, so a body resumed at the wrong offset or with a missing chunk does
/// not match by accident. Bodies are made and checked a block at a time from one stored run of
/// the pattern (`memcpy`, `memcmp`), not byte by byte: the test server and the tests are debug
/// builds, and megabytes checked a byte at a time kept a core busy for a minute.
public enum DeterministicBytes {
    private static let period = 251
    /// The longest piece copied or compared at once.
    private static let block = 64 << 10
    /// The pattern from byte 0, a block and a period long: every run of up to `block` bytes,
    /// starting anywhere in the period, is a slice of it.
    private static let pattern: [UInt8] = (0..<(block + period)).map { UInt8($0 % period) }

    /// The byte at position `index`.
    @inline(__always)
    public static func byte(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: index % period)
    }

    /// `count` bytes of content starting at position `offset`.
    public static func data(count: Int, offset: Int = 0) -> Data {
        var data = Data(capacity: count)
        var done = 0
        pattern.withUnsafeBufferPointer { pattern in
            while done < count {
                let start = (offset + done) % period
                let length = min(count - done, block)
                data.append(UnsafeBufferPointer(rebasing: pattern[start..<(start + length)]))
                done += length
            }
        }
        return data
    }

    /// Whether `bytes` are the content starting at position `offset`.
    public static func matches(_ bytes: UnsafeRawBufferPointer, offset: Int) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        return pattern.withUnsafeBytes { pattern in
            var done = 0
            while done < bytes.count {
                let start = (offset + done) % period
                let length = min(bytes.count - done, block)
                guard memcmp(base + done, pattern.baseAddress! + start, length) == 0 else { return false }
                done += length
            }
            return true
        }
    }
}
