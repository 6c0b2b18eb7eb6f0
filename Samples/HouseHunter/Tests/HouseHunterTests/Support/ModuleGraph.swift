import Foundation
import RunwayTestServer

/// HouseHunter's target graph as the manifest declares it, and the imports its sources write.
struct ModuleGraph {
    /// One target: its name, folder and the targets or products it depends on.
    struct Target: Equatable {
        let name: String
        let path: String
        let dependencies: [String]
    }

    let targets: [Target]
    /// Module names imported by each target's sources.
    let imports: [String: Set<String>]

    /// Business modules: the targets under `Modules/`.
    var businessModules: [Target] { targets.filter { $0.path.hasPrefix("Modules/") } }

    /// Interface targets: under `Interfaces/`.
    var interfaces: [Target] { targets.filter { $0.path.hasPrefix("Interfaces/") } }

    /// Modules every target may import without declaring them.
    static let system: Set<String> = ["Foundation", "FoundationEssentials", "Dispatch", "Glibc", "Darwin", "Swift", "_Concurrency"]

    /// Every broken rule, as a sentence; empty when the graph is clean.
    ///
    /// - A business module neither depends on nor imports another business module.
    /// - An interface target depends on and imports `RunwayMediator` only.
    /// - Every import of a business module or an interface is a declared dependency.
    func violations() -> [String] {
        var problems: [String] = []
        let business = Set(businessModules.map(\.name))
        for module in businessModules {
            for other in module.dependencies where business.contains(other) {
                problems.append("business module \(module.name) depends on business module \(other); depend on its interface instead")
            }
            for other in imports[module.name, default: []].sorted() where business.contains(other) && other != module.name {
                problems.append("business module \(module.name) imports business module \(other); import its interface instead")
            }
        }
        for interface in interfaces {
            for dependency in interface.dependencies where dependency != "RunwayMediator" {
                problems.append("interface \(interface.name) depends on \(dependency); interfaces depend on RunwayMediator only")
            }
        }
        for target in businessModules + interfaces {
            let declared = Set(target.dependencies).union(Self.system)
            for imported in imports[target.name, default: []].sorted() where !declared.contains(imported) {
                problems.append("\(target.name) imports \(imported), which it does not declare as a dependency")
            }
        }
        return problems
    }

    /// Reads the package at `root`: targets from `swift package dump-package`, imports from the
    /// sources of the business modules and interfaces.
    static func load(packageRoot root: URL) throws -> ModuleGraph {
        let json = try dumpPackage(root)
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any],
            let entries = object["targets"] as? [[String: Any]]
        else { throw ProcessFailure("dump-package gave no targets") }
        let targets = entries.compactMap { entry -> Target? in
            guard let name = entry["name"] as? String else { return nil }
            let dependencies = (entry["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency -> String? in
                for key in ["byName", "target", "product"] {
                    if let value = dependency[key] as? [Any], let name = value.first as? String { return name }
                }
                return nil
            }
            return Target(name: name, path: entry["path"] as? String ?? "", dependencies: dependencies)
        }
        var imports: [String: Set<String>] = [:]
        for target in targets where target.path.hasPrefix("Modules/") || target.path.hasPrefix("Interfaces/") {
            imports[target.name] = try Self.imports(under: root.appendingPathComponent(target.path))
        }
        return ModuleGraph(targets: targets, imports: imports)
    }

    /// `swift package dump-package`, with a scratch path of its own so it never waits for the
    /// build that is running these tests.
    static func dumpPackage(_ root: URL) throws -> Data {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("househunter-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = try ChildProcess(
            "/usr/bin/env", ["swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"],
            standardOutput: .pipe, standardError: .pipe)
        let (out, err) = (Collector(process.standardOutput!), Collector(process.standardError!))
        guard process.waitForExitBlocking() == .exited(0) else { throw ProcessFailure("swift package dump-package failed: \(err.text())") }
        return Data(out.text().utf8)
    }

    /// The modules imported by the Swift files under `directory`.
    static func imports(under directory: URL) throws -> Set<String> {
        var modules: Set<String> = []
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            modules.formUnion(importedModules(in: try String(contentsOf: file, encoding: .utf8)))
        }
        return modules
    }

    /// The module of every `import` line: `import X`, `@testable import X`, `public import X`,
    /// `import struct X.Y`, `@preconcurrency import X`.
    static func importedModules(in source: String) -> Set<String> {
        let modifiers: Set<String> = ["public", "package", "internal", "fileprivate", "private"]
        let kinds: Set<String> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
        var modules: Set<String> = []
        for line in source.split(separator: "\n") {
            var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            while let first = words.first, first.hasPrefix("@") || modifiers.contains(first) { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            var name = words[1]
            if kinds.contains(name), words.count >= 3 { name = words[2] }
            if let module = name.split(separator: ".").first { modules.insert(String(module)) }
        }
        return modules
    }
}
