import Foundation
import PackagePlugin

/// `swift package routes [--target NAME]... [--scheme SCHEME | --no-implicit]`
///
/// Lists every route of the package's (non-test) modules: pattern, target/action, local or
/// remote, where it is declared; fails when two targets share a name, a target declares an
/// action twice, or two routes match the same URLs.
@main
struct MediatorRoutesCommand: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let selected = Set(extractor.extractOption(named: "target"))
        let scheme = extractor.extractOption(named: "scheme").last
        let noImplicit = extractor.extractFlag(named: "no-implicit") > 0
        let modules = context.package.targets
            .compactMap { $0 as? SourceModuleTarget }
            .filter { $0.kind == .generic && $0.moduleName != "RunwayMediator" }
            .filter { selected.isEmpty || selected.contains($0.name) }
            .sorted { $0.moduleName < $1.moduleName }
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

    enum RoutesError: Error, CustomStringConvertible {
        case problems
        var description: String { "the routes check failed" }
    }
}
