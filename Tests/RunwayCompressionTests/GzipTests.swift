import Foundation
import RunwayCompression
import Testing

@Suite struct GzipTests {
    @Test func roundTripsAndWritesTheGzipFormat() throws {
        let text = Data(String(repeating: "rent=2500&district=xuhui&", count: 200).utf8)
        let packed = try Gzip.compress(text)
        #expect(packed.prefix(2) == Data([0x1F, 0x8B]))
        #expect(packed.count < text.count / 10)
        #expect(try Gzip.decompress(packed, limit: text.count) == text)
    }

    @Test func emptyInputRoundTrips() throws {
        let packed = try Gzip.compress(Data())
        #expect(try Gzip.decompress(packed, limit: 0) == Data())
    }

    @Test("empty input is truncated data, in either format and under any limit, never a crash")
    func emptyInputIsTruncated() throws {
        for format in [Gzip.Format.gzipOrZlib, .rawDeflate] {
            for limit in [0, 1 << 20, .max] {
                #expect(throws: CompressionError.truncated, "\(format) \(limit)") {
                    try Gzip.decompress(Data(), limit: limit, format: format)
                }
            }
        }
    }

    @Test func bombStopsAtTheLimit() throws {
        let bomb = try Gzip.compress(Data(count: 50 << 20), level: 9)
        #expect(bomb.count < 100_000)
        #expect(throws: CompressionError.tooLarge(limit: 1 << 20)) { try Gzip.decompress(bomb, limit: 1 << 20) }
        #expect(try Gzip.decompress(bomb, limit: 50 << 20).count == 50 << 20)
    }

    @Test func truncatedAndCorruptInputAreTypedErrors() throws {
        let packed = try Gzip.compress(Data(String(repeating: "abc", count: 1000).utf8))
        #expect(throws: CompressionError.truncated) { try Gzip.decompress(packed.prefix(packed.count / 2), limit: 1 << 20) }
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(Data("not gzip at all".utf8), limit: 1 << 20) }
        var flipped = packed
        flipped[flipped.count - 6] ^= 0xFF  // inside the CRC32 trailer
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(flipped, limit: 1 << 20) }
    }

    @Test func oneByteOverTheLimitIsTooLarge() throws {
        let text = Data(String(repeating: "page=2&size=30&", count: 500).utf8)
        let packed = try Gzip.compress(text)
        #expect(try Gzip.decompress(packed, limit: text.count) == text)
        #expect(throws: CompressionError.tooLarge(limit: text.count - 1)) { try Gzip.decompress(packed, limit: text.count - 1) }
    }

    @Test func everyMemberOfAMultiMemberBodyIsDecoded() throws {
        let members = try Gzip.compress(Data("first member; ".utf8)) + Gzip.compress(Data()) + Gzip.compress(Data("second".utf8))
        #expect(try Gzip.decompress(members, limit: 1 << 20) == Data("first member; second".utf8))
        // The limit counts every member.
        #expect(throws: CompressionError.tooLarge(limit: 15)) { try Gzip.decompress(members, limit: 15) }
    }

    @Test func bytesAfterTheCompressedDataAreCorruptNotDropped() throws {
        let gzip = try Gzip.compress(Data("payload".utf8))
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(gzip + Data("GARBAGE".utf8), limit: 1 << 20) }
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(gzip + Data([0]), limit: 1 << 20) }
        // A second member cut short is truncated data.
        let second = try Gzip.compress(Data("more".utf8))
        #expect(throws: CompressionError.truncated) { try Gzip.decompress(gzip + second.prefix(12), limit: 1 << 20) }
        let raw = gzip.subdata(in: 10..<(gzip.count - 8))
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(raw + Data("x".utf8), limit: 1 << 20, format: .rawDeflate) }
    }

    @Test func rawDeflateDecodesOnlyAsRawDeflate() throws {
        let text = Data(String(repeating: "city=sh&kind=rent&", count: 300).utf8)
        let packed = try Gzip.compress(text)
        // zlib's gzip: a 10-byte header, raw deflate, an 8-byte trailer.
        let raw = packed.subdata(in: 10..<(packed.count - 8))
        #expect(try Gzip.decompress(raw, limit: 1 << 20, format: .rawDeflate) == text)
        #expect(throws: CompressionError.corrupt("")) { try Gzip.decompress(raw, limit: 1 << 20) }
    }

    @Test func aLyingLengthInTheTrailerIsCorruptNotAHugeAllocation() throws {
        let text = Data(String(repeating: "id=42&", count: 2000).utf8)
        for stated: UInt32 in [0xFFFF_FFF0, 1, UInt32(text.count * 2)] {
            var packed = try Gzip.compress(text)
            let end = packed.count
            for byte in 0..<4 { packed[end - 4 + byte] = UInt8(truncatingIfNeeded: stated >> UInt32(byte * 8)) }
            #expect(throws: CompressionError.corrupt(""), "\(stated)") { try Gzip.decompress(packed, limit: .max) }
        }
    }
}
