import Foundation
import Testing

/// HouseHunter's business modules never import each other: the rule is read from the manifest
/// (`swift package dump-package`) and from the sources under `Modules/` and `Interfaces/`. The
/// build enforces the other half: the test command passes
/// `--explicit-target-dependency-import-check error`, so an import a target does not declare
/// fails to compile.
@Suite("HouseHunter module graph")
struct ModuleGraphTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func businessModulesDependOnInterfacesOnly() throws {
        let graph = try ModuleGraph.load(packageRoot: Self.packageRoot)
        #expect(graph.businessModules.map(\.name).sorted() == ["Account", "Detail", "Listing"])
        #expect(graph.interfaces.map(\.name).sorted() == ["AccountInterface", "DetailInterface", "ListingInterface"])
        // Not vacuous: the modules do reach each other, through the interfaces.
        #expect(graph.imports["Listing"]?.contains("DetailInterface") == true)
        #expect(graph.imports["Detail"]?.isSuperset(of: ["ListingInterface", "AccountInterface"]) == true)
        #expect(graph.imports["Account"]?.contains("DetailInterface") == true)
        #expect(graph.violations() == [])
    }

    @Test func aPlantedCrossModuleImportOrDependencyIsCaught() {
        let graph = ModuleGraph(
            targets: [
                .init(name: "Listing", path: "Modules/Listing", dependencies: ["RunwayMediator", "Detail"]),
                .init(name: "Detail", path: "Modules/Detail", dependencies: ["RunwayMediator", "ListingInterface"]),
                .init(name: "ListingInterface", path: "Interfaces/ListingInterface", dependencies: ["RunwayMediator", "Runway"]),
            ],
            imports: [
                "Listing": ["RunwayMediator", "Detail"], "Detail": ["Listing", "ListingInterface", "Foundation"],
                "ListingInterface": ["RunwayMediator"],
            ])
        #expect(
            graph.violations() == [
                "business module Listing depends on business module Detail; depend on its interface instead",
                "business module Listing imports business module Detail; import its interface instead",
                "business module Detail imports business module Listing; import its interface instead",
                "interface ListingInterface depends on Runway; interfaces depend on RunwayMediator only",
                "Detail imports Listing, which it does not declare as a dependency",
            ])
    }

    @Test func importLinesAreReadInEveryForm() {
        let source = """
            import Foundation
            @testable import Listing
            public import RunwayMediator
            @preconcurrency import Dispatch
            import struct DetailInterface.DetailRoutes
            // import Commented (a comment is not an import)
            let important = "import Nothing"
            """
        #expect(ModuleGraph.importedModules(in: source) == ["Foundation", "Listing", "RunwayMediator", "Dispatch", "DetailInterface"])
    }
}
