/// A URL pattern such as `app://listing/<int:id>` or `app://search/<path:rest>`.
///
/// The host is the first segment. Segments are:
/// - a literal (`listing`, percent-decoded when the pattern is read; a literal host is lowercased),
/// - a typed placeholder `<int:id>` (see ``RouteConverter``),
/// - an untyped placeholder `<id>` (or `<string:id>`), or the wildcard `*` (matches one segment,
///   captures nothing),
/// - a catch-all `<path:rest>` or `**`, last only, matching one or more remaining segments.
///
/// Precedence never depends on registration order: candidates are compared segment by segment
/// from the left; at the first position where they differ, literal > typed > untyped >
/// catch-all; when a more specific branch dead-ends further down, matching backtracks.
/// Two patterns with the same ``shape`` match exactly the same URLs and are a conflict.
public struct RoutePattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case typed(converter: String, name: String)
        case untyped(name: String?)
        case catchAll(name: String?)

        /// The placeholder's name (`nil`: a literal or a wildcard).
        var name: String? {
            switch self {
            case .literal: nil
            case .typed(_, let name): name
            case .untyped(let name), .catchAll(let name): name
            }
        }
    }

    /// The scheme (namespace), lowercased.
    public let scheme: String
    let segments: [Segment]
    /// The pattern as written.
    public let description: String

    /// Reads a pattern; a malformed one is `.malformedPattern`.
    public init(_ text: String) throws {
        func fail(_ why: String) -> MediatorError {
            MediatorError(.malformedPattern, "route pattern '\(text)': \(why)")
        }
        description = text
        guard let separator = text.firstRange(of: "://") else { throw fail("no '://' after the scheme") }
        let schemeText = text[..<separator.lowerBound]
        guard let first = schemeText.utf8.first, URLScanner.isLetter(first),
            schemeText.utf8.allSatisfy({
                URLScanner.isLetter($0) || URLScanner.isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: ".")
            })
        else { throw fail("the scheme is not valid") }
        scheme = schemeText.lowercased()
        var rest = text[separator.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty else { throw fail("no host") }
        guard !rest.contains("?"), !rest.contains("#") else { throw fail("patterns have no query or fragment") }
        var segments: [Segment] = []
        var names: Set<String> = []
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        for (position, part) in parts.enumerated() {
            guard !part.isEmpty else { throw fail("empty segment") }
            if let last = segments.last, case .catchAll = last { throw fail("a catch-all must be the last segment") }
            let segment: Segment
            if part == "*" {
                segment = .untyped(name: nil)
            } else if part == "**" {
                segment = .catchAll(name: nil)
            } else if part.hasPrefix("<") {
                guard part.hasSuffix(">"), part.count > 2 else { throw fail("'\(part)' is not a placeholder") }
                let inner = part.dropFirst().dropLast()
                let pieces = inner.split(separator: ":", omittingEmptySubsequences: false)
                guard pieces.count <= 2 else { throw fail("'\(part)' has more than one ':'") }
                let name = String(pieces.last ?? "")
                guard Self.isIdentifier(name) else { throw fail("placeholder name '\(name)' is not an identifier") }
                guard names.insert(name).inserted else { throw fail("placeholder '\(name)' appears twice") }
                if pieces.count == 1 {
                    segment = .untyped(name: name)
                } else {
                    let converter = String(pieces[0])
                    guard Self.isIdentifier(converter) else { throw fail("converter '\(converter)' is not an identifier") }
                    switch converter {
                    case "string": segment = .untyped(name: name)
                    case "path": segment = .catchAll(name: name)
                    default: segment = .typed(converter: converter, name: name)
                    }
                }
            } else {
                guard !part.contains("<"), !part.contains(">"), !part.contains("*") else {
                    throw fail("'\(part)' mixes a literal with '<', '>' or '*'")
                }
                var literal = try Self.percentDecoded(part, fail)
                if position == 0 { literal = URLScanner.lowercasedHost(literal) }
                segment = .literal(literal)
            }
            segments.append(segment)
        }
        self.segments = segments
    }

    /// The names of the placeholders, left to right (wildcards have none).
    public var placeholderNames: [String] {
        segments.compactMap(\.name)
    }

    /// The pattern with placeholder names removed: two patterns with the same shape match the
    /// same URLs, which is a conflict. A literal's `%` and `/` are written `%25` and `%2F`, so a
    /// literal holding an encoded `/` (`a%2F%3Db`, one segment) is not taken for two segments.
    public var shape: String {
        scheme + "://"
            + segments.map {
                switch $0 {
                case .literal(let text): "=" + Self.shapeEscaped(text)
                case .typed(let converter, _): "<" + converter + ">"
                case .untyped: "<>"
                case .catchAll: "<**>"
                }
            }.joined(separator: "/")
    }

    /// `text` with `%` and `/` percent-encoded: a literal in a ``shape`` never holds the separator.
    private static func shapeEscaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "/") }) else { return text }
        return text.replacing("%", with: "%25").replacing("/", with: "%2F")
    }

    /// Typed converter names used by the pattern.
    var converterNames: [String] {
        segments.compactMap { if case .typed(let converter, _) = $0 { converter } else { nil } }
    }

    public static func == (lhs: RoutePattern, rhs: RoutePattern) -> Bool { lhs.description == rhs.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    static func isIdentifier<S: StringProtocol>(_ text: S) -> Bool {
        guard let first = text.utf8.first, URLScanner.isLetter(first) || first == UInt8(ascii: "_") else { return false }
        return text.utf8.allSatisfy { URLScanner.isLetter($0) || URLScanner.isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    private static func percentDecoded(_ part: Substring, _ fail: (String) -> MediatorError) throws -> String {
        let utf8 = Array(part.utf8)
        do {
            return try URLScanner.decode(utf8, 0, utf8.count, plusAsSpace: false)
        } catch {
            throw fail("literal '\(part)' has a bad percent escape")
        }
    }
}
