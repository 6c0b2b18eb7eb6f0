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
}
