import Foundation
import PackagePlugin

/// Generates `registerDiscoveredTargets()` for the target it is applied to (the app's
/// composition root): it scans the modules the target depends on for public types conforming
/// to `MediatorTarget` — every module of this package, and every module of another package
/// (a business module kept in a package of its own) that depends on `RunwayMediator`, which
/// declaring a target needs. Adding a business module is then: add the target (or the
/// package's product), add it to the app's dependencies.
@main
struct MediatorRegistrationPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let packageTargets = Set(context.package.targets.map(\.id))
        let output = context.pluginWorkDirectoryURL.appending(path: "DiscoveredMediatorTargets.swift")
        var arguments = ["generate", "--output", output.path]
        var inputs: [URL] = []
        // Other packages' modules only when they can declare a target: never swift-nio's
        // hundreds of files, or Runway's own.
        let dependencies = target.recursiveTargetDependencies
            .filter { packageTargets.contains($0.id) || Self.usesMediator($0) }
            .compactMap { $0 as? SourceModuleTarget }
            .filter { $0.kind == .generic && $0.moduleName != "RunwayMediator" }
            .sorted { $0.moduleName < $1.moduleName }
        for module in dependencies {
            let files = module.sourceFiles(withSuffix: "swift").map(\.url)
            guard !files.isEmpty else { continue }
            arguments += ["--module", module.moduleName] + files.map(\.path)
            inputs += files
        }
        return [
            .buildCommand(
                displayName: "Registering mediator targets for \(target.name)",
                executable: try context.tool(named: "MediatorCodegenTool").url,
                arguments: arguments,
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// Whether `target` depends on `RunwayMediator` (directly or not), and is not Runway's own.
    private static func usesMediator(_ target: Target) -> Bool {
        target.name != "RunwayMediator" && target.recursiveTargetDependencies.contains { $0.name == "RunwayMediator" }
    }
}
