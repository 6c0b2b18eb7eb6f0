import MediatorCodegen
import Testing

/// The scanner on legal Swift it must read right: what it finds, what it registers.
@Suite("Scanner source text")
struct ScannerSourceTests {
    func scan(_ contents: String) -> (targets: [TargetDeclaration], diagnostics: [CodegenDiagnostic]) {
        TargetScanner.scan(module: "Shop", files: [(path: "Shop.swift", contents: contents)])
    }

    @Test func aStringInsideAnInterpolationNeitherEndsTheLiteralNorLetsItsTextCountAsCode() {
        let source = #"""
            import RunwayMediator

            func kind(_ json: String) -> String {
                "\(json.hasPrefix("{") ? "object" : "other")"
            }

            let banner = "\(Bool.random() ? "public struct DecoyTarget: MediatorTarget {" : "") }"

            public struct AfterTarget: MediatorTarget {
                public static let name = "after"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<AfterTarget>) {
                    actions.action("show", routes: ["app://after/<int:id>"]) { _, _ in nil }
                }
            }
            """#
        let result = scan(source)
        // The `{` in `"{"` is text: the target after it is at file scope, not "nested".
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        // The declaration spelled inside the interpolation's string is text too.
        #expect(result.targets.map(\.typeName) == ["AfterTarget"])
        #expect(result.targets.first?.actions.map(\.routes) == [["app://after/<int:id>"]])
        #expect(
            RegistrationGenerator.generate(result.targets).contains("try register(Shop::AfterTarget.self, source: \"Shop/Shop.swift:9\")"))
    }

    @Test func targetsNamedInAnyScriptOrInBackticksAreRegistered() {
        let source = """
            import RunwayMediator

            public struct CaféTarget: MediatorTarget {
                public static let name = "cafe"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<CaféTarget>) {}
            }

            public struct 目録Target: MediatorTarget {
                public static let name = "catalog"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<目録Target>) {}
            }

            public struct `TicketTarget` {
                public init() {}
            }

            extension TicketTarget: MediatorTarget {
                public static let name = "ticket"
                public static func declareActions(_ actions: inout MediatorActions<TicketTarget>) {}
            }
            """
        let result = scan(source)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        // Each is public and top-level: left out, the app would fail at run time with an unknown target.
        #expect(result.targets.map(\.typeName) == ["CaféTarget", "TicketTarget", "目録Target"])
        #expect(result.targets.map(\.targetName) == ["cafe", "ticket", "catalog"])
        let generated = RegistrationGenerator.generate(result.targets)
        for type in ["CaféTarget", "TicketTarget", "目録Target"] {
            #expect(generated.contains("try register(Shop::\(type).self"), "\(generated)")
        }
    }

    @Test func aTargetNamedWithAReservedWordIsRegisteredInBackticks() {
        let source = """
            import RunwayMediator

            public struct `Type`: MediatorTarget {
                public static let name = "type"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<`Type`>) {}
            }

            public enum `class`: MediatorTarget {
                public static let name = "class"
                public static func declareActions(_ actions: inout MediatorActions<`class`>) {}
            }
            """
        let result = scan(source)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.targets.map(\.typeName) == ["Type", "class"])
        let generated = RegistrationGenerator.generate(result.targets)
        // `Shop::Type.self` would not compile (nor `Shop.Type.self`, a metatype's own member).
        for type in ["Type", "class"] {
            #expect(generated.contains("try register(Shop::`\(type)`.self"), "\(generated)")
            #expect(generated.contains("try register(Shop.`\(type)`.self"), "\(generated)")
            #expect(generated.contains("names.append(\"Shop.\(type)\")") || generated.contains("\"Shop.\(type)\","), "\(generated)")
        }
    }

    @Test func aNameDeclaredByANestedTypeIsNotTheTargetsName() {
        let source = """
            import RunwayMediator

            public struct ListingTarget: MediatorTarget {
                enum Analytics { static let name = "screen_view" }
                public static let name = "listing"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<ListingTarget>) {
                    actions.action("show", routes: ["app://listing/<int:id>"]) { _, _ in nil }
                }
            }

            public struct SearchTarget {
                public init() {}
            }

            extension SearchTarget: MediatorTarget {
                struct Analytics { static var name: String { "screen_view" } }
                public static var name: String { "search" }
                public static func declareActions(_ actions: inout MediatorActions<SearchTarget>) {
                    actions.action("results", routes: ["app://search/<query>"]) { _, _ in nil }
                }
            }
            """
        let result = scan(source)
        #expect(result.targets.map(\.targetName) == ["listing", "search"])
        // The routes table lists them under the names the mediator registers, with no false duplicate.
        let listing = RouteListing(targets: result.targets, implicitScheme: nil)
        #expect(listing.problems.isEmpty, "\(listing.problems)")
        #expect(listing.rows.map { "\($0.target)/\($0.action)" } == ["listing/show", "search/results"])
    }

    @Test func aNestedTypeThatSharesATargetsNameIsAnotherType() {
        let source = """
            import RunwayMediator

            public struct Listing: MediatorTarget {
                public static let name = "listing"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<Listing>) {
                    actions.action("show", routes: ["app://listing/<int:id>"]) { _, _ in nil }
                }
            }

            public enum API {
                public struct Listing: Decodable {
                    public var id: Int
                }
            }

            struct Cache {
                struct Listing {}
            }

            public struct Offer {}

            public enum Legacy {
                public struct Offer: MediatorTarget {
                    public static let name = "offer"
                    public static func declareActions(_ actions: inout MediatorActions<Offer>) {}
                }
            }
            """
        let result = scan(source)
        // `API.Listing` and `Cache.Listing` are not targets: no error fails the build, no warning.
        // `Legacy.Offer` is the nested target (an error); the top-level `Offer` is not registered for it.
        #expect(result.diagnostics.map(\.source) == ["Shop/Shop.swift:24"])
        #expect(result.diagnostics.map(\.severity) == [.error])
        #expect(result.diagnostics.first?.message.hasPrefix("Offer conforms to MediatorTarget but is nested") == true)
        #expect(result.targets.map(\.typeName) == ["Listing"])
        #expect(result.targets.first?.line == 3)
    }

    /// Lines are counted from a table of line feeds: the first byte, a line feed itself (still on
    /// its line), the byte after it, and offsets past the end.
    @Test func lineNumbersOfOffsets() {
        let text = SwiftSourceText("a\n\nbc\n// x\nd")
        let naive = { (offset: Int) in 1 + text.code.prefix(offset).filter { $0 == UInt8(ascii: "\n") }.count }
        for offset in 0...(text.code.count + 2) {
            #expect(text.line(at: offset) == naive(offset), "offset \(offset)")
        }
        #expect(text.line(at: 0) == 1)
        #expect(text.line(at: 1) == 1)
        #expect(text.line(at: 2) == 2)
        #expect(text.line(at: text.code.count) == 5)
        #expect(SwiftSourceText("").line(at: 0) == 1)
    }
    /// Routes written as raw strings, with escapes, with a `]` inside, or made at run time by an
    /// interpolation: the listing takes each literal's value, and leaves out (with a warning) the
    /// one made at run time. A regex over the list once read the text between two literals
    /// (`", "`) as a route, and `swift package routes` failed on it.
    @Test func routesAreReadAsLiteralsAndOnesMadeAtRunTimeAreLeftOut() {
        let source = #"""
            import RunwayMediator

            public struct Shop: MediatorTarget {
                public static let name = "shop"
                static let host = "shop"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<Shop>) {
                    actions.action(
                        "item",
                        routes: ["app://\(host)/item/<int:id>", #"app://shop/raw/<id>"#, "app://shop/q\u{75}ote/\"x\"", "app://shop/list[]"]
                    ) { _, _ in nil }
                }
            }
            """#
        let result = scan(source)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let action = result.targets.first?.actions.first
        #expect(action?.routes == ["app://shop/raw/<id>", "app://shop/quote/\"x\"", "app://shop/list[]"])
        #expect(action?.runtimeRoutes == [#""app://\(host)/item/<int:id>""#])
        let listing = RouteListing(targets: result.targets, implicitScheme: nil)
        #expect(listing.rows.map(\.pattern).contains("app://shop/raw/<id>"))
        #expect(!listing.rows.map(\.pattern).contains(", "))
        #expect(listing.warnings.count == 1)
        #expect(listing.warnings.first?.contains("is made at run time") == true)
    }

    @Test func literalValues() {
        func value(_ written: String) -> String? { StringLiteral(ArraySlice(Array(written.utf8))).value }
        #expect(value(#""plain""#) == "plain")
        #expect(value(##"#"raw \n"#"##) == #"raw \n"#)
        #expect(value(##"#"raw \#n"#"##) == "raw \n")
        #expect(value(#""a\\b\"c\u{1F600}""#) == "a\\b\"c😀")
        #expect(value(#""x\(y)""#) == nil)
        #expect(value(##"#"x\#(y)"#"##) == nil)
        #expect(value(#""unterminated"#) == nil)
        #expect(value(#""""#) == "")
    }
}
