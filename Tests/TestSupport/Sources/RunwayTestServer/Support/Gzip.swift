import CZlibTest
import Foundation

/// Gzip compression through zlib, for the `/gzip`, `/gzip-bomb` and `/encoded` endpoints.
enum Gzip {
    /// Gzip-compresses the chunks `next` yields until it returns `nil`.
    static func compress(level: Int32 = 6, chunks next: () -> Data?) throws -> Data {
        var stream = z_stream()
        guard runway_test_deflate_init_gzip(&stream, level) == Z_OK else {
            throw TestServerError("deflateInit2 failed")
        }
        defer { deflateEnd(&stream) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func drain(_ input: Data, flush: Int32) throws {
            var input = input
            try input.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
                stream.next_in = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(raw.count)
                repeat {
                    let produced: Int = try buffer.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        let status = deflate(&stream, flush)
                        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                            throw TestServerError("deflate failed with \(status)")
                        }
                        return out.count - Int(stream.avail_out)
                    }
                    output.append(contentsOf: buffer[0..<produced])
                } while stream.avail_out == 0 || (flush == Z_FINISH && stream.avail_in > 0)
            }
        }
        while let chunk = next() {
            try drain(chunk, flush: Z_NO_FLUSH)
        }
        try drain(Data(), flush: Z_FINISH)
        return output
    }

    /// Gzip of `data`.
    static func compress(_ data: Data) throws -> Data {
        var pending: Data? = data
        return try compress {
            defer { pending = nil }
            return pending
        }
    }

    /// The zlib format (RFC 1950) around raw deflate data of `plain`.
    static func zlibWrapped(raw: Data, of plain: Data) -> Data {
        let checksum = plain.withUnsafeBytes { bytes in
            adler32(adler32(0, nil, 0), bytes.bindMemory(to: Bytef.self).baseAddress, uInt(bytes.count))
        }
        var wrapped = Data([0x78, 0x9C])
        wrapped.append(raw)
        for shift in stride(from: 24, through: 0, by: -8) { wrapped.append(UInt8(truncatingIfNeeded: checksum >> UInt(shift))) }
        return wrapped
    }

    /// Gzip of `megabytes` MiB of zeros: about 1 KiB per MiB (deflate's ratio tops out near 1:1000).
    static func bomb(megabytes: Int) throws -> Data {
        let chunk = Data(count: 1 << 20)
        var remaining = megabytes
        return try compress(level: 6) {
            guard remaining > 0 else { return nil }
            remaining -= 1
            return chunk
        }
    }
}
