import RunwayCore

/// A regular expression compiled once at registration: the standard library's `Regex`, reading
/// the ICU syntax `NSRegularExpression` read and matching Unicode scalars one by one, as ICU
/// does (not whole characters, Swift's default). Where the two differ, see
/// ``ParameterConstraint/pattern(_:)``.
final class CompiledPattern: @unchecked Sendable {
    // @unchecked Sendable: `Regex` is not `Sendable` (its output type may hold anything), but
    // this one is only read. Made from a string, it has no custom components; the standard
    // library compiles its program once, on the first match, behind an atomic, and `init` runs
    // that first match, so every later match reads a finished program.
    private let expression: Regex<AnyRegexOutput>
    let source: String

    init(_ source: String) throws(RunwayError) {
        do {
            expression = try Regex(source).matchingSemantics(.unicodeScalar)
        } catch {
            throw RunwayError(.configuration, "invalid pattern \"\(source)\": \(error)", underlying: error)
        }
        self.source = source
        _ = "".contains(expression)
    }

    /// Whether the pattern matches anywhere in `text` (anchors in the pattern say where).
    func matches(_ text: String) -> Bool {
        text.contains(expression)
    }
}
