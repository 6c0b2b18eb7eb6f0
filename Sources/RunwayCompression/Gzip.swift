import CZlib
import Foundation

/// gzip encoding and bounded decoding, on zlib.
///
/// ```swift
/// let packed = try Gzip.compress(body)
/// let unpacked = try Gzip.decompress(packed, limit: 1 << 20)
/// ```
public enum Gzip {
    /// Compresses `data` into the gzip format.
    /// - Parameter level: 1 (fastest) to 9 (smallest).
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

    /// Decompresses gzip or zlib data, stopping as soon as the output would pass `limit` bytes,
    /// so a small bomb cannot exhaust memory.
    /// - Throws: ``CompressionError/tooLarge(limit:)``, ``CompressionError/truncated``,
    ///   ``CompressionError/corrupt(_:)``.
    public static func decompress(_ data: Data, limit: Int) throws(CompressionError) -> Data {
        guard data.count <= Int(UInt32.max) else { throw .tooLarge(limit: limit) }
        var stream = z_stream()
        let initStatus = runway_inflate_init_auto(&stream)
        guard initStatus == Z_OK else { throw .zlib(initStatus) }
        defer { inflateEnd(&stream) }
        let chunkSize = 64 * 1024
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let result: Result<Void, CompressionError> = data.withUnsafeBytes { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, buffer.count - Int(stream.avail_out))
                }
                if output.count + produced > limit { return .failure(.tooLarge(limit: limit)) }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    return .success(())
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress possible: the input ran out before the stream ended.
                    return .failure(.truncated)
                case Z_DATA_ERROR, Z_NEED_DICT:
                    return .failure(.corrupt(stream.msg.map { String(cString: $0) } ?? "invalid data"))
                default:
                    return .failure(.zlib(status))
                }
            }
        }
        try result.get()
        return output
    }
}
