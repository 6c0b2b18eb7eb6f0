extension Redaction {
    /// An XML body (SOAP, feeds, XML APIs) with hidden values replaced: the content of each
    /// element whose name is hidden (`<password>…</password>`, `<ns:AccessToken>…`, children
    /// included) and the value of each attribute whose name is (`token="…"`), names matched as
    /// parameters are, without their namespace prefix; what comments and CDATA sections inside a
    /// hidden element hold is content, hidden with it, whatever markup it spells. Comments, CDATA
    /// sections outside hidden elements, processing instructions and declarations are as they
    /// were. A hidden element never closed is hidden to the end of the text, as is a hidden
    /// attribute's value whose quote never closes: a cut body shows no more than a whole one.
    package func applyToXML(_ text: String) -> String {
        var scanner = XMLRedactionScanner(text: text, redaction: self)
        return scanner.run()
    }
}

/// One pass over the text's scalars, copying them to `shown` with hidden values replaced. It
/// reads markup only as far as redaction needs: it checks nothing and never fails.
private struct XMLRedactionScanner {
    let scalars: [Unicode.Scalar]
    let redaction: Redaction
    var index = 0
    var shown = String.UnicodeScalarView()

    init(text: String, redaction: Redaction) {
        scalars = Array(text.unicodeScalars)
        self.redaction = redaction
    }

    mutating func run() -> String {
        while index < scalars.count {
            guard scalars[index] == "<" else {
                copy(1)
                continue
            }
            if starts(with: "<!--") {
                copy(through: "-->")
            } else if starts(with: "<![CDATA[") {
                copy(through: "]]>")
            } else if starts(with: "<?") {
                copy(through: "?>")
            } else if starts(with: "<!") || starts(with: "</") {
                copy(through: ">")
            } else {
                startTag()
            }
        }
        return String(shown)
    }

    /// `<name attribute="value" …>` or `…/>`; then, for a hidden element, its content.
    private mutating func startTag() {
        let name = self.name(from: index + 1)
        guard !name.isEmpty else {  // a `<` in text that is not markup
            copy(1)
            return
        }
        copy(1 + name.count)
        var closed = false
        var selfClosing = false
        while index < scalars.count {
            copyBlanks()
            if starts(with: "/>") {
                copy(2)
                (closed, selfClosing) = (true, true)
                break
            }
            if index < scalars.count, scalars[index] == ">" {
                copy(1)
                closed = true
                break
            }
            attribute()
        }
        guard closed, !selfClosing, hides(name) else { return }
        hideContent(of: name)
    }

    /// `name="value"`, `name='value'`, `name=value` or a bare `name`, the value hidden when the
    /// name is.
    private mutating func attribute() {
        let name = self.name(from: index)
        guard !name.isEmpty else {  // a stray character inside the tag
            copy(1)
            return
        }
        copy(name.count)
        copyBlanks()
        guard index < scalars.count, scalars[index] == "=" else { return }
        copy(1)
        copyBlanks()
        guard index < scalars.count else { return }
        let hidden = hides(name) && !isNamespaceDeclaration(name)
        let quote = scalars[index]
        if quote == "\"" || quote == "'" {
            copy(1)
            let end = scalars[index...].firstIndex(of: quote)
            if hidden {
                shown.append(contentsOf: Redaction.placeholder.unicodeScalars)
                index = end ?? scalars.count
            } else {
                copy((end ?? scalars.count) - index)
            }
            if end != nil { copy(1) }
        } else {
            let end = scalars[index...].firstIndex { $0 == ">" || Self.isBlank($0) || $0 == "/" } ?? scalars.count
            if hidden {
                shown.append(contentsOf: Redaction.placeholder.unicodeScalars)
                index = end
            } else {
                copy(end - index)
            }
        }
    }

    /// Replaces everything up to the end tag that closes the element `name` (elements of the
    /// same name inside it counted) by the placeholder, or everything left if none does.
    private mutating func hideContent(of name: [Unicode.Scalar]) {
        var depth = 1
        var probe = index
        while probe < scalars.count, let open = scalars[probe...].firstIndex(of: "<") {
            // A comment, CDATA section or processing instruction is content, whatever it holds.
            if let section = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")].first(where: {
                scalars[open...].starts(with: $0.0.unicodeScalars)
            }) {
                probe = end(of: section.1, from: open + section.0.unicodeScalars.count)
                continue
            }
            let isEnd = open + 1 < scalars.count && scalars[open + 1] == "/"
            let found = self.name(from: open + (isEnd ? 2 : 1))
            probe = open + 1
            guard found == name else { continue }
            if isEnd {
                depth -= 1
                if depth == 0 {
                    shown.append(contentsOf: Redaction.placeholder.unicodeScalars)
                    index = open
                    return
                }
            } else if let end = scalars[probe...].firstIndex(of: ">"), scalars[end - 1] != "/" {
                depth += 1
            }
        }
        shown.append(contentsOf: Redaction.placeholder.unicodeScalars)
        index = scalars.count
    }

    /// The name starting at `start`: up to a blank, `=`, `/`, `>` or `<`.
    private func name(from start: Int) -> [Unicode.Scalar] {
        guard start < scalars.count else { return [] }
        let end = scalars[start...].firstIndex { Self.isBlank($0) || $0 == "=" || $0 == "/" || $0 == ">" || $0 == "<" } ?? scalars.count
        return Array(scalars[start..<end])
    }

    /// Whether a qualified name's local part (after any `prefix:`) is a hidden parameter.
    private func hides(_ name: [Unicode.Scalar]) -> Bool {
        let local = name.lastIndex(of: ":").map { name[($0 + 1)...] } ?? name[...]
        var text = String.UnicodeScalarView()
        text.append(contentsOf: local)
        return !text.isEmpty && redaction.hidesParameter(String(text))
    }

    /// `xmlns:token="…"` names a namespace, not a secret.
    private func isNamespaceDeclaration(_ name: [Unicode.Scalar]) -> Bool {
        name.starts(with: "xmlns:".unicodeScalars)
    }

    private func starts(with prefix: String) -> Bool {
        scalars[index...].starts(with: prefix.unicodeScalars)
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    private mutating func copy(_ count: Int) {
        let end = min(index + count, scalars.count)
        shown.append(contentsOf: scalars[index..<end])
        index = end
    }

    private mutating func copyBlanks() {
        while index < scalars.count, Self.isBlank(scalars[index]) { copy(1) }
    }

    /// Copies up to and including `terminator`, or to the end of the text.
    private mutating func copy(through terminator: String) {
        copy(end(of: terminator, from: index + 1) - index)
    }

    /// The index just past the first `terminator` at or after `start`, or the end of the text.
    private func end(of terminator: String, from start: Int) -> Int {
        let marker = Array(terminator.unicodeScalars)
        var probe = start
        while probe < scalars.count {
            if scalars[probe...].starts(with: marker) { return probe + marker.count }
            probe += 1
        }
        return scalars.count
    }
}
