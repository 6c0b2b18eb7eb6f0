import Foundation
import RunwayCore

/// A regular expression compiled once at registration.
final class CompiledPattern: @unchecked Sendable {
    // Safe: NSRegularExpression is immutable after creation and documented as safe to use from
    // several threads at once; this class never mutates it.
    private let expression: NSRegularExpression
    let source: String

    init(_ source: String) throws(RunwayError) {
        do {
            expression = try NSRegularExpression(pattern: source)
        } catch {
            throw RunwayError(.configuration, "invalid pattern \"\(source)\"", underlying: error)
        }
        self.source = source
    }

    func matches(_ text: String) -> Bool {
        expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
