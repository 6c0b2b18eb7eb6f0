import Foundation
import PackagePlugin

/// `swift package routes [--target NAME]... [--scheme SCHEME | --no-implicit]`
///
/// Lists every route of the package's (non-test) modules, and of the modules of other packages
/// they depend on that use `RunwayMediator` (business modules kept in packages of their own,
/// which the build plugin registers too): pattern, target/action, local or remote, where it is
/// declared; fails when two targets share a name, a target declares an action twice, or two
/// routes match the same URLs. `--target` names modules to list alone; a name that is none
/// of them fails.
@main
struct MediatorRoutesCommand: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let selected = Set(extractor.extractOption(named: "target"))
        let scheme = extractor.extractOption(named: "scheme").last
        let noImplicit = extractor.extractFlag(named: "no-implicit") > 0
        let own = context.package.targets
        let ownIDs = Set(own.map(\.id))
        // Other packages' modules only when they can declare a target (as the build plugin does).
        let others = own.flatMap(\.recursiveTargetDependencies).filter { !ownIDs.contains($0.id) && Self.usesMediator($0) }
        var seen: Set<Target.ID> = []
        let all = (own + others)
            .filter { seen.insert($0.id).inserted }
            .compactMap { $0 as? SourceModuleTarget }
            .filter { $0.kind == .generic && $0.moduleName != "RunwayMediator" }
        let unknown = selected.subtracting(all.map(\.name))
        guard unknown.isEmpty else {
            let known = all.isEmpty ? "there is none" : "they are \(all.map(\.name).sorted().joined(separator: ", "))"
            Diagnostics.error(
                "routes: no library module named \(unknown.sorted().joined(separator: ", ")); \(known) "
                    + "(targets are declared in library modules; executable targets are not read)"
            )
            throw RoutesError.problems
        }
        if all.isEmpty {
            Diagnostics.warning(
                "routes: the package has no library module to read (targets are declared in library modules, which the app "
                    + "depends on; executable targets are not read)")
        }
        let modules = all.filter { selected.isEmpty || selected.contains($0.name) }.sorted { $0.moduleName < $1.moduleName }
        var toolArguments = ["routes"]
        if noImplicit { toolArguments.append("--no-implicit") } else if let scheme { toolArguments += ["--scheme", scheme] }
        for module in modules {
            let files = module.sourceFiles(withSuffix: "swift").map(\.url.path)
            guard !files.isEmpty else { continue }
            toolArguments += ["--module", module.moduleName] + files
        }
        let process = Process()
        process.executableURL = try context.tool(named: "MediatorCodegenTool").url
        process.arguments = toolArguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            // The tool has said why above: duplicates, conflicting routes, or a file it cannot read.
            Diagnostics.error("routes: the check failed (the reason is above)")
            throw RoutesError.problems
        }
    }

    /// Whether `target` depends on `RunwayMediator` (directly or not), and is not Runway's own.
    private static func usesMediator(_ target: Target) -> Bool {
        target.name != "RunwayMediator" && target.recursiveTargetDependencies.contains { $0.name == "RunwayMediator" }
    }

    enum RoutesError: Error, CustomStringConvertible {
        case problems
        var description: String { "the routes check failed" }
    }
}
