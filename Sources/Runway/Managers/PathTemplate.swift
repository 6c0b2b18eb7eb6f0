import RunwayCore

/// A manager's ``APIManager/path`` with `{name}` placeholders, filled for each call from its
/// parameters: `products/{id}` with `id: 42` is `products/42`.
enum PathTemplate {
    /// Whether `path` has placeholders to fill, or a brace to refuse (most paths have neither:
    /// no work per call).
    static func hasPlaceholders(_ path: String) -> Bool {
        path.utf8.contains { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "}") }
    }

    /// `template` with each `{name}` replaced by the parameter `name`, percent-encoded as one
    /// path segment (everything but RFC 3986 unreserved characters, so a `/` or `?` in a value
    /// stays in its segment); the parameters used leave `parameters`, so they are not also sent
    /// in the query or body. A placeholder may appear more than once (`items/{id}/compare/{id}`):
    /// each takes the same value.
    /// - Throws: `RunwayError` `.paramsInvalid` naming a placeholder whose parameter is
    ///   missing, empty, `.` or `..`, or not a string, number or boolean; `.configuration` for a
    ///   template with an unclosed or empty `{}`, a `{` inside one, or a `}` that closes none.
    static func fill(_ template: String, from parameters: inout [String: JSON]) throws(RunwayError) -> String {
        var filled = ""
        var rest = Substring(template)
        var used: [String: String] = [:]
        while let open = rest.firstIndex(of: "{") {
            try literal(rest[..<open], of: template)
            filled += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw RunwayError(.configuration, "path \"\(template)\" has a '{' without its '}'", field: "path")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard !name.isEmpty else { throw RunwayError(.configuration, "path \"\(template)\" has an empty {}", field: "path") }
            guard !name.contains("{") else {
                throw RunwayError(.configuration, "path \"\(template)\" has a '{' inside a placeholder", field: "path")
            }
            if let segment = used[name] {
                filled += segment
            } else {
                let segment = RequestParameters.encode(try segment(name, parameters[name]))
                used[name] = segment
                parameters[name] = nil
                filled += segment
            }
            rest = rest[rest.index(after: close)...]
        }
        try literal(rest, of: template)
        return filled + rest
    }

    /// Throws `.configuration` for a `}` in the text between placeholders: it closes none (a
    /// mistyped placeholder, `products/id}`), and would be sent percent-encoded in the path.
    private static func literal(_ text: Substring, of template: String) throws(RunwayError) {
        guard text.contains("}") else { return }
        throw RunwayError(.configuration, "path \"\(template)\" has a '}' that closes no '{'", field: "path")
    }

    /// The text of the parameter `name` for a path segment.
    private static func segment(_ name: String, _ value: JSON?) throws(RunwayError) -> String {
        let text: String
        switch value {
        case .string(let string): text = string
        case .int(let number): text = String(number)
        case .double, .bool: text = value?.queryText ?? ""
        case nil, .null: throw RunwayError.paramsInvalid(field: name, "\(name) is missing: the path needs it")
        default: throw RunwayError.paramsInvalid(field: name, "\(name) must be a string, number or boolean to go in the path")
        }
        guard !text.isEmpty else { throw RunwayError.paramsInvalid(field: name, "\(name) is empty: the path needs it") }
        guard text != ".", text != ".." else {
            throw RunwayError.paramsInvalid(field: name, "\(name) is \"\(text)\", which would move the path up or nowhere")
        }
        return text
    }
}

/// The parameters a manager's call put into its path (`products/{id}`), carried in the call's
/// context: they are in no query or body, and ``ValidationInterceptor`` checks them with the rest.
enum PathParameters: ContextKey {
    typealias Value = [String: JSON]
}

/// The parameters a manager's call gave as JSON null and sent in its query, where null is spelled
/// as an empty value (`city=`): ``ValidationInterceptor`` counts them as absent, as it counts a
/// null member of a JSON body.
enum NullQueryParameters: ContextKey {
    typealias Value = Set<String>
}
