import RunwayMediator

/// The route table of scanned targets, with duplicate and conflict checks: what
/// `swift package routes` prints.
package struct RouteListing: Sendable {
    /// One row.
    package struct Row: Sendable, Equatable {
        package var pattern: String
        package var target: String
        package var action: String
        package var isRemote: Bool
        package var source: String
    }

    /// Every route, sorted by pattern.
    package private(set) var rows: [Row] = []
    /// Duplicates and conflicts, each naming both sources.
    package private(set) var problems: [String] = []
    /// Routes the listing leaves out (those made at run time), as `source: warning: message`.
    package private(set) var warnings: [String] = []

    /// Builds the listing; implicit routes `scheme://target/action` are included when `implicitScheme` is set.
    package init(targets: [TargetDeclaration], implicitScheme: String? = "app") {
        var targetSources: [String: (source: String, type: String)] = [:]
        var shapes: [String: Row] = [:]
        for target in targets.sorted(by: { ($0.module, $0.typeName) < ($1.module, $1.typeName) })
        where target.module != RegistrationGenerator.mediatorModule {
            guard let name = target.targetName?.lowercased() else {
                problems.append(
                    "\(target.source): target \(target.typeName) has no literal `static let name = \"...\"`; its routes cannot be listed")
                continue
            }
            let type = target.module + "." + target.typeName
            if let other = targetSources[name], other.type != type {
                // Reported; its routes are still listed and checked, so one run shows every problem.
                problems.append("duplicate target '\(name)': \(other.source) and \(target.source)")
            } else if targetSources[name] == nil {
                // The same type declared again is another `#if` branch's declaration, not a duplicate.
                targetSources[name] = (target.source, type)
            }
            var actionSources: [String: String] = [:]
            for action in target.actions {
                let source = "\(target.module)/\(action.file ?? target.file):\(action.line)"
                guard action.nameIsLiteral else {
                    warnings.append(
                        "\(source): warning: an action of \(name) is named by \(action.name), which is not a string literal: "
                            + "its routes are not listed or checked")
                    continue
                }
                if let written = action.unreadableAccess {
                    warnings.append(
                        "\(source): warning: the access of \(name)/\(action.name) is \(written), which is not read from the source: "
                            + "listed as local")
                }
                if let other = actionSources[action.name] {
                    problems.append("duplicate action '\(name)/\(action.name)': \(other) and \(source)")
                    continue
                }
                actionSources[action.name] = source
                for written in action.runtimeRoutes {
                    warnings.append(
                        "\(source): warning: the route \(written) of \(name)/\(action.name) is not a string literal "
                            + "(a constant, or made at run time): not listed or checked")
                }
                var patterns = action.routes.map { ($0, source) }
                if let implicitScheme { patterns.append(("\(implicitScheme)://\(name)/\(action.name)", source + " (implicit)")) }
                for (text, patternSource) in patterns {
                    let row = Row(pattern: text, target: name, action: action.name, isRemote: action.isRemote, source: patternSource)
                    let pattern: RoutePattern
                    do { pattern = try RoutePattern(text) } catch {
                        problems.append("\(patternSource): \(error)")
                        continue
                    }
                    if let other = shapes[pattern.shape], other.target == name, other.action == action.name { continue }
                    if let other = shapes[pattern.shape] {
                        problems.append(
                            "conflicting routes '\(other.pattern)' (\(other.target)/\(other.action), \(other.source)) and '\(text)' "
                                + "(\(name)/\(action.name), \(patternSource)) match the same URLs"
                        )
                        continue
                    }
                    shapes[pattern.shape] = row
                    rows.append(row)
                }
            }
        }
        rows.sort { ($0.pattern, $0.target, $0.action) < ($1.pattern, $1.target, $1.action) }
    }

    /// The table as aligned text.
    package var table: String {
        let header = Row(pattern: "PATTERN", target: "TARGET", action: "ACTION", isRemote: false, source: "DECLARED AT")
        let all = [header] + rows
        let patternWidth = all.map(\.pattern.count).max() ?? 0
        let callWidth = all.map { $0.target.count + $0.action.count + 1 }.max() ?? 0
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        return all.enumerated().map { index, row in
            let access = index == 0 ? "ACCESS" : (row.isRemote ? "remote" : "local")
            let call = index == 0 ? "TARGET/ACTION" : "\(row.target)/\(row.action)"
            return pad(row.pattern, patternWidth) + "  " + pad(call, callWidth) + "  " + pad(access, 6) + "  " + row.source
        }.joined(separator: "\n") + "\n"
    }
}
