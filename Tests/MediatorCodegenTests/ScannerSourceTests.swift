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
        #expect(listing.warnings.first?.contains("not a string literal") == true)
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

    /// Regex literals are text: a brace inside one neither nests the target after it (a false
    /// "nested" error that failed the app's build) nor lets a nested one pass as top-level (a
    /// generated file that did not compile).
    @Test func aBraceInARegexLiteralDoesNotCount() {
        let source = #"""
            import RunwayMediator

            func braces(_ s: String) -> Int { s.matches(of: /\{/).count + s.matches(of: #/[{]/#).count }
            let pattern = #/
              \{ (?<open> [a-z]+ )
              /#
            let half = 10 /2/ 5

            public struct AfterRegexTarget: MediatorTarget {
                public static let name = "afterregex"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<AfterRegexTarget>) {}
            }

            public enum Holder {
                static func closes(_ s: String) -> Int { s.matches(of: /\}/).count }
                public struct HeldTarget: MediatorTarget {
                    public static let name = "held"
                    public init() {}
                    public static func declareActions(_ actions: inout MediatorActions<HeldTarget>) {}
                }
            }
            """#
        let result = scan(source)
        #expect(result.targets.map(\.typeName) == ["AfterRegexTarget"])
        #expect(result.diagnostics.map(\.line) == [17], "\(result.diagnostics)")
        #expect(result.diagnostics.first?.message.contains("HeldTarget conforms to MediatorTarget but is nested") == true)
    }

    /// `a/b/c`, `x / y` and `x /= y/2` are divisions: the braces after them still count.
    @Test func divisionsAreNotRegexLiterals() {
        let source = """
            import RunwayMediator

            func ratio(_ a: Int, _ b: Int, _ c: Int) -> Int { var x = a/b/c; x /= b/2; return x / c }

            public enum Holder {
                public struct HeldTarget: MediatorTarget {
                    public static let name = "held"
                    public init() {}
                    public static func declareActions(_ actions: inout MediatorActions<HeldTarget>) {}
                }
            }
            """
        let result = scan(source)
        #expect(result.targets.isEmpty)
        #expect(result.diagnostics.map(\.line) == [6], "\(result.diagnostics)")
    }

    /// A nested type made a target by `extension Outer.Inner: MediatorTarget` was never seen:
    /// not registered, not listed, and nothing said so.
    @Test func aNestedTypeMadeATargetByAnExtensionIsDiagnosed() {
        let source = """
            import RunwayMediator

            public enum Outer {
                public struct Inner: Sendable { public init() {} }
                struct Hidden: Sendable { init() {} }
            }

            extension Outer.Inner: MediatorTarget {
                public static let name = "inner"
                public static func declareActions(_ actions: inout MediatorActions<Outer.Inner>) {}
            }

            extension Outer . `Hidden`: MediatorTarget {
                static let name = "hidden"
                static func declareActions(_ actions: inout MediatorActions<Outer.Hidden>) {}
            }

            public struct ShopTarget: Sendable { public init() {} }

            extension Shop.ShopTarget: MediatorTarget {
                public static let name = "shop"
                public static func declareActions(_ actions: inout MediatorActions<ShopTarget>) {}
            }
            """
        let result = scan(source)
        #expect(result.targets.isEmpty)
        let found = result.diagnostics.map { "\($0.line) \($0.severity.rawValue): \($0.message)" }
        #expect(found.count == 3, "\(found)")
        #expect(
            found.first?.hasPrefix("13 warning: Outer.Hidden conforms to MediatorTarget but is not a public type at file scope") == true)
        #expect(found.dropFirst().first?.hasPrefix("8 error: Outer.Inner conforms to MediatorTarget but is nested") == true)
        #expect(
            found.last
                == "20 warning: Shop.ShopTarget conforms to MediatorTarget through its module's name, which the scan does not follow, "
                + "so it is not registered; write `extension ShopTarget: MediatorTarget`")
    }

    /// What `swift package routes` lists is what the mediator registers: access however it is
    /// spelled, a literal ending in an escaped backslash, the file of an action declared in an
    /// extension elsewhere; and what it cannot read (names and routes from constants, an access
    /// from a variable) is said, never dropped in silence.
    @Test func routesListWhatTheMediatorRegistersAndSayWhatTheyCannotRead() {
        let target = #"""
            import RunwayMediator

            public struct Shop: MediatorTarget {
                public static let name = "shop"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<Shop>) {
                    actions.action("qualified", access: ActionAccess.remote) { _, _ in nil }
                    actions.action("secret", routes: ["app://shop/secret/<int:id>"], tags: ["dir\\"]) { _, _ in nil }
                    actions.action("open", access: .remote) { _, _ in nil }
                    actions.action(Names.constant, access: .remote) { _, _ in nil }
                    actions.action("item", access: .remote, routes: [ShopRoutes.item, "app://shop/i/<int:id>"]) { _, _ in nil }
                    actions.action("all", routes: ShopRoutes.all) { _, _ in nil }
                    actions.action("chosen", access: level) { _, _ in nil }
                }
            }
            """#
        let extensionFile = """
            import RunwayMediator

            extension Shop {
                static func more(_ actions: inout MediatorActions<Shop>) {
                    actions.action("more", access: .remote) { _, _ in nil }
                }
            }
            """
        let result = TargetScanner.scan(module: "Shop", files: [("Shop.swift", target), ("Shop+More.swift", extensionFile)])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let listing = RouteListing(targets: result.targets)
        let rows = listing.rows.map { "\($0.pattern) \($0.isRemote ? "remote" : "local") \($0.source)" }
        #expect(
            rows == [
                "app://shop/all local Shop/Shop.swift:12 (implicit)",
                "app://shop/chosen local Shop/Shop.swift:13 (implicit)",
                "app://shop/i/<int:id> remote Shop/Shop.swift:11",
                "app://shop/item remote Shop/Shop.swift:11 (implicit)",
                "app://shop/more remote Shop/Shop+More.swift:5 (implicit)",
                "app://shop/open remote Shop/Shop.swift:9 (implicit)",
                "app://shop/qualified remote Shop/Shop.swift:7 (implicit)",
                "app://shop/secret local Shop/Shop.swift:8 (implicit)",
                "app://shop/secret/<int:id> local Shop/Shop.swift:8",
            ], "\(rows)")
        let warnings = listing.warnings.map {
            String($0.prefix(while: { $0 != ":" })) + ": " + ($0.components(separatedBy: "warning: ").last ?? "")
        }
        #expect(
            warnings == [
                "Shop/Shop.swift: an action of shop is named by Names.constant, which is not a string literal: "
                    + "its routes are not listed or checked",
                "Shop/Shop.swift: the route ShopRoutes.item of shop/item is not a string literal (a constant, or made at run time): "
                    + "not listed or checked",
                "Shop/Shop.swift: the route ShopRoutes.all of shop/all is not a string literal (a constant, or made at run time): "
                    + "not listed or checked",
                "Shop/Shop.swift: the access of shop/chosen is level, which is not read from the source: listed as local",
            ], "\(warnings)")
        #expect(listing.problems.isEmpty, "\(listing.problems)")
    }

    /// A name the mediator refuses at start-up (not ASCII) fails the scan, at its line.
    @Test func namesTheMediatorRefusesFailTheBuild() {
        let source = """
            import RunwayMediator

            public struct UnicodeTarget: MediatorTarget {
                public static let name = "ünï"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<UnicodeTarget>) {}
            }

            public struct GreetingTarget: MediatorTarget {
                public static let name = "greeting"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<GreetingTarget>) {
                    actions.action("grüße") { _, _ in nil }
                }
            }
            """
        let result = scan(source)
        let found = result.diagnostics.map { "\($0.line) \($0.severity.rawValue) \($0.message)" }
        #expect(
            found == [
                "13 error action name 'grüße' of GreetingTarget must be ASCII letters, digits, '-', '_' or '.', and not only dots: "
                    + "the mediator would refuse it at start-up",
                "3 error UnicodeTarget conforms to MediatorTarget but its name 'ünï' must be ASCII letters, digits, '-', '_' or '.', "
                    + "and not only dots: the mediator would refuse it at start-up",
            ], "\(found)")
    }

    @Test func anExplicitLocalOnlyAccessIsReadWithoutAWarning() {
        let source = """
            import RunwayMediator

            public struct Shop: MediatorTarget {
                public static let name = "shop"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<Shop>) {
                    actions.action("purge", access: .localOnly) { _, _ in nil }
                    actions.action("purge2", access: ActionAccess.localOnly) { _, _ in nil }
                    actions.action("purge3", access: RunwayMediator.ActionAccess . localOnly) { _, _ in nil }
                    actions.action("purge4", access: .local) { _, _ in nil }
                }
            }
            """
        let listing = RouteListing(targets: scan(source).targets)
        #expect(listing.rows.map(\.isRemote) == [false, false, false, false])
        // `.local` is no case of ActionAccess: only it is "not read".
        #expect(listing.warnings.count == 1, "\(listing.warnings)")
        #expect(listing.warnings.first?.contains("the access of shop/purge4 is .local, which is not read") == true, "\(listing.warnings)")
    }

    @Test func aTargetNameWrittenAsARawStringOrWithEscapesIsRead() {
        let source = #"""
            import RunwayMediator

            public struct DeltaTarget: MediatorTarget {
                public static let name = #"delta"#
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<DeltaTarget>) {
                    actions.action("show", access: .remote, routes: [#"app://delta/<int:id>"#]) { _, _ in nil }
                }
            }

            public struct EscapedTarget: MediatorTarget {
                public static var name: String { "a\u{62}" }
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<EscapedTarget>) {}
            }

            public struct SumTarget: MediatorTarget {
                public static let name = "sum" + suffix
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<SumTarget>) {}
            }
            """#
        let result = scan(source)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.targets.map(\.typeName) == ["DeltaTarget", "EscapedTarget", "SumTarget"])
        // `"sum" + suffix` is made at run time: no name, rather than the wrong one.
        #expect(result.targets.map(\.targetName) == ["delta", "ab", nil])
        let listing = RouteListing(targets: Array(result.targets.prefix(2)))
        #expect(listing.problems.isEmpty, "\(listing.problems)")
        #expect(listing.rows.map(\.pattern).contains("app://delta/<int:id>"), "\(listing.rows.map(\.pattern))")
    }

    @Test func aNameDeclaredInSeveralIfBranchesIsWarnedAbout() {
        let source = """
            import RunwayMediator

            public struct MuTarget: MediatorTarget {
                #if DEBUG
                public static let name = "mu-debug"
                #else
                public static let name = "mu"
                #endif
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<MuTarget>) {}
            }

            public struct NuTarget: MediatorTarget {
                #if DEBUG
                public static let name = "nu"
                #else
                public static let name = "nu"
                #endif
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<NuTarget>) {}
            }
            """
        let result = scan(source)
        #expect(result.targets.map(\.targetName) == ["mu-debug", "nu"])
        // The same name in every branch is no news; different names are.
        let found = result.diagnostics.map { "\($0.line) \($0.severity.rawValue) \($0.message)" }
        #expect(
            found == [
                "7 warning MuTarget declares `static let name` more than once ('mu-debug', 'mu', under `#if`); routes are listed "
                    + "and checked under the first only, 'mu-debug', while the app registers the name of the branch it compiles"
            ], "\(found)")
    }

    @Test func theGeneratedExtensionNamesTheMediatorOfRunwayMediator() {
        // Module Omicron has a `Mediator` of its own: an unqualified `Mediator.Builder` would be ambiguous in the app.
        let source = """
            import RunwayMediator

            public final class Mediator {}

            public struct ChatTarget: MediatorTarget {
                public static let name = "chat"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<ChatTarget>) {}
            }
            """
        let result = TargetScanner.scan(module: "Omicron", files: [(path: "Chat.swift", contents: source)])
        let generated = RegistrationGenerator.generate(result.targets)
        #expect(generated.contains("\nextension RunwayMediator.Mediator.Builder {\n"), "\(generated)")
        #expect(!generated.contains("extension Mediator."), "\(generated)")
    }
}
