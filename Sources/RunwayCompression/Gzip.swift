import CZlib

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// gzip encoding and bounded decoding, on zlib.
///
/// ```swift
/// let packed = try Gzip.compress(body)
/// let unpacked = try Gzip.decompress(packed, limit: 1 << 20)
/// ```
public enum Gzip {
    /// Compresses `data` into the gzip format.
    /// - Parameters:
    ///   - data: The bytes to compress.
    ///   - level: 1 (fastest) to 9 (smallest).
    public static func compress(_ data: Data, level: Int = 6) throws(CompressionError) -> Data {
        guard data.count <= Int(UInt32.max) else { throw .zlib(Z_BUF_ERROR) }
        var stream = z_stream()
        let initStatus = runway_deflate_init_gzip(&stream, Int32(clamping: level))
        guard initStatus == Z_OK else { throw .zlib(initStatus) }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, uLong(data.count))))
        let status = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                // zlib never writes through next_in; the cast only satisfies its C signature.
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .zlib(status) }
        output.count = Int(stream.total_out)
        return output
    }

    /// What compressed data looks like.
    public enum Format: Sendable, Hashable {
        /// gzip (RFC 1952) or zlib (RFC 1950), told apart by the header.
        case gzipOrZlib
        /// Deflate without a header (RFC 1951), which some servers send as `Content-Encoding: deflate`.
        case rawDeflate

        /// The format of a body labelled `deflate`, told by its first two bytes: a zlib header
        /// (RFC 1950: method 8, check bits) or gzip's magic, else raw deflate.
        package static func ofDeflate(startingWith first: UInt8, _ second: UInt8) -> Format {
            let zlib = first & 0x0F == 8 && (Int(first) << 8 | Int(second)) % 31 == 0
            let gzip = first == 0x1F && second == 0x8B
            return zlib || gzip ? .gzipOrZlib : .rawDeflate
        }
    }

    /// Decompresses `data`, stopping as soon as the output would pass `limit` bytes, so a small
    /// bomb cannot exhaust memory.
    ///
    /// gzip data may hold several members one after the other (RFC 1952 §2.2): all are
    /// decompressed, in order. Anything else after the end of the compressed data is an error,
    /// never ignored: the body would not be the one that was sent.
    ///
    /// The output is inflated straight into one buffer, sized from the gzip trailer's length
    /// when there is one (bounded by `limit` and by deflate's 1:1032 ratio, so a lying trailer
    /// cannot reserve more), and doubled when it runs out.
    /// - Throws: ``CompressionError/tooLarge(limit:)``, ``CompressionError/truncated``,
    ///   ``CompressionError/corrupt(_:)``.
    public static func decompress(_ data: Data, limit: Int, format: Format = .gzipOrZlib) throws(CompressionError) -> Data {
        guard data.count <= Int(uInt.max) else { throw .tooLarge(limit: limit) }
        let limit = max(0, limit)
        // One byte past the limit: inflating into it proves the output is too large.
        let ceiling = limit == Int.max ? limit : limit + 1
        var stream = z_stream()
        let initStatus = format == .rawDeflate ? runway_inflate_init_raw(&stream) : runway_inflate_init_auto(&stream)
        guard initStatus == Z_OK else { throw .zlib(initStatus) }
        defer { inflateEnd(&stream) }
        let isGzip = format == .gzipOrZlib && data.count >= 2 && data[data.startIndex] == 0x1F && data[data.startIndex + 1] == 0x8B

        // Never 0 (empty input): doubling 0 stays 0, and `realloc` to 0 bytes frees the buffer.
        var capacity = min(ceiling, max(1, initialCapacity(data, format: format)))
        guard var buffer = malloc(capacity) else { throw .zlib(Z_MEM_ERROR) }
        // Counted here: resetting the stream for the next gzip member zeroes zlib's own count.
        var produced = 0
        var leftOver = 0
        let status: Int32 = data.withUnsafeBytes { input in
            // zlib never writes through next_in; the cast only satisfies its C signature.
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let room = capacity - produced
                stream.next_out = buffer.assumingMemoryBound(to: Bytef.self) + produced
                stream.avail_out = uInt(clamping: room)
                let status = inflate(&stream, Z_NO_FLUSH)
                produced += room - Int(stream.avail_out)
                if status == Z_STREAM_END, stream.avail_in > 0 {
                    // Another gzip member, or bytes that are not part of the data.
                    let next = UnsafeRawBufferPointer(start: stream.next_in, count: Int(stream.avail_in))
                    guard isGzip, next.count >= 2, next[0] == 0x1F, next[1] == 0x8B else {
                        leftOver = next.count
                        return status
                    }
                    let reset = inflateReset(&stream)
                    guard reset == Z_OK else { return reset }
                    continue
                }
                guard status == Z_OK || status == Z_BUF_ERROR, stream.avail_out == 0, capacity < ceiling else {
                    return status
                }
                // The buffer is full and the stream goes on: grow it (up to one past the limit).
                let grown = capacity.multipliedReportingOverflow(by: 2)
                let next = grown.overflow ? ceiling : min(ceiling, grown.partialValue)
                guard let moved = realloc(buffer, next) else { return Z_MEM_ERROR }
                buffer = moved
                capacity = next
            }
        }
        if status == Z_STREAM_END, leftOver == 0, produced <= limit {
            return Data(bytesNoCopy: buffer, count: produced, deallocator: .free)
        }
        free(buffer)
        if produced > limit { throw .tooLarge(limit: limit) }
        switch status {
        case Z_STREAM_END:
            throw .corrupt("\(leftOver) bytes after the end of the compressed data")
        case Z_OK, Z_BUF_ERROR:
            // No progress possible: the input ran out before the stream ended.
            throw .truncated
        case Z_DATA_ERROR, Z_NEED_DICT:
            throw .corrupt(stream.msg.map { String(cString: $0) } ?? "invalid data")
        default:
            throw .zlib(status)
        }
    }

    /// A first guess at the decompressed size: the gzip trailer's length (the size modulo
    /// 2^32) when it is plausible, else four times the input.
    private static func initialCapacity(_ data: Data, format: Format) -> Int {
        let count = data.count
        let plausible = count.multipliedReportingOverflow(by: 1032)
        let most = plausible.overflow ? Int.max : plausible.partialValue
        if format == .gzipOrZlib, count >= 18, data[data.startIndex] == 0x1F, data[data.startIndex + 1] == 0x8B {
            let end = data.endIndex
            let stated = Int(data[end - 4]) | Int(data[end - 3]) << 8 | Int(data[end - 2]) << 16 | Int(data[end - 1]) << 24
            // 0 is the empty stream, or a size that wrapped at 4 GiB; either way not a guide.
            if stated > 0 { return min(stated, most) }
        }
        return min(most, max(4096, count * 4))
    }
}
