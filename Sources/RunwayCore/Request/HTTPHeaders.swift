/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order and duplicates are kept, as on the wire. Values are checked for `\r`, `\n` and NUL
/// before a request is dispatched (``Request/validate()``), so header injection is a typed
/// error rather than a second header.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty header list.
    public init() {
        fields = []
    }

    /// Creates a header list from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value for `name` (case-insensitive); setting replaces every field of that name,
    /// setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) {
                if let newValue {
                    fields[index].value = newValue
                    removeAll(named: name, after: index)
                } else {
                    removeAll(named: name)
                }
            } else if let newValue {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Makes room for `count` fields, so that adding them does not reallocate.
    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Continues the last field's value with `more` after one space: an obsolete folded line
    /// (RFC 9112 §5.2) as a dispatcher reads it.
    package mutating func continueLastValue(with more: String) {
        guard let last = fields.indices.last else { return }
        fields[last].value += fields[last].value.isEmpty ? more : " " + more
    }

    /// Removes every field named `name`.
    public mutating func removeAll(named name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// Removes every field for which `shouldRemove` is true, in one pass.
    package mutating func removeAll(where shouldRemove: (Field) -> Bool) {
        fields.removeAll(where: shouldRemove)
    }

    private mutating func removeAll(named name: String, after index: Int) {
        var i = fields.count - 1
        while i > index {
            if fields[i].name.caseInsensitiveEquals(name) { fields.remove(at: i) }
            i -= 1
        }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Bytes allowed in a header name or a method (RFC 9110 `tchar`).
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        // One switch, no string scan: every header byte of every request passes here.
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The first field whose name or value cannot be sent safely, and why.
    func firstInvalidField() -> (Field, String)? {
        var hasHost = false
        for field in fields {
            if field.name.isEmpty || !field.name.allBytes(Self.isTokenByte) {
                return (field, "header name \(field.name.debugDescription) is not an HTTP token")
            }
            if !field.value.allBytes({ $0 != 0x0D && $0 != 0x0A && $0 != 0 }) {
                return (field, "header \"\(field.name)\" contains CR, LF or NUL")
            }
            if field.name.utf8.count == 4, field.name.caseInsensitiveEquals("host") {
                // libcurl would send the first alone, FoundationNetworking both joined by a comma.
                if hasHost { return (field, "two Host header fields: a request has one at most (RFC 9112 §3.2)") }
                hasHost = true
            }
        }
        return nil
    }
}

extension String {
    /// ASCII case-insensitive comparison, without allocating.
    package func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return withUTF8Bytes { x in
            other.withUTF8Bytes { y in
                for i in x.indices where x[i] != y[i] {
                    let lower = x[i] | 0x20
                    guard lower == y[i] | 0x20, lower >= 0x61, lower <= 0x7A else { return false }
                }
                return true
            }
        }
    }

    /// Whether `fragment`, lower-case ASCII and not empty, occurs in the string ignoring ASCII case, without
    /// allocating.
    package func containsIgnoringCase(lowercased fragment: String) -> Bool {
        withUTF8Bytes { text in
            fragment.withUTF8Bytes { part in
                guard part.count <= text.count else { return false }
                var start = 0
                while start + part.count <= text.count {
                    var offset = 0
                    while offset < part.count {
                        let byte = text[start + offset]
                        let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                        guard lower == part[offset] else { break }
                        offset += 1
                    }
                    if offset == part.count { return true }
                    start += 1
                }
                return false
            }
        }
    }
}
