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

    /// `Module/File.swift:line`, as registration sources are written.
    package var source: String { "\(module)/\(file):\(line)" }
}

/// An action found in a target's source text.
package struct ActionDeclaration: Sendable, Equatable {
    /// The action's name (when a literal).
    package var name: String
    /// Whether it says `access: .remote`.
    package var isRemote: Bool
    /// The string literals in its `routes: [...]` argument.
    package var routes: [String]
    /// The line of the declaration.
    package var line: Int
}

/// A problem the scan found (reported as `file:line: error: message`).
package struct CodegenDiagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where: `Module/File.swift:line`.
    package var source: String
    /// What.
    package var message: String

    package var description: String { "\(source): error: \(message)" }
}
