import Foundation
import Testing

@testable import RunwayMediator

@Suite("Parameters")
struct MediatorParametersTests {
    @Test func typedAccessConvertsStrings() throws {
        let uuid = UUID()
        let parameters: MediatorParameters = ["n": "42", "d": "1.5", "b": "yes", "u": uuid.uuidString, "i": 7, "list": ["9"]]
        #expect(try parameters.int("n") == 42)
        #expect(try parameters.int("i") == 7)
        #expect(try parameters.int("list") == 9)
        #expect(try parameters.double("d") == 1.5)
        #expect(try parameters.bool("b"))
        #expect(try parameters.uuid("u") == uuid)
        #expect(parameters.keys == ["n", "d", "b", "u", "i", "list"])
    }

    @Test("a local call's numbers of any type are read as Int or Double when their value fits")
    func otherNumberTypesAreConverted() throws {
        let parameters: MediatorParameters = [
            "i64": Int64(5), "u8": UInt8(200), "u64": UInt64.max, "f": Float(1.5), "i32": Int32(-7), "neg": Int16(-3),
        ]
        #expect(try parameters.int("i64") == 5)
        #expect(try parameters.int("u8") == 200)
        #expect(try parameters.int("i32") == -7)
        #expect { try parameters.int("u64") } throws: {
            ($0 as? MediatorError)?.code == .parameterInvalid && ($0 as? MediatorError)?.message.contains("out of the range of Int") == true
        }
        // A Float is no integer, even a whole one: read it as a Double.
        #expect { try parameters.int("f") } throws: { ($0 as? MediatorError)?.code == .parameterInvalid }
        #expect(try parameters.double("f") == 1.5)
        #expect(try parameters.double("i64") == 5)
        #expect(try parameters.double("neg") == -3)
    }

    @Test func missingAndInvalidNameTheField() {
        let parameters: MediatorParameters = ["n": "x", "obj": [1, 2]]
        #expect { try parameters.int("nope") } throws: {
            ($0 as? MediatorError)?.code == .parameterMissing && ($0 as? MediatorError)?.field == "nope"
        }
        #expect { try parameters.int("n") } throws: { ($0 as? MediatorError)?.code == .parameterInvalid }
        #expect { try parameters.int("-") } throws: { ($0 as? MediatorError)?.code == .parameterMissing }
        #expect { try parameters.value("n", as: Int.self) } throws: { ($0 as? MediatorError)?.code == .parameterInvalid }
        #expect { try parameters.string("obj") } throws: { ($0 as? MediatorError)?.field == "obj" }
    }

    @Test func aRepeatedKeyOrAnOverflowSaysSo() {
        let parameters: MediatorParameters = ["id": ["1", "2"], "big": "99999999999999999999", "neg": "-99999999999999999999"]
        #expect { try parameters.int("id") } throws: { ($0 as? MediatorError)?.message.contains("given 2 times") == true }
        #expect { try parameters.int("big") } throws: { ($0 as? MediatorError)?.message.contains("out of the range of Int") == true }
        #expect { try parameters.int("neg") } throws: { ($0 as? MediatorError)?.message.contains("out of the range of Int") == true }
        #expect(parameters.strings("id") == ["1", "2"])
        // Every typed read says a key was given twice, not that its value is of the wrong kind.
        #expect { try parameters.double("id") } throws: { ($0 as? MediatorError)?.message.contains("given 2 times") == true }
        #expect { try parameters.bool("id") } throws: { ($0 as? MediatorError)?.message.contains("given 2 times") == true }
        #expect { try parameters.uuid("id") } throws: { ($0 as? MediatorError)?.message.contains("given 2 times") == true }
    }

    @Test(arguments: ["+5", "--5", "-+5", "+-5", "5-"])
    func aSignThatMakesNoIntegerIsNotAnIntegerRatherThanOutOfRange(_ text: String) {
        let parameters: MediatorParameters = ["n": text]
        #expect { try parameters.int("n") } throws: {
            ($0 as? MediatorError)?.code == .parameterInvalid && ($0 as? MediatorError)?.message.contains("is not an integer") == true
        }
    }

    @Test func zeroPaddedIntegersAreReadByTheirSignificantDigits() throws {
        let padded = String(repeating: "0", count: 18) + "42"  // 20 characters
        #expect(RouteConverter.parseInt(padded) == 42)
        #expect(RouteConverter.parseInt("-" + padded) == -42)
        #expect(RouteConverter.parseInt(String(repeating: "0", count: 30)) == 0)
        #expect(RouteConverter.parseInt("000" + "9223372036854775807") == Int.max)
        #expect(RouteConverter.parseInt("-000" + "9223372036854775808") == Int.min)
        #expect(RouteConverter.parseInt("000" + "9223372036854775808") == nil)
        let parameters: MediatorParameters = ["id": padded, "big": "0099999999999999999999"]
        #expect(try parameters.int("id") == 42)
        #expect { try parameters.int("big") } throws: { ($0 as? MediatorError)?.message.contains("out of the range of Int") == true }

        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "listing") { actions in
            actions.action("detail", access: .remote, routes: ["app://listing/<int:id>"]) { _, _ in 1 }
            actions.action("slug", access: .remote, routes: ["app://listing/<slug>"]) { _, _ in 2 }
        }
        let match = try #require(try builder.build().resolve("app://listing/" + padded))
        #expect(match.action == "detail")
        #expect(try match.parameters.int("id") == 42)
    }

    @Test func doublesFollowTheRuleOfTheDoublePlaceholder() throws {
        let parameters: MediatorParameters = ["hex": "0x10", "hexFloat": "0x1p3", "inf": "inf", "nan": "nan", "ok": "-1.5e2", "plus": "+2"]
        for key in ["hex", "hexFloat", "inf", "nan"] {
            #expect(throws: MediatorError.self, "\(key)") { try parameters.double(key) }
            #expect(RouteConverter.double.convert(parameters.strings(key)[0]) == nil, "\(key)")
        }
        #expect(try parameters.double("ok") == -150)
        #expect(try parameters.double("plus") == 2)
    }

    @Test func setReplacesAndNilRemoves() {
        var parameters: MediatorParameters = ["a": 1]
        parameters["a"] = 2
        parameters["b"] = "x"
        parameters["a"] = nil
        #expect(parameters.keys == ["b"])
        #expect(parameters.count == 1)
    }

    @Test func strictIntegerParsing() {
        #expect(RouteConverter.parseInt("-12") == -12)
        #expect(RouteConverter.parseInt("+12") == nil)
        #expect(RouteConverter.parseInt(" 1") == nil)
        #expect(RouteConverter.parseInt("99999999999999999999") == nil)
        #expect(RouteConverter.parseInt("9223372036854775807") == Int.max)
        #expect(RouteConverter.parseInt("-9223372036854775808") == Int.min)
        #expect(RouteConverter.parseInt("-") == nil)
    }
}
