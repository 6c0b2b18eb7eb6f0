import Foundation
import RunwayMediator

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
                let name = qualifiedName(ns.substring(with: match.range(at: 3)))
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
            if name.contains(".") {
                // `extension Outer.Inner: MediatorTarget`: a nested type, which the app cannot register.
                diagnostics.append(nestedExtension(name, conforming, declarations: declarations, module: module, sources: sources))
                continue
            }
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
        guard isPublic(primary.modifiers) else {
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
        var names: [DeclaredName] = []
        var namesFile = file.path
        var actions: [ActionDeclaration] = []
        for entry in [primary] + extensions.filter({ !$0.isSame(as: primary) }) {
            let text = sources[entry.file].text
            let close = text.matchingBrace(entry.open)
            let body = String(decoding: text.code[entry.open..<min(close, text.code.count)], as: UTF8.self)
            if names.isEmpty {
                names = ownNames(in: body, baseOffset: entry.open, text: text)
                namesFile = sources[entry.file].path
            }
            actions += scanActions(body, baseOffset: entry.open, text: text, file: sources[entry.file].path)
        }
        let targetName = names.first?.value
        if let first = names.first, let other = names.first(where: { $0.value != first.value }) {
            // `#if DEBUG static let name = "a-debug" #else static let name = "a" #endif`: the
            // registration compiles the app's branch, but the listing and its checks read one name.
            let written = names.map { $0.value.map { "'\($0)'" } ?? "(not a literal)" }
            diagnostics.append(
                CodegenDiagnostic(
                    module: module, file: namesFile, line: other.line, severity: .warning,
                    message:
                        "\(name) declares `static let name` more than once (\(written.joined(separator: ", ")), under `#if`); "
                        + "routes are listed and checked under the first only, "
                        + (targetName.map { "'\($0)'" } ?? "which is not a literal")
                        + ", while the app registers the name of the branch it compiles"))
        }
        // Names the mediator refuses at start-up fail the build instead, where the file and line are known.
        if let targetName, !Mediator.Builder.isName(targetName) {
            return skip(.error, "its name '\(targetName)' \(Mediator.Builder.nameRule): the mediator would refuse it at start-up")
        }
        for action in actions where action.nameIsLiteral && !Mediator.Builder.isName(action.name) {
            diagnostics.append(
                CodegenDiagnostic(
                    module: module, file: action.file ?? file.path, line: action.line,
                    message:
                        "action name '\(action.name)' of \(name) \(Mediator.Builder.nameRule): the mediator would refuse it at start-up"))
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

    /// The diagnostic of `extension Outer.Inner: MediatorTarget`: an error when `Inner` is a
    /// public type nested in this module (as for a public nested target declared as one), a
    /// warning when it is not public or not found (the module may register it itself).
    private static func nestedExtension(
        _ name: String, _ conformance: Declaration, declarations: [String: [Declaration]], module: String,
        sources: [(path: String, text: SwiftSourceText)]
    ) -> CodegenDiagnostic {
        let file = sources[conformance.file]
        func diagnostic(_ severity: CodegenDiagnostic.Severity, _ why: String) -> CodegenDiagnostic {
            CodegenDiagnostic(
                module: module, file: file.path, line: file.text.line(at: conformance.offset), severity: severity,
                message: "\(name) conforms to \(protocolName) \(why)")
        }
        let parts = name.split(separator: ".").map(String.init)
        let rest = parts.dropFirst().joined(separator: ".")
        if parts.first == module, (declarations[rest] ?? []).contains(where: { !$0.isExtension }) {
            // `extension Shop.ShopTarget` in module Shop: the top-level type, spelled so the scan does not see it.
            return diagnostic(
                .warning,
                "through its module's name, which the scan does not follow, so it is not registered; "
                    + "write `extension \(rest): \(protocolName)`")
        }
        let nested = (declarations[parts.last ?? ""] ?? []).filter { !$0.isExtension && sources[$0.file].text.depth(at: $0.offset) > 0 }
        guard nested.contains(where: { isPublic($0.modifiers) }) else {
            return diagnostic(
                .warning,
                "but is not a public type at file scope, so it is not registered; "
                    + "declare it at file scope, or register it in the module's MediatorModule (register(into:))")
        }
        return diagnostic(.error, "but is nested; declare targets at file scope so the app can register them")
    }

    /// Whether `modifiers` say `public` or `open`.
    private static func isPublic(_ modifiers: String) -> Bool {
        !Set(modifiers.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)).isDisjoint(with: [
            "public", "open",
        ])
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

    /// A `static let name` of a target, in source order.
    private struct DeclaredName {
        /// The literal's value; `nil` when the name is not one string literal.
        var value: String?
        var line: Int
    }

    /// Every `static let name = "..."` (or `static var name: String { "..." }`) declared in `body`
    /// itself (the `{...}` at `baseOffset`): not one of a type nested in it (`enum Keys { static
    /// let name = "..." }`), which is not the target's name. More than one are `#if` branches.
    /// The literal may be raw (`#"delta"#`) and hold escapes (`"a\u{62}"`), read as the action
    /// and route literals are; an interpolation or an expression (`"a" + b`) has no value.
    private static func ownNames(in body: String, baseOffset: Int, text: SwiftSourceText) -> [DeclaredName] {
        let ns = body as NSString
        var names: [DeclaredName] = []
        for match in nameRegex.matches(in: body, range: NSRange(location: 0, length: ns.length)) {
            let start = baseOffset + utf8Offset(body, match.range.location)
            guard !text.inString[start], text.depth(from: baseOffset, to: start) == 1 else { continue }
            let literalStart = baseOffset + utf8Offset(body, match.range.location + match.range.length)
            let literalEnd = SwiftSourceText.literalEnd(text.code, literalStart)
            // The literal must be the whole value: what follows it on its line is `}`, `;` or nothing.
            let rest = text.code[literalEnd...].prefix { $0 != UInt8(ascii: "\n") }
                .drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
            let ends = rest.first.map { $0 == UInt8(ascii: "}") || $0 == UInt8(ascii: ";") } ?? true
            let value = ends ? StringLiteral(text.code[literalStart..<literalEnd]).value : nil
            names.append(DeclaredName(value: value, line: text.line(at: start)))
        }
        return names
    }

    /// The `actions.action(...)` calls in `body` (the `{...}` at `baseOffset` of `file`).
    private static func scanActions(_ body: String, baseOffset: Int, text: SwiftSourceText, file: String) -> [ActionDeclaration] {
        var actions: [ActionDeclaration] = []
        let bytes = Array(body.utf8)
        let ns = body as NSString
        for match in actionRegex.matches(in: body, range: NSRange(location: 0, length: ns.length)) {
            let start = utf8Offset(body, match.range.location)
            guard !text.inString[baseOffset + start] else { continue }
            let openParen = utf8Offset(body, match.range.location + match.range.length - 1)
            // The arguments, split as Swift does: a `"` after an escaped backslash (`"dir\\"`)
            // ends its literal, and one argument's text never runs on into the next call.
            var arguments = SwiftSourceText.list(bytes, open: openParen).elements.map(labelled)
            guard !arguments.isEmpty, arguments[0].label == nil else { continue }
            let first = arguments.removeFirst().value
            var action = ActionDeclaration(
                name: String(decoding: first, as: UTF8.self), isRemote: false, routes: [], line: text.line(at: baseOffset + start),
                file: file)
            if SwiftSourceText.isOneLiteral(first), let name = StringLiteral(first).value {
                action.name = name
            } else {
                action.nameIsLiteral = false
            }
            if let access = arguments.first(where: { $0.label == "access" })?.value {
                let written = String(decoding: access, as: UTF8.self)
                if written.range(of: Self.remoteAccess, options: .regularExpression) != nil {
                    action.isRemote = true
                } else if written.range(of: Self.localAccess, options: .regularExpression) == nil {
                    action.unreadableAccess = written
                }
            }
            if let routes = arguments.first(where: { $0.label == "routes" })?.value {
                // `[...]` alone is read element by element; anything else (`Routes.all`, `base + [...]`) is one expression.
                let list = SwiftSourceText.list(Array(routes), open: 0)
                let elements = routes.first == UInt8(ascii: "[") && list.close == routes.count - 1 ? list.elements : [routes]
                for element in elements {
                    if SwiftSourceText.isOneLiteral(element), let value = StringLiteral(element).value {
                        action.routes.append(value)
                    } else {
                        // An interpolation, a constant, a call: made at run time, not read here.
                        action.runtimeRoutes.append(String(decoding: element, as: UTF8.self))
                    }
                }
            }
            actions.append(action)
        }
        return actions
    }

    /// `access: .remote`, also spelled with the type's name.
    private static let remoteAccess = #"^(?:(?:RunwayMediator\s*\.\s*)?ActionAccess\s*)?\.\s*remote$"#
    /// `access: .localOnly`, also spelled with the type's name.
    private static let localAccess = #"^(?:(?:RunwayMediator\s*\.\s*)?ActionAccess\s*)?\.\s*localOnly$"#

    /// An argument's label (`routes: [...]` has `routes`), and its value.
    private static func labelled(_ argument: ArraySlice<UInt8>) -> (label: String?, value: ArraySlice<UInt8>) {
        var cursor = argument.startIndex
        func isIdentifierByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        while cursor < argument.endIndex, isIdentifierByte(argument[cursor]) { cursor += 1 }
        let labelEnd = cursor
        while cursor < argument.endIndex, argument[cursor] == UInt8(ascii: " ") || argument[cursor] == UInt8(ascii: "\t") { cursor += 1 }
        guard labelEnd > argument.startIndex, cursor < argument.endIndex, argument[cursor] == UInt8(ascii: ":"),
            cursor + 1 == argument.endIndex || argument[cursor + 1] != UInt8(ascii: ":")
        else { return (nil, argument) }
        var value = argument[(cursor + 1)...]
        while let byte = value.first, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") {
            value = value.dropFirst()
        }
        return (String(decoding: argument[argument.startIndex..<labelEnd], as: UTF8.self), value)
    }

    /// A Swift identifier: letters of any script, `_`, digits after the first character, marks
    /// and emoji (`CaféTarget`, `目録Target`), or one in backticks (`` `ListingTarget` ``).
    private static let identifier = #"(?:[_\p{L}\p{So}][\w\p{So}]*|`[^`\s]+`)"#

    /// The name `identifier` declares: without its backticks (`` `Name` `` and `Name` are one type).
    private static func plainName(_ text: String) -> String {
        text.count > 1 && text.hasPrefix("`") && text.hasSuffix("`") ? String(text.dropFirst().dropLast()) : text
    }

    /// The type an extension names (`Outer.Inner`, `` Outer.`Inner` ``), each part without its backticks.
    private static func qualifiedName(_ text: String) -> String {
        text.split(separator: ".").map { plainName($0.trimmingCharacters(in: .whitespaces)) }.joined(separator: ".")
    }

    // (modifiers)? (struct|class|enum|actor|extension) Name (<generics>)? (: inheritance)? (where ...)? {
    // Groups: 1 modifiers, 2 keyword, 3 name, 4 generic parameters, 5 inheritance clause.
    private static let typeRegex = try! NSRegularExpression(  // a constant pattern, checked by the golden tests
        pattern:
            #"((?:(?:public|open|internal|package|fileprivate|private|final|indirect|nonisolated|@\w+(?:\([^)]*\))?)\s+)*)\b"#
            + #"(struct|class|enum|actor|"#
            + #"extension)\s+("# + identifier + #"(?:\s*\.\s*"# + identifier
            + #")*)(\s*<[^>{]*>)?\s*(?::\s*([^{]*?))?\s*(?:where\s[^{]*)?\{"#
    )
    // protocol Name (<associated types>)? (: inheritance)? (where requirements)? {
    private static let protocolRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"\bprotocol\s+("# + identifier + #")(?:\s*<[^>{]*>)?\s*(?::\s*([^{]*?))?\s*(?:where\s([^{]*))?\{"#)
    // typealias Name (<generics>)? = type
    private static let typealiasRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"\btypealias\s+("# + identifier + #")(?:\s*<[^>=]*>)?\s*=\s*([^\n;{}]+)"#)
    private static let nameRegex = try! NSRegularExpression(  // a constant pattern
        pattern: #"static\s+(?:let|var)\s+name\s*(?::\s*String\s*)?(?:=\s*|\{\s*(?:return\s+)?)(?=#*")"#)
    private static let actionRegex = try! NSRegularExpression(pattern: #"\.action\s*\("#)  // a constant pattern

    /// Converts a UTF-16 offset (NSString) to a UTF-8 offset.
    private static func utf8Offset(_ text: String, _ utf16Offset: Int) -> Int {
        let index = String.Index(utf16Offset: utf16Offset, in: text)
        return text.utf8.distance(from: text.utf8.startIndex, to: index)
    }
}
