import Foundation
import PackagePlugin

/// Generates `registerDiscoveredTargets()` for the target it is applied to (the app's
/// composition root): it scans every module of this package that the target depends on for
/// public types conforming to `MediatorTarget`. Adding a business module is then: add the
/// target, add it to the app's dependencies.
@main
struct MediatorRegistrationPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let packageTargets = Set(context.package.targets.map(\.id))
        let output = context.pluginWorkDirectoryURL.appending(path: "DiscoveredMediatorTargets.swift")
        var arguments = ["generate", "--output", output.path]
        var inputs: [URL] = []
        let dependencies = target.recursiveTargetDependencies
            .filter { packageTargets.contains($0.id) }
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
}
