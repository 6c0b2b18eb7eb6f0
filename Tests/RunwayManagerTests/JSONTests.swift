import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

@Suite struct JSONTests {
    @Test func parsesEveryKindAndKeepsIntegersApart() throws {
        let json = try JSON(
            parsing:
                #"{"id": 1234567890123, "price": 1.5, "ok": true, "no": null, "tags": ["a", "b\n\u00e9\ud83d\ude00"], "nested": {"x": -0}}"#
        )
        #expect(json["id"] == .int(1_234_567_890_123))
        #expect(json["id"]?.int == 1_234_567_890_123)
        #expect(json["price"]?.double == 1.5)
        #expect(json["price"]?.int == nil)
        #expect(json["ok"]?.bool == true)
        #expect(json["no"]?.isNull == true)
        #expect(json["tags"]?[1]?.string == "b\né😀")
        #expect(json["nested"]?["x"] == .int(0))
        #expect(json["missing"] == nil)
        #expect(json["tags"]?[5] == nil)
    }

    @Test func aRepeatedKeyKeepsItsFirstValueAsJSONDecoderDoes() throws {
        struct Item: Decodable { let id: Int }
        let body = Data(#"{"id": 1, "nested": {"id": 3, "id": 4}, "id": 2}"#.utf8)
        let json = try JSON(parsing: body)
        #expect(json["id"] == 1)
        #expect(json["nested"]?["id"] == 3)
        // The raw data and the typed result agree on one response.
        #expect(try JSONDecoder().decode(Item.self, from: body).id == json["id"]?.int)
    }

    @Test func roundTripsThroughSerialization() throws {
        let value: JSON = ["b": [1, 2.5, "x\"y", nil, false], "a": ["k": "v\u{01}"]]
        let text = value.serialized()
        #expect(text == #"{"a":{"k":"v\u0001"},"b":[1,2.5,"x\"y",null,false]}"#)
        #expect(try JSON(parsing: text) == value)
    }

    @Test func aLeadingByteOrderMarkIsIgnoredAsJSONDecoderDoesAndOnlyThere() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try JSON(parsing: Data(bom + Array("{\"a\":1}".utf8)))["a"]?.int == 1)
        #expect(throws: RunwayError.self) { try JSON(parsing: Data(Array("[1]".utf8) + bom)) }
        #expect(throws: RunwayError.self) { try JSON(parsing: Data(bom)) }
    }

    @Test func aManagerReadsJSONAServerSendsAfterAByteOrderMark() async throws {
        let body: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("{\"items\":[1]}".utf8)
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n",
            extra: body)
        defer { responder.stop() }
        let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: responder.url("/v1").absoluteString)])
        let json = try await ItemListAPIManager(registry: registry).load()
        #expect(json["items"]?.array?.count == 1)
    }

    @Test func negativeZeroKeepsItsSign() throws {
        #expect(JSON.double(-0.0).serialized() == "-0.0")
        #expect(JSON.double(0.0).serialized() == "0.0")
        let parsed = try JSON(parsing: "[-0.0]")
        #expect(parsed.serialized() == "[-0.0]")
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "\"\\x\"", "\"a", "[1] 2", "\"\\ud800\"", "1e999"])
    func rejectsMalformedInputWithATypedError(_ text: String) {
        #expect(throws: RunwayError.self) { try JSON(parsing: text) }
        do {
            _ = try JSON(parsing: text)
        } catch {
            #expect(error.code == .responseInvalid)
        }
    }

    @Test func rejectsNestingDeeperThanTheLimitWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: RunwayError.self) { try JSON(parsing: deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSON(parsing: fine)) != nil)
    }

    @Test func integerOverflowFallsBackToDouble() throws {
        #expect(try JSON(parsing: "9223372036854775807") == .int(.max))
        #expect(try JSON(parsing: "-9223372036854775808") == .int(.min))
        #expect(try JSON(parsing: "9223372036854775808") == .double(9_223_372_036_854_775_808))
    }
}
