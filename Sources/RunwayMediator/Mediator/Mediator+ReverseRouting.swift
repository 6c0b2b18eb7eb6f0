#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Mediator {
    /// Builds the URL that reaches `target`/`action` with `parameters` (reverse routing).
    ///
    /// Uses the action's first declared pattern, or its implicit route. Placeholders are filled
    /// from `parameters` (typed ones must convert: `<int:id>` needs an integer; a custom
    /// converter's takes the segment's text, or a value its `format` writes) and percent-encoded
    /// (`/` inside a value becomes `%2F`; a catch-all keeps its `/`). The remaining parameters
    /// become the query, sorted by name; a `[String]` becomes a repeated key.
    /// - Throws: `.notFound` for an unknown action, `.cannotBuildURL` for a missing, mistyped or
    ///   unencodable parameter, a host placeholder's value with capital letters (the host comes
    ///   back lowercased), a query parameter with an empty name, a URL longer than
    ///   ``MediatorURLOptions/maxLength``, or a URL that ``resolve(_:origin:)`` would take to
    ///   another action (another route matching it first): a URL that does not reach the action
    ///   is never built. A local-only action's URL reaches it from inside the app only
    ///   (`perform(url:origin: .local)`); a remote call with it is refused as any remote call to
    ///   that action is (`.remoteCallForbidden`), and ``canOpen(url:)`` says `false`.
    public func url(target: String, action: String, parameters: MediatorParameters = [:]) throws -> String {
        let key = target.lowercased()
        guard let entry = storage.targets[key]?.actions[action] else {
            throw MediatorError(.notFound, "no action \(key)/\(action)", target: key, action: action)
        }
        let pattern: RoutePattern
        if let first = entry.patterns.first {
            pattern = first
        } else if storage.implicitRoutes {
            pattern = try RoutePattern("\(storage.defaultScheme)://\(key)/\(action)")
        } else {
            throw MediatorError(.cannotBuildURL, "action \(key)/\(action) has no route", target: key, action: action)
        }
        let url = try pattern.url(with: parameters, converters: storage.converters, target: key, action: action)
        let limit = storage.urlOptions.maxLength
        guard url.utf8.count <= limit else {
            throw MediatorError(
                .cannotBuildURL, "the URL for \(key)/\(action) would be \(url.utf8.count) bytes, over the \(limit) bytes resolve accepts",
                target: key, action: action)
        }
        // Another route may take the URL first (`<int:id>` declared before `<slug>`, a literal
        // segment equal to the value): a URL that opens something else is never handed out.
        // Checked from inside the app, and from outside too for an action open to remote calls.
        let origins: [CallOrigin] = entry.access == .remote ? [.local, .remote] : [.local]
        for origin in origins {
            let match = (try? resolve(url, origin: origin)) ?? nil
            guard let match, match.target == key, match.action == action else {
                let reached = match.map { "\($0.target)/\($0.action)" } ?? "no action"
                throw MediatorError(
                    .cannotBuildURL,
                    "the URL for \(key)/\(action) would be \(url), which reaches \(reached) for a \(origin) call: another route "
                        + "takes it first", target: key, action: action)
            }
        }
        return url
    }
}

extension RoutePattern {
    /// Fills the pattern with `parameters`; see ``Mediator/url(target:action:parameters:)``.
    func url(with parameters: MediatorParameters, converters: [String: RouteConverter], target: String?, action: String?) throws -> String {
        func fail(_ why: String, _ field: String? = nil) -> MediatorError {
            MediatorError(.cannotBuildURL, "cannot build a URL from '\(self)': \(why)", target: target, action: action, field: field)
        }
        func text(_ name: String) throws -> String {
            guard let value = parameters[name] else { throw fail("parameter '\(name)' is missing", name) }
            guard let text = Self.urlText(value) else { throw fail(Self.noURLForm(name, value), name) }
            return text
        }
        // A custom converter's value: its text as given, else as the converter writes it.
        func typedText(_ name: String, _ converter: RouteConverter) throws -> String {
            guard !converter.isBuiltIn, let value = parameters[name], !(value is String || value is Substring) else {
                return try text(name)
            }
            guard let format = converter.format else {
                throw fail(
                    "parameter '\(name)' is \(type(of: value)) and converter '\(converter.name)' has no format to write it: "
                        + "give the segment's text, or register the converter with a format", name)
            }
            guard let text = format(value) else { throw fail("converter '\(converter.name)' cannot write \(name) = \(value)", name) }
            return text
        }
        var used: Set<String> = []
        var pieces: [String] = []
        for (position, segment) in segments.enumerated() {
            if position == 0, let name = segment.name, let value = parameters[name].flatMap(Self.urlText),
                URLScanner.lowercasedHost(value) != value
            {
                // A host is read without case: the value would come back lowercased.
                throw fail("parameter '\(name)' = '\(value)' fills the host, which comes back lowercased", name)
            }
            switch segment {
            case .literal(let literal):
                pieces.append(Self.encode(literal))
            case .typed(let converterName, let name):
                guard let converter = converters[converterName] else {
                    throw fail("placeholder '\(name)' names no converter '\(converterName)'", name)
                }
                let value = try typedText(name, converter)
                guard converter.convert(value) != nil else {
                    throw fail("parameter '\(name)' = '\(value)' is not a valid \(converterName)", name)
                }
                guard !value.isEmpty else { throw fail("parameter '\(name)' is empty", name) }
                pieces.append(Self.encodeSegment(value))
                used.insert(name)
            case .untyped(let name):
                guard let name else { throw fail("a wildcard '*' has no parameter to fill it") }
                let value = try text(name)
                guard !value.isEmpty else { throw fail("parameter '\(name)' is empty", name) }
                pieces.append(Self.encodeSegment(value))
                used.insert(name)
            case .catchAll(let name):
                guard let name else { throw fail("a catch-all '**' has no parameter to fill it") }
                let value = try text(name)
                guard !value.isEmpty else { throw fail("parameter '\(name)' is empty", name) }
                pieces.append(Self.encodeCatchAll(value))
                used.insert(name)
            }
        }
        var url = scheme + "://" + pieces.joined(separator: "/")
        var query: [String] = []
        for (key, value) in parameters.pairs.sorted(by: { $0.key < $1.key }) where !used.contains(key) {
            guard !key.isEmpty else { throw fail("a query parameter has an empty name", key) }
            if let list = value as? [String] {
                for item in list { query.append(Self.encode(key) + "=" + Self.encode(item)) }
            } else if let text = Self.urlText(value) {
                query.append(Self.encode(key) + "=" + Self.encode(text))
            } else {
                throw fail(Self.noURLForm(key, value), key)
            }
        }
        if !query.isEmpty { url += "?" + query.joined(separator: "&") }
        return url
    }

    /// Why the parameter `name`'s `value` has no URL form, for an error's message.
    static func noURLForm(_ name: String, _ value: any Sendable) -> String {
        if let number = value as? Double, !number.isFinite {
            return "parameter '\(name)' is \(number), a number a URL cannot carry (not finite)"
        }
        return "parameter '\(name)' is \(type(of: value)), which has no URL form"
    }

    static func urlText(_ value: any Sendable) -> String? {
        switch value {
        case let text as String: text
        case let text as Substring: String(text)
        case let number as Int: String(number)
        case let number as Double: number.isFinite ? String(number) : nil
        case let flag as Bool: flag ? "true" : "false"
        case let uuid as UUID: uuid.uuidString
        default: nil
        }
    }

    /// Encodes a catch-all value: a `/` between two non-empty parts stays a separator; any other
    /// `/` (leading, trailing, doubled) is encoded so that the value round-trips exactly.
    static func encodeCatchAll(_ value: String) -> String {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var out = encodeSegment(parts[0])
        for index in parts.indices.dropFirst() {
            out += parts[index - 1].isEmpty || parts[index].isEmpty ? "%2F" : "/"
            out += encodeSegment(parts[index])
        }
        return out
    }

    /// A path segment's value encoded; `.` and `..`, which URL normalizers (Foundation's
    /// `standardized`, a browser's, the system's handling of an opened link) remove along with
    /// the segment before them, are written `%2E`, which resolves to the same value.
    static func encodeSegment(_ value: String) -> String {
        value == "." || value == ".." ? String(repeating: "%2E", count: value.count) : encode(value)
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if URLScanner.isLetter(byte) || URLScanner.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
