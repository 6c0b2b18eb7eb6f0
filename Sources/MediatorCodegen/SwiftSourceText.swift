/// Swift source text with comments blanked out (string literals kept), for a lightweight scan.
///
/// Not a parser: it knows `//` and nested `/* */` comments, `"..."`, `"""..."""` and raw
/// `#"..."#` literals, and regex literals (`/.../` and `#/.../#`), so that braces and keywords
/// inside comments, strings and regexes never count. Line numbers survive (comment characters
/// become spaces, newlines stay).
package struct SwiftSourceText: Sendable {
    /// The text with comments replaced by spaces.
    package let code: [UInt8]
    /// For each byte of `code`, whether it is inside a string literal.
    let inString: [Bool]
    /// After each `#if`, `#elseif`, `#else` or `#endif` line (its end's offset), the branches the
    /// text is in, outermost first.
    private let directives: [(end: Int, branches: [ConditionalBranch])]
    /// The offset of each line feed, in order: ``line(at:)`` searches it instead of counting
    /// from the start for each target and action of a file.
    private let newlines: [Int]

    /// Reads `text`.
    package init(_ text: String) {
        let bytes = Array(text.utf8)
        var code = bytes
        var inString = [Bool](repeating: false, count: bytes.count)
        var index = 0
        func at(_ i: Int) -> UInt8 { i < bytes.count ? bytes[i] : 0 }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), at(index + 1) == UInt8(ascii: "/") {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    code[index] = UInt8(ascii: " ")
                    index += 1
                }
            } else if byte == UInt8(ascii: "/"), at(index + 1) == UInt8(ascii: "*") {
                var depth = 0
                repeat {
                    if at(index) == UInt8(ascii: "/"), at(index + 1) == UInt8(ascii: "*") {
                        depth += 1
                        code[index] = UInt8(ascii: " ")
                        code[index + 1] = UInt8(ascii: " ")
                        index += 2
                    } else if at(index) == UInt8(ascii: "*"), at(index + 1) == UInt8(ascii: "/") {
                        depth -= 1
                        code[index] = UInt8(ascii: " ")
                        code[index + 1] = UInt8(ascii: " ")
                        index += 2
                    } else {
                        if bytes[index] != UInt8(ascii: "\n") { code[index] = UInt8(ascii: " ") }
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            } else if let end = Self.regexEnd(bytes, index) {
                // A regex literal counts as text, like a string: `/\{/` opens no scope.
                for i in index..<end { inString[i] = true }
                index = end
            } else if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && Self.startsRawString(bytes, index)) {
                var hashes = 0
                while at(index + hashes) == UInt8(ascii: "#") { hashes += 1 }
                let quoteStart = index + hashes
                let quotes = at(quoteStart + 1) == UInt8(ascii: "\"") && at(quoteStart + 2) == UInt8(ascii: "\"") ? 3 : 1
                let end = Self.literalEnd(bytes, index)
                for i in (quoteStart + quotes)..<max(quoteStart + quotes, end - quotes - hashes) where i < bytes.count {
                    inString[i] = true
                }
                index = end
            } else {
                index += 1
            }
        }
        self.code = code
        self.inString = inString
        directives = Self.readDirectives(code, inString)
        newlines = code.indices.filter { code[$0] == UInt8(ascii: "\n") }
    }

    /// The `#if` branches (outermost first) the text at `offset` is in.
    package func conditions(at offset: Int) -> [ConditionalBranch] {
        directives.last { $0.end <= offset }?.branches ?? []
    }

    /// Every conditional-compilation directive line, with the branches in effect after it.
    private static func readDirectives(_ code: [UInt8], _ inString: [Bool]) -> [(end: Int, branches: [ConditionalBranch])] {
        var directives: [(end: Int, branches: [ConditionalBranch])] = []
        var stack: [ConditionalBranch] = []
        func lineEnd(from start: Int) -> Int { code[start...].firstIndex(of: UInt8(ascii: "\n")) ?? code.count }
        var start = 0
        while start < code.count {
            let end = lineEnd(from: start)
            var first = start
            while first < end, code[first] == UInt8(ascii: " ") || code[first] == UInt8(ascii: "\t") { first += 1 }
            if first < end, code[first] == UInt8(ascii: "#"), !inString[first] {
                var keywordEnd = first + 1
                while keywordEnd < end, code[keywordEnd] >= UInt8(ascii: "a"), code[keywordEnd] <= UInt8(ascii: "z") { keywordEnd += 1 }
                let keyword = String(decoding: code[(first + 1)..<keywordEnd], as: UTF8.self)
                if ["if", "elseif", "else", "endif"].contains(keyword) {
                    // A condition is the rest of its line (Swift allows no more), spaces collapsed.
                    let condition = String(decoding: code[keywordEnd..<end], as: UTF8.self).split(whereSeparator: \.isWhitespace)
                        .joined(separator: " ")
                    switch keyword {
                    case "if": stack.append(ConditionalBranch(conditions: [condition]))
                    case "elseif": if !stack.isEmpty { stack[stack.count - 1].conditions.append(condition) }
                    case "else": if !stack.isEmpty { stack[stack.count - 1].isElse = true }
                    default: _ = stack.popLast()
                    }
                    directives.append((end, stack))
                }
            }
            start = end + 1
        }
        return directives
    }

    /// The offset just past the string literal whose opening `#`s or `"` are at `start` (or
    /// where an unterminated one-line literal stops: its line's end). An escape is `\` (`\#`
    /// in a raw literal), and an interpolation `\(...)` (`\#(...)`) is skipped to its closing
    /// parenthesis with the literals inside it, so a quote in `"\(f("{"))"` neither ends the
    /// literal nor lets its brace count as code.
    static func literalEnd(_ bytes: [UInt8], _ start: Int) -> Int {
        func at(_ i: Int) -> UInt8 { i < bytes.count ? bytes[i] : 0 }
        var hashes = 0
        while at(start + hashes) == UInt8(ascii: "#") { hashes += 1 }
        let quoteStart = start + hashes
        let multiline = at(quoteStart + 1) == UInt8(ascii: "\"") && at(quoteStart + 2) == UInt8(ascii: "\"")
        let quotes = multiline ? 3 : 1
        var cursor = quoteStart + quotes
        while cursor < bytes.count {
            if bytes[cursor] == UInt8(ascii: "\\"), (0..<hashes).allSatisfy({ at(cursor + 1 + $0) == UInt8(ascii: "#") }) {
                let escaped = cursor + 1 + hashes
                cursor = at(escaped) == UInt8(ascii: "(") ? interpolationEnd(bytes, escaped) : escaped + 1
                continue
            }
            if !multiline, bytes[cursor] == UInt8(ascii: "\n") { return cursor }
            if bytes[cursor] == UInt8(ascii: "\""),
                (0..<quotes).allSatisfy({ at(cursor + $0) == UInt8(ascii: "\"") }),
                (0..<hashes).allSatisfy({ at(cursor + quotes + $0) == UInt8(ascii: "#") })
            {
                return cursor + quotes + hashes
            }
            cursor += 1
        }
        return bytes.count
    }

    /// The offset just past the `)` that closes the interpolation whose `(` is at `open`.
    private static func interpolationEnd(_ bytes: [UInt8], _ open: Int) -> Int {
        var depth = 0
        var cursor = open
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && startsRawString(bytes, cursor)) {
                cursor = literalEnd(bytes, cursor)
                continue
            }
            if byte == UInt8(ascii: "(") { depth += 1 }
            if byte == UInt8(ascii: ")") {
                depth -= 1
                if depth == 0 { return cursor + 1 }
            }
            cursor += 1
        }
        return bytes.count
    }

    /// The offset just past the regex literal that starts at `start`, or `nil` when none does.
    ///
    /// An extended literal, `#/.../#` (any number of `#`s, over several lines when `#/` ends
    /// its line), ends at the first `/` followed by as many `#`s. A bare one, `/.../`, is taken
    /// where Swift takes it: where an expression starts (at a line's start, after `(`, `[`,
    /// `{`, `,`, `:`, `=`, an operator or a space), not followed by a space, and ending on the
    /// same line at an unescaped `/` that follows no space; `a/b/c` and `x / y` are divisions.
    static func regexEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
        func at(_ i: Int) -> UInt8 { i >= 0 && i < bytes.count ? bytes[i] : 0 }
        var hashes = 0
        while at(start + hashes) == UInt8(ascii: "#") { hashes += 1 }
        let slash = start + hashes
        guard at(slash) == UInt8(ascii: "/") else { return nil }
        if hashes > 0 {
            var cursor = slash + 1
            while cursor < bytes.count {
                if bytes[cursor] == UInt8(ascii: "\\") {
                    cursor += 2
                    continue
                }
                if bytes[cursor] == UInt8(ascii: "/"), (1...hashes).allSatisfy({ at(cursor + $0) == UInt8(ascii: "#") }) {
                    return cursor + 1 + hashes
                }
                cursor += 1
            }
            return bytes.count
        }
        let next = at(slash + 1)
        let spaces: [UInt8] = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0]
        // Not `//` or `/*` (comments), nor `/=` (an operator).
        guard !spaces.contains(next), next != UInt8(ascii: "/"), next != UInt8(ascii: "*"), next != UInt8(ascii: "=") else { return nil }
        let before = at(start - 1)
        let opensExpression = Array("([{,:=;!&|^~?<>+-*%".utf8) + spaces
        guard start == 0 || opensExpression.contains(before) else { return nil }
        var cursor = slash + 1
        while cursor < bytes.count, bytes[cursor] != UInt8(ascii: "\n") {
            if bytes[cursor] == UInt8(ascii: "\\") {
                cursor += 2
                continue
            }
            if bytes[cursor] == UInt8(ascii: "/") {
                // `x /y / z` is no regex: a bare literal never ends in a space.
                return spaces.contains(bytes[cursor - 1]) ? nil : cursor + 1
            }
            cursor += 1
        }
        return nil
    }

    static func startsRawString(_ bytes: [UInt8], _ index: Int) -> Bool {
        var cursor = index
        while cursor < bytes.count, bytes[cursor] == UInt8(ascii: "#") { cursor += 1 }
        return cursor < bytes.count && bytes[cursor] == UInt8(ascii: "\"")
    }

    /// The elements of the list whose `(` or `[` is at `open` in `bytes` (a call's arguments, an
    /// array literal's elements), split at its own commas, each without the spaces around it; a
    /// comma or bracket inside a literal, a closure or a nested list does not count. Empty
    /// elements (a trailing comma, `()`) are left out. `close` is the offset of the closing
    /// bracket, `nil` when the text ends first.
    static func list(_ bytes: [UInt8], open: Int) -> (elements: [ArraySlice<UInt8>], close: Int?) {
        var elements: [ArraySlice<UInt8>] = []
        func add(_ start: Int, _ end: Int) {
            var slice = bytes[start..<end]
            while let first = slice.first, Self.isSpace(first) { slice = slice.dropFirst() }
            while let last = slice.last, Self.isSpace(last) { slice = slice.dropLast() }
            if !slice.isEmpty { elements.append(slice) }
        }
        var depth = 0
        var cursor = open
        var start = open + 1
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && startsRawString(bytes, cursor)) {
                cursor = literalEnd(bytes, cursor)
                continue
            }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 {
                    add(start, cursor)
                    return (elements, cursor)
                }
            case UInt8(ascii: ","):
                if depth == 1 {
                    add(start, cursor)
                    start = cursor + 1
                }
            default:
                break
            }
            cursor += 1
        }
        add(min(start, bytes.count), bytes.count)
        return (elements, nil)
    }

    /// Whether `text` is one string literal and nothing else (`"a"`, `#"a"#`; not `"a" + b`).
    static func isOneLiteral(_ text: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(text)
        guard let first = bytes.first, first == UInt8(ascii: "\"") || (first == UInt8(ascii: "#") && startsRawString(bytes, 0)) else {
            return false
        }
        return literalEnd(bytes, 0) == bytes.count
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// The text as a string.
    package var string: String { String(decoding: code, as: UTF8.self) }

    /// The 1-based line of byte offset `offset`.
    package func line(at offset: Int) -> Int {
        // 1 + the line feeds before `offset`: the first index whose line feed is at or after it.
        var low = 0
        var high = newlines.count
        while low < high {
            let middle = (low + high) / 2
            if newlines[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low + 1
    }

    /// The offset of the brace matching the `{` at `open` (or the end of the text).
    func matchingBrace(_ open: Int) -> Int {
        var depth = 0
        var index = open
        while index < code.count {
            if !inString[index] {
                if code[index] == UInt8(ascii: "{") { depth += 1 }
                if code[index] == UInt8(ascii: "}") {
                    depth -= 1
                    if depth == 0 { return index }
                }
            }
            index += 1
        }
        return code.count
    }

    /// The brace depth at `offset` (0 at file scope).
    func depth(at offset: Int) -> Int { depth(from: 0, to: offset) }

    /// The brace depth at `offset` counted from `start` (1 just inside a `{` at `start`).
    func depth(from start: Int, to offset: Int) -> Int {
        var depth = 0
        for index in start..<max(start, min(offset, code.count)) where !inString[index] {
            if code[index] == UInt8(ascii: "{") { depth += 1 }
            if code[index] == UInt8(ascii: "}") { depth -= 1 }
        }
        return depth
    }
}

/// One `#if` block a declaration sits in, and which of its branches.
///
/// `conditions` are the conditions of the `#if` and of each `#elseif` up to and including the
/// declaration's branch, as written (spaces collapsed); `isElse` says the declaration is in the
/// `#else` branch after all of them. The generated code repeats that structure, so the
/// registration is compiled under the same conditions as the declaration.
package struct ConditionalBranch: Sendable, Equatable, Hashable {
    /// The `#if` condition, then each `#elseif` condition through the declaration's branch.
    package var conditions: [String]
    /// Whether the declaration is in the `#else` branch.
    package var isElse: Bool

    package init(conditions: [String], isElse: Bool = false) {
        self.conditions = conditions
        self.isElse = isElse
    }

    /// The directive lines that open the branch (`#if A`, `#elseif B`, `#else`); `#endif` closes it.
    package var openingLines: [String] {
        conditions.enumerated().map { index, condition in (index == 0 ? "#if " : "#elseif ") + condition } + (isElse ? ["#else"] : [])
    }
}

/// A one-line string literal as written, and its value when the source alone gives it.
package struct StringLiteral: Sendable, Equatable {
    /// The literal as written, quotes and `#`s included.
    package let written: String
    /// Its value, its escapes decoded; `nil` when it is built at run time (an interpolation), or is
    /// a multi-line or an unterminated literal.
    package let value: String?

    /// Reads the literal that `bytes` are, from its opening `#`s or `"` to its closing ones.
    package init(_ bytes: ArraySlice<UInt8>) {
        written = String(decoding: bytes, as: UTF8.self)
        value = Self.value(Array(bytes))
    }

    private static func value(_ bytes: [UInt8]) -> String? {
        let hashes = bytes.prefix { $0 == UInt8(ascii: "#") }.count
        let quote = UInt8(ascii: "\"")
        // One quote each side (not `"""`), and the same number of `#`s after the closing one.
        guard bytes.count >= 2 * hashes + 2, bytes[hashes] == quote, bytes[bytes.count - hashes - 1] == quote,
            bytes.suffix(hashes).allSatisfy({ $0 == UInt8(ascii: "#") }),
            !(bytes.count > hashes + 2 && bytes[hashes + 1] == quote && bytes[hashes + 2] == quote)
        else { return nil }
        let content = Array(bytes[(hashes + 1)..<(bytes.count - hashes - 1)])
        var decoded: [UInt8] = []
        var index = 0
        while index < content.count {
            // An escape is `\` followed by the literal's `#`s; anything else is the character itself.
            let escapes =
                content[index] == UInt8(ascii: "\\")
                && (0..<hashes).allSatisfy { index + 1 + $0 < content.count && content[index + 1 + $0] == UInt8(ascii: "#") }
            guard escapes else {
                decoded.append(content[index])
                index += 1
                continue
            }
            let escaped = index + 1 + hashes
            guard escaped < content.count else { return nil }
            switch content[escaped] {
            case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
            case quote: decoded.append(quote)
            case UInt8(ascii: "'"): decoded.append(UInt8(ascii: "'"))
            case UInt8(ascii: "n"): decoded.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "r"): decoded.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "t"): decoded.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "0"): decoded.append(0)
            case UInt8(ascii: "u"):
                // `\u{1F600}`: one to eight hex digits naming a Unicode scalar.
                guard escaped + 1 < content.count, content[escaped + 1] == UInt8(ascii: "{"),
                    let close = content[(escaped + 2)...].firstIndex(of: UInt8(ascii: "}")),
                    (1...8).contains(close - escaped - 2),
                    let number = UInt32(String(decoding: content[(escaped + 2)..<close], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(number)
                else { return nil }
                decoded.append(contentsOf: Array(String(Character(scalar)).utf8))
                index = close + 1
                continue
            default:
                return nil  // `\(...)`: an interpolation, built at run time
            }
            index = escaped + 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
