import Crypto
import Foundation
import Testing

@testable import RunwaySigning

@Suite struct KeyedMACTests {
    /// RFC 4231's HMAC-SHA256 test cases whose data is text (1, 2, 6 and 7): a short key, a text
    /// key, and keys longer than a block (hashed first).
    @Test(
        arguments: [
            (
                String(repeating: "0b", count: 20), "Hi There".hexEncoded,
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
            ),
            (
                "Jefe".hexEncoded, "what do ya want for nothing?".hexEncoded,
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            ),
            (
                String(repeating: "aa", count: 131), "Test Using Larger Than Block-Size Key - Hash Key First".hexEncoded,
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
            (
                String(repeating: "aa", count: 131),
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed "
                    + "before being used by the HMAC algorithm.").hexEncoded,
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
            ),
        ])
    func rfc4231(key: String, message: String, expected: String) throws {
        let text = String(decoding: try #require(Data(hex: message)), as: UTF8.self)
        #expect(KeyedMAC(key: try #require(Data(hex: key))).code(for: text) == expected)
    }

    @Test("agrees with swift-crypto's HMAC for keys and texts of every length around the block size")
    func agreesWithHMAC() {
        for keyLength in [1, 31, 32, 63, 64, 65, 200] {
            let key = Data((0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            let mac = KeyedMAC(key: key)
            for textLength in [0, 1, 55, 56, 63, 64, 65, 119, 120, 500] {
                let text = String(repeating: "é", count: textLength / 2) + String(repeating: "a", count: textLength % 2)
                let expected = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: key)).hexString
                #expect(mac.code(for: text) == expected, "key \(keyLength) bytes, text \(textLength)")
                // Keyed once, used many times: the shared states are not consumed.
                #expect(mac.code(for: text) == expected)
            }
        }
    }
}

extension String {
    fileprivate var hexEncoded: String { utf8.map { String(format: "%02x", $0) }.joined() }
}

extension Data {
    fileprivate init?(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
