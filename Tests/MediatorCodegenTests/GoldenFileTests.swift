import Foundation
import MediatorCodegen
import Testing

/// Golden files: `Golden/<case>/input/<Module>/*.swift` in, `Golden/<case>/expected-*.txt` out.
/// Run with `UPDATE_GOLDEN=1` to rewrite the expected files after a deliberate change (and review the diff).
@Suite("Generator golden files")
struct GoldenFileTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    func scan(_ name: String) throws -> (targets: [TargetDeclaration], diagnostics: [CodegenDiagnostic]) {
        let input = Self.golden.appendingPathComponent(name).appendingPathComponent("input")
        let manager = FileManager.default
        var targets: [TargetDeclaration] = []
        var diagnostics: [CodegenDiagnostic] = []
        for module in try manager.contentsOfDirectory(atPath: input.path).sorted() {
            let directory = input.appendingPathComponent(module)
            let files = try manager.contentsOfDirectory(atPath: directory.path).sorted().map { file in
                (path: file, contents: try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
            }
            let result = TargetScanner.scan(module: module, files: files)
            targets += result.targets
            diagnostics += result.diagnostics
        }
        return (targets, diagnostics)
    }

    func expectGolden(_ actual: String, _ name: String, _ file: String) throws {
        let url = Self.golden.appendingPathComponent(name).appendingPathComponent(file)
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] != nil {
            try actual.write(to: url, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "\(name)/\(file) differs from its golden file")
    }

    @Test func registrationForSeveralModules() throws {
        let result = try scan("modules")
        #expect(result.diagnostics.isEmpty)
        try expectGolden(RegistrationGenerator.generate(result.targets), "modules", "expected-registration.txt")
        try expectGolden(RouteListing(targets: result.targets).table, "modules", "expected-routes.txt")
        #expect(RouteListing(targets: result.targets).problems.isEmpty)
    }

    @Test func nonPublicAndNestedTargetsAreDiagnosed() throws {
        let result = try scan("diagnostics")
        try expectGolden(
            result.diagnostics.map(\.description).joined(separator: "\n") + "\n" + RegistrationGenerator.generate(result.targets),
            "diagnostics", "expected-registration.txt")
        // A non-public target (nested or not) is the module's to register: a warning. A nested public one is an error.
        #expect(result.diagnostics.map(\.severity) == [.warning, .warning, .error])
        #expect(result.diagnostics.map(\.line) == [15, 3, 9])
    }

    @Test func targetsUnderIfAreRegisteredUnderTheSameConditions() throws {
        let result = try scan("conditions")
        #expect(result.diagnostics.isEmpty)
        try expectGolden(RegistrationGenerator.generate(result.targets), "conditions", "expected-registration.txt")
        // A type declared in two branches is one target, not a duplicate.
        let listing = RouteListing(targets: result.targets)
        #expect(listing.problems.isEmpty)
        try expectGolden(listing.table, "conditions", "expected-routes.txt")
    }

    @Test func compositionsTypealiasesAndRefiningProtocolsAreFollowed() throws {
        let result = try scan("conformances")
        #expect(result.diagnostics.isEmpty)
        try expectGolden(RegistrationGenerator.generate(result.targets), "conformances", "expected-registration.txt")
        // Found: a composition, typealiases (of a composition too), refinements of refinements.
        // Not: a lookalike, and a refinement declared in another module (Zeta's through Eps's protocol).
        #expect(
            result.targets.map { "\($0.module).\($0.typeName)" } == [
                "Delta.DeltaTarget", "Delta.DeltaThree", "Delta.DeltaTwoTarget", "Eps.EpsTarget", "Eps.FlowStep", "Eps.ModalTarget",
            ])
    }

    @Test func duplicatesAndConflictsNameBothSources() throws {
        let result = try scan("conflicts")
        let listing = RouteListing(targets: result.targets)
        try expectGolden(listing.table + "\n" + listing.problems.joined(separator: "\n") + "\n", "conflicts", "expected-routes.txt")
        #expect(listing.problems.count == 3)
    }

    @Test func outputIsDeterministic() throws {
        let result = try scan("modules")
        let reversed = RegistrationGenerator.generate(result.targets.reversed())
        #expect(reversed == RegistrationGenerator.generate(result.targets))
    }
}
