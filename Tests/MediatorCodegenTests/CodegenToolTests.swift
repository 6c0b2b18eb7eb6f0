import Foundation
import RunwayTestServer
import Testing

/// `MediatorCodegenTool`, the program the build-tool plugin runs, on module folders written for
/// each test: its exit status (a failure fails the app's build), what it prints, what it writes.
@Suite("Codegen tool")
struct CodegenToolTests {
    /// The tool: built by `swift build` next to the test bundle (the tests' target depends on it).
    static var executable: URL { builtProduct("MediatorCodegenTool") }

    /// Writes `modules` (module name to file name to contents) into a new folder, runs
    /// `generate` on them, and returns the outcome, the folder and the generated file's text.
    func generate(_ modules: [String: [String: String]]) async throws -> (outcome: ProcessOutcome, folder: URL, generated: String?) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-codegen-\(UUID().uuidString)")
        var arguments = ["generate", "--output", folder.appendingPathComponent("Discovered.swift").path]
        for (module, files) in modules.sorted(by: { $0.key < $1.key }) {
            let directory = folder.appendingPathComponent(module)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            arguments += ["--module", module]
            for (name, contents) in files.sorted(by: { $0.key < $1.key }) {
                try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
                arguments.append(directory.appendingPathComponent(name).path)
            }
        }
        let outcome = try await runToEnd(Self.executable, arguments)
        let generated = try? String(contentsOf: folder.appendingPathComponent("Discovered.swift"), encoding: .utf8)
        return (outcome, folder, generated)
    }

    @Test func anInternalTargetIsSkippedWithAWarningThatSaysHowToRegisterIt() async throws {
        let internalModule = """
            import RunwayMediator

            struct InternalTarget: MediatorTarget {
                static let name = "internal"
                static func declareActions(_ actions: inout MediatorActions<InternalTarget>) {}
            }

            public struct InternalModule: MediatorModule {
                public let name = "internal"
                public init() {}
                public func register(into builder: inout Mediator.Builder) throws { try builder.register(InternalTarget.self) }
            }
            """
        let publicModule = """
            import RunwayMediator

            public struct ShopTarget: MediatorTarget {
                public static let name = "shop"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<ShopTarget>) {}
            }
            """
        let (outcome, folder, generated) = try await generate([
            "Internal": ["Internal.swift": internalModule], "Shop": ["Shop.swift": publicModule],
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        // The build goes on: exit 0, the file written with the public target only.
        #expect(outcome.status == 0, "\(outcome)")
        #expect(generated?.contains("try register(Shop::ShopTarget.self") == true)
        #expect(generated?.contains("InternalTarget") == false)
        // The warning names the file by its absolute path (as SwiftPM and Xcode show it) and says what to do.
        let path = folder.appendingPathComponent("Internal/Internal.swift").path
        #expect(outcome.output.contains("\(path):3: warning: InternalTarget conforms to MediatorTarget but is not public"), "\(outcome)")
        #expect(outcome.output.contains("make it public, or register it in the module's MediatorModule"), "\(outcome)")
        #expect(!outcome.output.contains("error:"), "\(outcome)")
    }

    @Test func modifiersBetweenPublicAndTheKeywordKeepATargetPublic() async throws {
        let module = """
            import RunwayMediator

            public nonisolated struct PlainTarget: MediatorTarget {
                public static let name = "plain"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<PlainTarget>) {}
            }

            public indirect enum TreeTarget: MediatorTarget {
                case leaf
                public static let name = "tree"
                public init() { self = .leaf }
                public static func declareActions(_ actions: inout MediatorActions<TreeTarget>) {}
            }
            """
        let (outcome, folder, generated) = try await generate(["Shapes": ["Shapes.swift": module]])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(outcome.status == 0, "\(outcome)")
        // Both are public: registered, and no warning calls them otherwise.
        #expect(generated?.contains("try register(Shapes::PlainTarget.self") == true, "\(generated ?? "")")
        #expect(generated?.contains("try register(Shapes::TreeTarget.self") == true, "\(generated ?? "")")
        #expect(!outcome.output.contains("not public"), "\(outcome)")
    }

    @Test func aGenericTargetIsSkippedWithAWarningNotRegisteredAsCodeThatCannotCompile() async throws {
        let module = """
            import RunwayMediator

            public struct PagerTarget<Item: Sendable>: MediatorTarget {
                public static var name: String { "pager" }
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<PagerTarget>) {}
            }

            public struct PlainTarget: MediatorTarget {
                public static let name = "plain"
                public init() {}
                public static func declareActions(_ actions: inout MediatorActions<PlainTarget>) {}
            }
            """
        let (outcome, folder, generated) = try await generate(["Paging": ["Paging.swift": module]])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(outcome.status == 0, "\(outcome)")
        // `Paging::PagerTarget.self` would not compile (its parameter cannot be inferred): left out, with a warning.
        #expect(generated?.contains("PagerTarget") == false, "\(generated ?? "")")
        #expect(generated?.contains("try register(Paging::PlainTarget.self") == true, "\(generated ?? "")")
        let path = folder.appendingPathComponent("Paging/Paging.swift").path
        #expect(outcome.output.contains("\(path):3: warning: PagerTarget conforms to MediatorTarget but is generic"), "\(outcome)")
    }

    @Test func aNestedPublicTargetStillFailsTheBuild() async throws {
        let module = """
            import RunwayMediator

            public enum Namespace {
                public struct NestedTarget: MediatorTarget {
                    public static let name = "nested"
                    public init() {}
                    public static func declareActions(_ actions: inout MediatorActions<NestedTarget>) {}
                }
            }
            """
        let (outcome, folder, _) = try await generate(["Nested": ["Nested.swift": module]])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(outcome.status == 1, "\(outcome)")
        let path = folder.appendingPathComponent("Nested/Nested.swift").path
        #expect(outcome.output.contains("\(path):4: error: NestedTarget conforms to MediatorTarget but is nested"), "\(outcome)")
    }

    @Test func aFileThatIsNotUTF8IsNamedWithTheLineOfItsFirstBadByte() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-codegen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let directory = folder.appendingPathComponent("Latin")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("Latin.swift")
        // Saved as Latin-1 by an editor: `é` is the single byte 0xE9 on line 3.
        var bytes = Array("import RunwayMediator\n\n// Caf".utf8) + [0xE9] + Array("\npublic struct CafeTarget {}\n".utf8)
        try Data(bytes).write(to: file)
        let output = folder.appendingPathComponent("Discovered.swift").path
        var outcome = try await runToEnd(Self.executable, ["generate", "--output", output, "--module", "Latin", file.path])
        #expect(outcome.status == 1, "\(outcome)")
        // Where, in the form SwiftPM and Xcode show against the file, and what to do.
        #expect(outcome.output.contains("\(file.path):3: error: not UTF-8 text"), "\(outcome)")
        #expect(outcome.output.contains("save the file as UTF-8"), "\(outcome)")
        // The same file, fixed: read.
        bytes = Array("import RunwayMediator\n\n// Café\npublic struct CafeTarget {}\n".utf8)
        try Data(bytes).write(to: file)
        outcome = try await runToEnd(Self.executable, ["generate", "--output", output, "--module", "Latin", file.path])
        #expect(outcome.status == 0, "\(outcome)")
    }
}
