import Foundation
import Testing

@testable import RunwayCompression

/// The streaming inflater a dispatcher feeds chunk by chunk: the same bytes out, whatever the
/// chunking, and a typed error for a stream that is cut, corrupt or not asked for.
@Suite struct InflaterTests {
    private static let plain = Data((0..<200_000).map { UInt8(truncatingIfNeeded: ($0 * 7) ^ ($0 >> 5)) })

    /// The body as gzip, zlib-wrapped deflate and raw deflate.
    private static func forms() throws -> [(String, String, Data)] {
        let gzip = try Gzip.compress(plain)
        let raw = gzip.subdata(in: 10..<(gzip.count - 8))
        var zlib = Data([0x78, 0x9C])
        zlib += raw
        var adler = adler32(plain).bigEndian
        zlib += Data(bytes: &adler, count: 4)
        return [
            ("gzip", "gzip", gzip), ("x-gzip", "x-gzip", gzip), ("deflate", "deflate", zlib), ("raw deflate", "deflate", raw),
            ("gzip as deflate", "deflate", gzip),
        ]
    }

    private static func adler32(_ data: Data) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    /// Feeds `input` in chunks of `size` and returns what came out.
    private func inflate(_ input: Data, encoding: String, chunk size: Int) throws -> (Data, Inflater) {
        let inflater = try #require(Inflater(encoding: encoding))
        var output = Data()
        var offset = 0
        while offset < input.count {
            let piece = input.subdata(in: offset..<min(input.count, offset + size))
            let going = try piece.withUnsafeBytes { bytes in
                try inflater.feed(bytes) { decoded in
                    output.append(contentsOf: decoded)
                    return true
                }
            }
            #expect(going)
            offset += size
        }
        return (output, inflater)
    }

    @Test("every form comes out whole, fed in one piece, in odd pieces or byte by byte", arguments: [1, 2, 3, 1000, 16_384, 1 << 30])
    func forms(chunk: Int) throws {
        for (name, encoding, encoded) in try Self.forms() {
            let (output, inflater) = try inflate(encoded, encoding: encoding, chunk: chunk)
            #expect(output == Self.plain, "\(name)")
            #expect(inflater.isComplete, "\(name)")
            try inflater.finish()
        }
    }

    @Test("a stream cut anywhere is .truncated at the end, never a silent prefix", arguments: [0.0, 0.01, 0.5, 0.99])
    func truncated(fraction: Double) throws {
        for (name, encoding, encoded) in try Self.forms() {
            let cut = encoded.prefix(Int(Double(encoded.count) * fraction))
            let (_, inflater) = try inflate(Data(cut), encoding: encoding, chunk: 4096)
            #expect(!inflater.isComplete, "\(name)")
            #expect(throws: CompressionError.truncated, "\(name)") { try inflater.finish() }
        }
    }

    @Test("the gzip trailer alone missing is .truncated too")
    func trailerMissing() throws {
        let gzip = try Gzip.compress(Self.plain)
        let (output, inflater) = try inflate(gzip.dropLast(8), encoding: "gzip", chunk: 4096)
        #expect(output == Self.plain)  // every byte, but the checksum was never seen
        #expect(throws: CompressionError.truncated) { try inflater.finish() }
    }

    @Test("corrupt data is .corrupt, and a wrong checksum too")
    func corrupt() throws {
        var gzip = try Gzip.compress(Self.plain)
        gzip[gzip.count - 6] ^= 0xFF  // in the CRC-32
        #expect(throws: CompressionError.corrupt("")) { _ = try inflate(gzip, encoding: "gzip", chunk: 4096) }
        #expect(throws: CompressionError.corrupt("")) { _ = try inflate(Data("not gzip at all".utf8), encoding: "gzip", chunk: 3) }
    }

    @Test("a sink that refuses stops the stream")
    func sinkStops() throws {
        let gzip = try Gzip.compress(Self.plain)
        let inflater = try #require(Inflater(encoding: "GZIP"))
        var seen = 0
        let going = try gzip.withUnsafeBytes { bytes in
            try inflater.feed(bytes) { decoded in
                seen += decoded.count
                return seen < 50_000
            }
        }
        #expect(!going)
        #expect(seen < Self.plain.count)
    }

    @Test("gzip members one after the other come out as one body, however they are cut", arguments: [1, 2, 3, 1000, 1 << 30])
    func severalMembers(chunk: Int) throws {
        let first = Self.plain.prefix(70_000)
        let second = Self.plain.dropFirst(70_000)
        let members = try Gzip.compress(Data(first)) + Gzip.compress(Data(second)) + Gzip.compress(Data())
        let (output, inflater) = try inflate(members, encoding: "gzip", chunk: chunk)
        #expect(output == Self.plain)
        #expect(inflater.isComplete)
        try inflater.finish()
    }

    @Test("a body of 50,000 tiny members is inflated without nesting a call per member")
    func manyTinyMembers() throws {
        let one = try Gzip.compress(Data("x".utf8))
        let members = Data(repeatElement(one, count: 50_000).joined())
        let (output, inflater) = try inflate(members, encoding: "gzip", chunk: 1 << 30)
        #expect(output == Data(repeating: UInt8(ascii: "x"), count: 50_000))
        try inflater.finish()
        #expect(try Gzip.decompress(members, limit: 1 << 20) == output)
    }

    @Test("bytes after the end of the data are .corrupt, never dropped", arguments: [1, 3, 1000, 1 << 30])
    func trailingBytes(chunk: Int) throws {
        for (name, encoding, encoded) in try Self.forms() {
            let inflater = try #require(Inflater(encoding: encoding))
            let input = encoded + Data("trailing".utf8)
            var offset = 0
            var failure: CompressionError?
            while offset < input.count, failure == nil {
                let piece = input.subdata(in: offset..<min(input.count, offset + chunk))
                do {
                    _ = try piece.withUnsafeBytes { bytes in try inflater.feed(bytes) { _ in true } }
                } catch let error as CompressionError {
                    failure = error
                }
                offset += chunk
            }
            #expect(failure == .corrupt(""), "\(name)")
        }
    }

    @Test("one stray byte after a gzip member leaves the data unfinished")
    func strayByteAfterAMember() throws {
        let (output, inflater) = try inflate(try Gzip.compress(Self.plain) + Data([0x1F]), encoding: "gzip", chunk: 1000)
        #expect(output == Self.plain)
        #expect(!inflater.isComplete)
        #expect(throws: CompressionError.truncated) { try inflater.finish() }
    }

    @Test("only gzip, x-gzip and deflate are inflated", arguments: ["br", "zstd", "compress", "identity", ""])
    func unknown(_ encoding: String) {
        #expect(Inflater(encoding: encoding) == nil)
    }
}
