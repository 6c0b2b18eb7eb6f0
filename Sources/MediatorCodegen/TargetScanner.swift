import Foundation

/// Finds `MediatorTarget` declarations in Swift source text, without a parser.
///
/// The convention: a business module declares each target as a **public, top-level** type
/// whose inheritance clause names `MediatorTarget` (`public struct ListingTarget: MediatorTarget`,
/// or `MediatorTarget & Sendable`), or conforms in an `extension ListingTarget: MediatorTarget`;
/// a typealias or a protocol of the same module that names or refines `MediatorTarget` counts
/// as `MediatorTarget` (another module's cannot be seen). Its name is read from
/// `static let name = "listing"` and its actions from `actions.action("detail", access: .remote,
/// routes: ["app://listing/<int:id>"]) { ... }` calls in the type's body or its extensions.
package enum TargetScanner {
    /// The protocol the scan looks for.
    package static let protocolName = "MediatorTarget"

    /// Scans one module's files (`(path relative to the module, contents)`).
    /// - Returns: Targets sorted by type name, and diagnostics (a warning for a non-public target,
    ///   which is skipped; an error for a nested public one).
    package static func scan(module: String, files: [(path: String, contents: String)]) -> (
        targets: [TargetDeclaration], diagnostics: [CodegenDiagnostic]
    ) {
        var targets: [TargetDeclaration] = []
        var diagnostics: [CodegenDiagnostic] = []
        let sources = files.map { (path: $0.path, text: SwiftSourceText($0.contents)) }

        // Every type declaration and extension, by name.
        var declarations: [String: [Declaration]] = [:]
        for (fileIndex, source) in sources.enumerated() {
            let code = source.text.string
            let ns = code as NSString
            for match in typeRegex.matches(in: code, range: NSRange(location: 0, length: ns.length)) {
                let keyword = ns.substring(with: match.range(at: 2))
                let name = plainName(ns.substring(with: match.range(at: 3)))
                let modifiers = match.range(at: 1).location == NSNotFound ? "" : ns.substring(with: match.range(at: 1))
                let inherits = match.range(at: 5).location == NSNotFound ? [] : conformanceNames(ns.substring(with: match.range(at: 5)))
                let offset = utf8Offset(code, match.range(at: 2).location)
                let open = utf8Offset(code, match.range.location + match.range.length - 1)
                guard !source.text.inString[offset] else { continue }
                declarations[name, default: []].append(
                    Declaration(
                        file: fileIndex, offset: offset, open: open, modifiers: modifiers, inherits: inherits,
                        isExtension: keyword == "extension", isGeneric: match.range(at: 4).location != NSNotFound,
                        conditions: source.text.conditions(at: offset)))
            }
        }

        let targetProtocols = mediatorTargetNames(module: module, sources: sources)
        for name in declarations.keys.sorted() {
            guard let entries = declarations[name] else { continue }
            func conforms(_ entry: Declaration) -> Bool { entry.inherits.contains(where: targetProtocols.contains) }
            guard let conforming = entries.first(where: conforms) else { continue }
            // Each declaration of the type is a target under its own `#if` conditions (a type
            // declared once per branch is registered in each); its extensions add to every one.
            // A type nested in another is another type of the same name (`API.Listing` beside
            // the target `Listing`): it is a target only when it names the protocol itself, never
            // through an extension, which (at file scope, unqualified) extends the top-level type.
            let extensionConformance = entries.first { $0.isExtension && conforms($0) }
            let primaries = entries.filter { entry in
                !entry.isExtension
                    && (conforms(entry) || (extensionConformance != nil && sources[entry.file].text.depth(at: entry.offset) == 0))
            }
            for primary in primaries.isEmpty ? [conforming] : primaries {
                let conformance = conforms(primary) ? primary : extensionConformance ?? conforming
                if let target = target(
                    name, declared: primary, conformance: conformance, extensions: entries.filter(\.isExtension), module: module,
                    sources: sources, diagnostics: &diagnostics)
                {
                    targets.append(target)
                }
            }
        }
        return (targets, diagnostics)
    }

    /// The names that make a type a target in this module: `MediatorTarget`, and the typealiases
    /// and protocols declared in the module that name or refine it (`typealias Routable =
    /// MediatorTarget`, `protocol ScreenTarget: MediatorTarget`, `protocol P where Self:
    /// MediatorTarget`), through one another too, in any order. Another module's are not seen.
    private static func mediatorTargetNames(module: String, sources: [(path: String, text: SwiftSourceText)]) -> Set<String> {
        var declared: [(name: String, names: [String])] = []
        for source in sources {
            let code = source.text.string
            let ns = code as NSString
            for regex in [protocolRegex, typealiasRegex] {
                for match in regex.matches(in: code, range: NSRange(location: 0, length: ns.length))
                where !source.text.inString[utf8Offset(code, match.range.location)] {
                    var clause = match.range(at: 2).location == NSNotFound ? "" : ns.substring(with: match.range(at: 2))
                    if match.numberOfRanges > 3, match.range(at: 3).location != NSNotFound {
                        // `where Self: A & B, T: C`: the requirements on Self.
                        let requirements = ns.substring(with: match.range(at: 3)).split(separator: ",")
                        for requirement in requirements where requirement.contains("Self") {
                            let sides = requirement.split(separator: ":", maxSplits: 1)
                            if sides.count == 2, sides[0].split(whereSeparator: \.isWhitespace) == ["Self"] { clause += "," + sides[1] }
                        }
                    }
                    declared.append((plainName(ns.substring(with: match.range(at: 1))), conformanceNames(clause)))
                }
            }
        }
        var names: Set<String> = [protocolName, "RunwayMediator." + protocolName]
        var grew = true
        while grew {
            grew = false
            for entry in declared where !names.contains(entry.name) && entry.names.contains(where: names.contains) {
                names.formUnion([entry.name, module + "." + entry.name])
                grew = true
            }
        }
        return names
    }

    /// The type names of an inheritance clause or a composition: `@preconcurrency A, B & C<D>`
    /// gives A, B and C.
    private static func conformanceNames(_ clause: String) -> [String] {
        clause.split(whereSeparator: { $0 == "," || $0 == "&" }).compactMap { part in
            let type = part.split(separator: "<").first ?? ""
            let words = type.split(whereSeparator: { $0.isWhitespace || $0 == "(" || $0 == ")" })
            return words.last { !$0.hasPrefix("@") && $0 != "any" && $0 != "some" }.map { plainName(String($0)) }
        }
    }

    /// The target `primary` declares (with the actions of its extensions), or `nil` with a
    /// diagnostic when the app cannot register it.
    private static func target(
        _ name: String, declared primary: Declaration, conformance: Declaration, extensions: [Declaration], module: String,
        sources: [(path: String, text: SwiftSourceText)], diagnostics: inout [CodegenDiagnostic]
    ) -> TargetDeclaration? {
        let file = sources[primary.file]
        let line = file.text.line(at: primary.offset)
        func skip(_ severity: CodegenDiagnostic.Severity, _ why: String) -> TargetDeclaration? {
            diagnostics.append(
                CodegenDiagnostic(
                    module: module, file: file.path, line: line, severity: severity,
                    message: "\(name) conforms to \(protocolName) but \(why)"))
            return nil
        }
        // A non-public target is the module's own business (its MediatorModule may register
        // it): skipped with a warning, never an error that fails the app's build.
        let modifierWords = Set(primary.modifiers.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init))
        guard !modifierWords.isDisjoint(with: ["public", "open"]) else {
            return skip(
                .warning,
                "is not public, so it is not registered; "
                    + "if it should be, make it public, or register it in the module's MediatorModule (register(into:))")
        }
        if file.text.depth(at: primary.offset) > 0 {
            return skip(.error, "is nested; declare targets at file scope so the app can register them")
        }
        if primary.isGeneric {
            // `Module::Pager.self` cannot infer the parameters: the generated file would not compile.
            return skip(
                .warning,
                "is generic, so it is not registered (the app cannot name its type arguments); "
                    + "register a specialization in the module's MediatorModule (register(into:))")
        }
        var targetName: String?
        var actions: [ActionDeclaration] = []
        for entry in [primary] + extensions.filter({ !$0.isSame(as: primary) }) {
            let text = sources[entry.file].text
            let close = text.matchingBrace(entry.open)
            let body = String(decoding: text.code[entry.open..<min(close, text.code.count)], as: UTF8.self)
            if targetName == nil { targetName = ownName(in: body, baseOffset: entry.open, text: text) }
            actions += scanActions(body, baseOffset: entry.open, text: text)
        }
        // The type must exist and conform: its declaration's conditions, then those of the
        // extension that adds the conformance (less the branches both are in).
        var conditions = primary.conditions
        if !conformance.isSame(as: primary) {
            let shared = zip(primary.conditions, conformance.conditions).prefix { $0 == $1 }.count
            conditions += conformance.conditions.dropFirst(shared)
        }
        return TargetDeclaration(
            module: module, typeName: name, file: file.path, line: line, targetName: targetName,
            actions: actions.sorted { ($0.line, $0.name) < ($1.line, $1.name) }, conditions: conditions)
    }

    /// A type declaration or extension.
    private struct Declaration {
        /// The file's index, and the keyword's offset in it.
        var file: Int
        var offset: Int
        /// The offset of the body's `{`.
        var open: Int
        /// What precedes the keyword (`public final`, attributes).
        var modifiers: String
        /// The inheritance clause's names.
        var inherits: [String]
        var isExtension = false
        /// Whether it declares generic parameters (`struct Pager<Item>`).
        var isGeneric = false
        /// The `#if` branches it is in.
        var conditions: [ConditionalBranch]

        func isSame(as other: Declaration) -> Bool { file == other.file && offset == other.offset }
    }

    /// The literal of the first `static let name = "..."` (or `static var name: String { "..." }`)
    /// declared in `body` itself (the `{...}` at `baseOffset`): not one of a type nested in it
    /// (`enum Keys { static let name = "..." }`), which is not the target's name.
    private static func ownName(in body: String, baseOffset: Int, text: SwiftSourceText) -> String? {
        let ns = body as NSString
        for match in nameRegex.matches(in: body, range: NSRange(location: 0, length: ns.length)) {
            let start = baseOffset + utf8Offset(body, match.range.location)
            guard !text.inString[start], text.depth(from: baseOffset, to: start) == 1 else { continue }
            return ns.substring(with: match.range(at: 1))
        }
        return nil
    }

    private static func scanActions(_ body: String, baseOffset: Int, text: SwiftSourceText) -> [ActionDeclaration] {
        var actions: [ActionDeclaration] = []
        let bytes = Array(body.utf8)
        let ns = body as NSString
        for match in actionRegex.matches(in: body, range: NSRange(location: 0, length: ns.length)) {
            let start = utf8Offset(body, match.range.location)
            guard !text.inString[baseOffset + start] else { continue }
            let openParen = utf8Offset(body, match.range.location + match.range.length - 1)
            // The argument list: up to the matching ')'.
            var depth = 0
            var index = openParen
            var inLiteral = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") && (index == 0 || bytes[index - 1] != UInt8(ascii: "\\")) { inLiteral.toggle() }
                if !inLiteral {
                    if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "[") { depth += 1 }
                    if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 { break }
                    }
                }
                index += 1
            }
            let arguments = String(decoding: bytes[openParen..<min(index + 1, bytes.count)], as: UTF8.self)
            guard let name = firstCapture(firstStringRegex, in: arguments) else { continue }
            let isRemote = arguments.range(of: #"access\s*:\s*\.remote\b"#, options: .regularExpression) != nil
            var literals: [StringLiteral] = []
            if let label = arguments.range(of: #"routes\s*:\s*\["#, options: .regularExpression) {
                // The literals up to the `]` that closes the list, read as literals: a `]` or a `"`
                // inside one does not end it, and an interpolation is told apart.
                let argumentBytes = Array(arguments.utf8)
                literals = SwiftSourceText.arrayLiterals(
                    argumentBytes, open: arguments.utf8.distance(from: arguments.startIndex, to: label.upperBound) - 1)
            }
            actions.append(
                ActionDeclaration(
                    name: name, isRemote: isRemote, routes: literals.compactMap(\.value), line: text.line(at: baseOffset + start),
                    runtimeRoutes: literals.filter { $0.value == nil }.map(\.written)))
        }
        return actions
    }

    /// A Swift identifier: letters of any script, `_`, digits after the first character, marks
    /// and emoji (`CaféTarget`, `目録Target`), or one in backticks (`` `ListingTarget` ``).
    private static let identifier = #"(?:[_\p{L}\p{So}][\w\p{So}]*|`[^`\s]+`)"#

    /// The name `identifier` declares: without its backticks (`` `Name` `` and `Name` are one type).
    private static func plainName(_ text: String) -> String {
        text.count > 1 && text.hasPrefix("`") && text.hasSuffix("`") ? String(text.dropFirst().dropLast()) : text
    }

    // (modifiers)? (struct|class|enum|actor|extension) Name (<generics>)? (: inheritance)? (where ...)? {
    // Groups: 1 modifiers, 2 keyword, 3 name, 4 generic parameters, 5 inheritance clause.
    private static let typeRegex = try! NSRegularExpression(  // a constant pattern, checked by the golden tests
        pattern:
            #"((?:(?:public|open|internal|package|fileprivate|private|final|indirect|nonisolated|@\w+(?:\([^)]*\))?)\s+)*)\b"#
            + #"(struct|class|enum|actor|"#
            + #"extension)\s+("# + identifier + #")(\s*<[^>{]*>)?\s*(?::\s*([^{]*?))?\s*(?:where\s[^{]*)?\{"#
    )
    // protocol Name (<associated types>)? (: inheritance)? (where requirements)? {
    private static let protocolRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"\bprotocol\s+("# + identifier + #")(?:\s*<[^>{]*>)?\s*(?::\s*([^{]*?))?\s*(?:where\s([^{]*))?\{"#)
    // typealias Name (<generics>)? = type
    private static let typealiasRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"\btypealias\s+("# + identifier + #")(?:\s*<[^>=]*>)?\s*=\s*([^\n;{}]+)"#)
    private static let nameRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"static\s+(?:let|var)\s+name\s*(?::\s*String\s*)?(?:=\s*|\{\s*(?:return\s+)?)"([^"\\]*)""#)
    private static let actionRegex = try! NSRegularExpression(pattern: #"\.action\s*\("#)  // a constant pattern
    private static let firstStringRegex = try! NSRegularExpression(pattern: #"^\(\s*"([^"\\]*)""#)  // a constant pattern

    private static func firstCapture(_ regex: NSRegularExpression, in text: String) -> String? {
        let ns = text as NSString
        guard let match = regex.firstMatch(in: text, range: NSRange(location: 0, length: ns.length)),
            match.range(at: 1).location != NSNotFound
        else { return nil }
        return ns.substring(with: match.range(at: 1))
    }

    /// Converts a UTF-16 offset (NSString) to a UTF-8 offset.
    private static func utf8Offset(_ text: String, _ utf16Offset: Int) -> Int {
        let index = String.Index(utf16Offset: utf16Offset, in: text)
        return text.utf8.distance(from: text.utf8.startIndex, to: index)
    }
}
