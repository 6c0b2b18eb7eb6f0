/// A `MediatorTarget` found in a module's source text.
public struct TargetDeclaration: Sendable, Equatable {
    /// The module (SwiftPM target) that declares it.
    public var module: String
    /// The type's name.
    public var typeName: String
    /// The file, relative to the module (`Listing/ListingTarget.swift`).
    public var file: String
    /// The line of the declaration.
    public var line: Int
    /// The value of `static let name = "..."`, when it is a literal.
    public var targetName: String?
    /// The actions declared with `actions.action("name", ...)` in the type's body or extensions.
    public var actions: [ActionDeclaration]

    /// `Module/File.swift:line`, as registration sources are written.
    public var source: String { "\(module)/\(file):\(line)" }
}

/// An action found in a target's source text.
public struct ActionDeclaration: Sendable, Equatable {
    /// The action's name (when a literal).
    public var name: String
    /// Whether it says `access: .remote`.
    public var isRemote: Bool
    /// The string literals in its `routes: [...]` argument.
    public var routes: [String]
    /// The line of the declaration.
    public var line: Int
}

/// A problem the scan found (reported as `file:line: error: message`).
public struct CodegenDiagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where: `Module/File.swift:line`.
    public var source: String
    /// What.
    public var message: String

    public var description: String { "\(source): error: \(message)" }
}
