import Foundation
import Runway
import Testing

/// Response bodies come from the network: whatever the bytes, parsing ends in a value or in a
/// `.responseInvalid` error naming where it stopped, never in a crash.
@Suite struct JSONHostileInputTests {
    /// The error parsing `bytes` throws, or `nil` when they parse.
    private func failure(_ bytes: [UInt8]) -> RunwayError? {
        do {
            _ = try JSON(parsing: Data(bytes))
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ text: String) -> RunwayError? { failure(Array(text.utf8)) }

    @Test func everyTruncationOfADocumentIsAnError() {
        let document = #"{"a":[1,-2.5e+3,true,false,null,"x\"\u00e9\ud83d\ude00y"],"b":{"c":"两室"}}"#
        let bytes = Array(document.utf8)
        #expect(failure(bytes) == nil)
        for count in 0..<bytes.count {
            let error = failure(Array(bytes[..<count]))
            #expect(error?.code == .responseInvalid, "prefix of \(count) bytes")
        }
    }

    @Test func errorsNameTheByteWhereParsingStopped() {
        #expect(failure("[1,]")?.message.hasSuffix("at byte 3") == true)
        #expect(failure(#"{"a" 1}"#)?.message.contains("expected ':' at byte 5") == true)
        #expect(failure("[1] 2")?.message.contains("unexpected data after the JSON value at byte 4") == true)
        #expect(failure("nul")?.message.contains("unexpected end at byte 0") == true)
        #expect(failure("nulL")?.message.contains("invalid literal at byte 0") == true)
    }

    @Test func nestingIsLimitedForObjectsAsForArrays() {
        let limit = JSON.maximumDepth
        let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(failure(atLimit) == nil)
        let over = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(failure(over)?.message.contains("nesting deeper than \(limit)") == true)
        let deepObjects = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(failure(deepObjects)?.code == .responseInvalid)
        // Unclosed, so the parser meets the end of input while deep.
        #expect(failure(String(repeating: "[", count: 100_000))?.code == .responseInvalid)
    }

    @Test func hugeNumbersAreOutOfRangeOrDoubles() throws {
        #expect(failure("1" + String(repeating: "0", count: 400))?.message.contains("number out of range") == true)
        #expect(failure("-1e400")?.message.contains("number out of range") == true)
        #expect(failure("[1E+309]")?.code == .responseInvalid)
        #expect(try JSON(parsing: "1e-400") == .double(0))
        #expect(try JSON(parsing: "1" + String(repeating: "0", count: 30)) == .double(1e30))
        #expect(try JSON(parsing: "-0.0") == .double(-0.0))
        #expect(try JSON(parsing: "[-9223372036854775809]") == [.double(-9_223_372_036_854_775_808)])
        for malformed in ["-", "--1", "+1", "1e", "1e+", ".5", "0x10", "1.e3", "Infinity", "NaN", "-01"] {
            #expect(failure(malformed)?.code == .responseInvalid, "\(malformed)")
        }
    }

    @Test func invalidUTF8IsAnErrorInsideAndOutsideStrings() {
        let quote = UInt8(ascii: "\"")
        let cases: [[UInt8]] = [
            [quote, 0xFF, quote],  // never valid in UTF-8
            [quote, 0xC0, 0xAF, quote],  // an overlong "/"
            [quote, 0xED, 0xA0, 0x80, quote],  // a surrogate encoded directly
            [quote, 0xE6, 0x88, quote],  // a sequence cut short
            [quote, UInt8(ascii: "\\"), UInt8(ascii: "n"), 0xFE, quote],  // after an escape
        ]
        for bytes in cases {
            #expect(failure(bytes)?.message.contains("invalid UTF-8") == true, "\(bytes)")
        }
        // A byte order mark is ignored at the very start only (JSONTests), not after whitespace.
        #expect(failure(Array(" ".utf8) + [0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.message.contains("unexpected character") == true)
        #expect(failure([UInt8(ascii: "["), 0xFF, UInt8(ascii: "]")])?.message.contains("unexpected character") == true)
    }

    @Test func loneSurrogatesInEscapesAreErrors() throws {
        for text in [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\ud800\""#, #""\ud800\udbff""#] {
            #expect(failure(text)?.message.contains("unpaired surrogate") == true, "\(text)")
        }
        #expect(try JSON(parsing: #""\ud83d\ude00\u0000\u00E9""#) == .string("😀\u{0}é"))
        for text in [#""\u12G4""#, #""\u12""#, #""\u""#] {
            #expect(failure(text)?.code == .responseInvalid, "\(text)")
        }
    }

    @Test func rawControlCharactersInStringsAreErrors() {
        #expect(failure("\"a\nb\"")?.message.contains("control character in string") == true)
        #expect(failure("\"a\\n\u{1}\"")?.message.contains("control character in string") == true)
        #expect(failure([UInt8(ascii: "\""), 0, UInt8(ascii: "\"")])?.message.contains("control character in string") == true)
        #expect(failure([UInt8(ascii: "1"), 0])?.message.contains("unexpected data after the JSON value") == true)
    }

    @Test func aSliceOfDataParsesFromItsOwnStart() throws {
        let data = Data("xx[1,{\"k\":\"v\"}]yy".utf8)
        let slice = data[2..<(data.count - 2)]
        #expect(try JSON(parsing: slice) == [1, ["k": "v"]])
        #expect(try JSON(parsing: slice) == JSON(parsing: String(decoding: slice, as: UTF8.self)))
    }

    @Test func duplicateKeysKeepTheFirstAsJSONDecoderDoes() throws {
        #expect(try JSON(parsing: #"{"a":1,"a":2}"#) == ["a": 1])
    }
}
