/// A `MediatorTarget` found in a module's source text.
package struct TargetDeclaration: Sendable, Equatable {
    /// The module (SwiftPM target) that declares it.
    package var module: String
    /// The type's name.
    package var typeName: String
    /// The file, relative to the module (`Listing/ListingTarget.swift`).
    package var file: String
    /// The line of the declaration.
    package var line: Int
    /// The value of `static let name = "..."`, when it is a literal.
    package var targetName: String?
    /// The actions declared with `actions.action("name", ...)` in the type's body or extensions.
    package var actions: [ActionDeclaration]
    /// The `#if` branches the declaration (and the extension that makes it conform) is in,
    /// outermost first: the registration is compiled under the same conditions.
    package var conditions: [ConditionalBranch] = []

    /// `Module/File.swift:line`, as registration sources are written.
    package var source: String { "\(module)/\(file):\(line)" }
}

/// An action found in a target's source text.
package struct ActionDeclaration: Sendable, Equatable {
    /// The action's name: the literal's value, or the expression as written when
    /// ``nameIsLiteral`` is false.
    package var name: String
    /// Whether the name is a string literal (not a constant or an expression, which only the
    /// running app knows): an action named otherwise is not listed or checked.
    package var nameIsLiteral = true
    /// Whether it says `access: .remote`.
    package var isRemote: Bool
    /// The string literals in its `routes: [...]` argument.
    package var routes: [String]
    /// The line of the declaration.
    package var line: Int
    /// The file it is declared in (relative to the module), when not the target's own (an
    /// extension in another file).
    package var file: String?
    /// The routes whose value is made at run time (an interpolation, a constant, a whole
    /// `routes:` expression that is not an array literal), as written: not listed or checked.
    package var runtimeRoutes: [String] = []
    /// Its `access:` argument as written when it is neither `.remote` nor `.local` (a variable):
    /// listed as local, with a warning.
    package var unreadableAccess: String?
}

/// A problem the scan found (reported as `file:line: error: message` or `file:line: warning: message`).
package struct CodegenDiagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// How bad: an error fails the build (and `swift package routes`), a warning is reported only.
    package enum Severity: String, Sendable {
        case error, warning
    }

    /// The module the file belongs to.
    package var module: String
    /// The file, relative to the module.
    package var file: String
    /// The line.
    package var line: Int
    /// Error or warning.
    package var severity: Severity
    /// What.
    package var message: String

    package init(module: String, file: String, line: Int, severity: Severity = .error, message: String) {
        self.module = module
        self.file = file
        self.line = line
        self.severity = severity
        self.message = message
    }

    /// Where: `Module/File.swift:line`.
    package var source: String { "\(module)/\(file):\(line)" }

    package var description: String { "\(source): \(severity.rawValue): \(message)" }
}
