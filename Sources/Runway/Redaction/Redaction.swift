#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What Runway hides before a request or a response is shown: in the logging interceptor's log
/// (`LoggingInterceptor`, `RunwayLogging`) and in a HAR file (`HARRecorder`, `RunwayHAR`).
///
/// Header names and parameter names are matched case-insensitively. A header is hidden when
/// its name is in ``headers``, contains one of ``headerFragments`` (so `X-Runway-Signature`,
/// `X-Access-Token`, `X-Auth`, `X-Session-Id` and `X-Goog-Api-Key` are hidden without being
/// listed), or has a word (between `-`) that is a hidden parameter name in ``parameters``
/// (`X-Passwd`, `X-Pin`, `X-OTP`). Headers that carry a URL show it as a request's URL is shown (its hidden query values
/// replaced, any user name, password and fragment too), the rest of the value as it is: all of a
/// `Location`, `Content-Location` or `Referer`, each `<…>` of a `Link`, the `url=` of a `Refresh`.
/// Parameters are matched ignoring case and `_`, `-`, `.` (so `accessToken`, `access_token` and
/// `Access-Token` are one name), by exact name or by ``parameterFragments`` (a nested name,
/// `card[cvv]` or `user.pin`, by any of its parts), in the query
/// string and in form bodies (pairs split at `&` and at `;`, which some servers take as a
/// separator too: only the hidden value changes), in JSON bodies (any depth) and in XML bodies
/// (the content of a hidden element, the value of a hidden attribute, names without their
/// namespace prefix) — a body that looks like JSON, XML (it starts with `<`) or a form
/// (`name=value&…`, which may end in one line break, LF or CR LF) is read as one whatever its
/// `Content-Type` says.
public struct Redaction: Sendable, Equatable {
    /// Header names always hidden.
    public let headers: Set<String>
    /// Header-name fragments that hide a header.
    public let headerFragments: [String]
    /// Parameter names hidden in queries and bodies (stored folded: lower case, without `_`,
    /// `-` and `.`).
    public let parameters: Set<String>
    /// Parameter-name fragments that hide a parameter (folded), such as `password` and `token`.
    public let parameterFragments: [String]

    /// What replaces a hidden value.
    public static let placeholder = "<redacted>"

    /// Authorization, cookies and API keys, any header naming a signature, token or secret, and
    /// the usual secret parameters.
    public static let standard = Redaction(
        uncheckedHeaders: ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"],
        headerFragments: ["signature", "token", "secret", "password", "nonce", "auth", "session", "credential", "key", "bearer"],
        parameters: [
            "passwd", "pwd", "pass", "sign", "sig", "apikey", "key", "pin", "otp", "sessionid", "sid", "cvv", "cvc", "auth",
            "authorization",
        ],
        parameterFragments: [
            "password", "secret", "token", "signature", "apikey", "accesskey", "session", "credential", "privatekey",
        ])

    /// The standard redaction plus your own header and parameter names.
    /// - Throws: `RunwayError` `.configuration` for an empty name.
    public static func standard(plusHeaders headers: Set<String> = [], parameters: Set<String> = []) throws(RunwayError) -> Redaction {
        try Redaction(
            headers: standard.headers.union(headers), headerFragments: standard.headerFragments,
            parameters: standard.parameters.union(parameters), parameterFragments: standard.parameterFragments)
    }

    /// Creates a redaction from exact header names, name fragments and parameter names.
    /// - Throws: `RunwayError` `.configuration` for an empty name.
    public init(
        headers: Set<String>, headerFragments: [String] = [], parameters: Set<String>, parameterFragments: [String] = []
    ) throws(RunwayError) {
        let names = Array(headers) + headerFragments + Array(parameters) + parameterFragments
        if names.contains(where: { Self.fold($0).isEmpty }) {
            throw RunwayError(.configuration, "redaction: a redacted name is empty", field: "redaction")
        }
        self.init(
            uncheckedHeaders: headers, headerFragments: headerFragments, parameters: parameters, parameterFragments: parameterFragments)
    }

    private init(uncheckedHeaders: Set<String>, headerFragments: [String], parameters: Set<String>, parameterFragments: [String]) {
        self.headers = Set(uncheckedHeaders.map { $0.lowercased() })
        self.headerFragments = headerFragments.map { $0.lowercased() }
        self.parameters = Set(parameters.map(Self.fold))
        self.parameterFragments = parameterFragments.map(Self.fold)
    }

    /// A name lower-cased without `_`, `-`, `.` and spaces: `accessToken`, `access_token` and
    /// `Access-Token` are one name.
    static func fold(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != "." && $0 != " " }.map(Character.init))
    }

    /// Whether a header's value is hidden.
    public func hidesHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        return headers.contains(lower) || headerFragments.contains { lower.contains($0) }
            || lower.split(separator: "-").contains { parameters.contains(Self.fold(String($0))) }
    }

    /// Whether a parameter's value is hidden: by its whole name, or by any part of a nested one
    /// (`card[cvv]`, `items[0][pin]`, `user.pin`, as forms and queries spell the members of an object).
    public func hidesParameter(_ name: String) -> Bool {
        if hides(folded: Self.fold(name)) { return true }
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: ".") }) else { return false }
        return name.split(whereSeparator: { $0 == "[" || $0 == "]" || $0 == "." }).contains { hides(folded: Self.fold(String($0))) }
    }

    private func hides(folded: String) -> Bool {
        parameters.contains(folded) || parameterFragments.contains { folded.contains($0) }
    }

    /// The headers with hidden values replaced, and the URLs some of them carry redacted.
    package func apply(to headers: HTTPHeaders) -> [(String, String)] {
        headers.map { field in
            if hidesHeader(field.name) { return (field.name, Self.placeholder) }
            return (field.name, apply(toURLsIn: field.value, of: field.name))
        }
    }

    /// A header's value with the URLs it carries (whose query may hold a token) redacted as
    /// `apply(to:)` shows a URL, and the rest of the value as it was: all of a `Location`,
    /// `Content-Location` or `Referer`, each `<…>` of a `Link`, the URL after the delay of a
    /// `Refresh` (`0; url=…`). Other headers are as they are.
    private func apply(toURLsIn value: String, of name: String) -> String {
        switch name.lowercased() {
        case "location", "content-location", "referer": apply(toURLText: value)
        case "link": apply(toLink: value)
        case "refresh": apply(toRefresh: value)
        default: value
        }
    }

    /// `<URL>; rel=next, <URL>; …` (RFC 8288) with each URL redacted; a `<` never closed is
    /// redacted to the end.
    private func apply(toLink value: String) -> String {
        var shown = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<") {
            shown += rest[...open]
            rest = rest[rest.index(after: open)...]
            let close = rest.firstIndex(of: ">") ?? rest.endIndex
            shown += apply(toURLText: String(rest[..<close]))
            rest = rest[close...]
        }
        return shown + rest
    }

    /// `5; url=URL` (or `5, URL`, the URL in quotes or not) with the URL redacted.
    private func apply(toRefresh value: String) -> String {
        guard var start = value.firstIndex(where: { $0 == ";" || $0 == "," }) else { return value }
        func skipBlanks(_ index: inout String.Index) {
            while index < value.endIndex, value[index] == " " || value[index] == "\t" { index = value.index(after: index) }
        }
        start = value.index(after: start)
        skipBlanks(&start)
        if value[start...].prefix(3).lowercased() == "url" {
            var equals = value.index(start, offsetBy: 3)
            skipBlanks(&equals)
            if equals < value.endIndex, value[equals] == "=" {
                start = value.index(after: equals)
                skipBlanks(&start)
            }
        }
        var end = value.endIndex
        if start < value.endIndex, value[start] == "'" || value[start] == "\"" {
            let quote = value[start]
            start = value.index(after: start)
            end = value[start...].firstIndex(of: quote) ?? value.endIndex
        }
        guard start < end else { return value }
        return String(value[..<start]) + apply(toURLText: String(value[start..<end])) + String(value[end...])
    }

    /// An API name as logs and HAR files show it. A name is usually a label (`listing.rent`) or
    /// a path (`items/{id}`), shown as it is; one that carries a query, path parameters, a
    /// fragment or credentials (`item/7?token=…`, which `send(api:)` accepts as a path) is
    /// redacted as the URL it becomes.
    package func apply(toAPIName name: String) -> String {
        name.contains(where: { "?;#@".contains($0) }) ? apply(toURLText: name) : name
    }

    /// A URL as text (possibly relative) with hidden query values and credentials replaced.
    package func apply(toURLText text: String) -> String {
        guard let url = URL(string: text) else { return Self.placeholder }
        return apply(to: url)
    }

    /// The URL as text with hidden query values and any password replaced. Query items are
    /// split at `&` and at `;` (which some servers take as a separator too), and the
    /// `;name=value` parameters of a path segment are read as pairs; only the hidden values
    /// change, the rest of the URL is as it was.
    package func apply(to url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return RunwayError.text(forURL: url) }
        if components.password != nil { components.password = "redacted" }
        // A user name may be a token (https://TOKEN@host); a fragment may carry one
        // (#access_token=, OAuth's implicit flow).
        if components.user != nil { components.user = "redacted" }
        let query = components.percentEncodedQuery
        let hasFragment = components.fragment != nil
        // `/cart;jsessionid=…/items`: the `;name=value` parameters of a path segment (matrix
        // parameters, a servlet's session id) are pairs too.
        let path = components.percentEncodedPath
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        components.fragment = nil
        guard var shown = components.string else { return RunwayError.text(forURL: url) }
        shown +=
            !path.contains(";")
            ? path
            : path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                guard let semicolon = segment.firstIndex(of: ";") else { return String(segment) }
                return segment[...semicolon] + applyToPairs(String(segment[segment.index(after: semicolon)...]), plusIsSpace: false)
            }.joined(separator: "/")
        if let query { shown += "?" + applyToPairs(query, plusIsSpace: false) }
        if hasFragment { shown += "#redacted" }
        return shown
    }

    /// The value a query item shows (HAR's `queryString`): hidden when its name is, else with
    /// the hidden values of any `name=value` pairs after a `;` in it replaced.
    package func apply(toQueryItem name: String, value: String) -> String {
        hidesParameter(name) ? Self.placeholder : applyToPairs(value, plusIsSpace: false)
    }

    /// A form body (`a=1&b=2`, or `;` between pairs) with hidden values replaced.
    package func applyToForm(_ text: String) -> String {
        applyToPairs(text, plusIsSpace: true)
    }

    /// `name=value` pairs split at `&` and `;`, the value of each one whose percent-decoded name
    /// is hidden replaced, everything else (separators, escapes, pairs without `=`) as it was.
    private func applyToPairs(_ text: String, plusIsSpace: Bool) -> String {
        let scalars = text.unicodeScalars
        var shown = String.UnicodeScalarView()
        var start = scalars.startIndex
        while true {
            let end = scalars[start...].firstIndex { $0 == "&" || $0 == ";" } ?? scalars.endIndex
            let pair = scalars[start..<end]
            let equals = pair.firstIndex(of: "=")
            if let equals, hidesParameter(Self.decodedName(Substring(pair[..<equals]), plusIsSpace: plusIsSpace)) {
                shown.append(contentsOf: pair[...equals])
                shown.append(contentsOf: Self.placeholder.unicodeScalars)
            } else {
                shown.append(contentsOf: pair)
            }
            guard end < scalars.endIndex else { return String(shown) }
            shown.append(scalars[end])
            start = scalars.index(after: end)
        }
    }

    /// A parameter's name percent-decoded, or as it is when an escape is malformed.
    private static func decodedName(_ name: Substring, plusIsSpace: Bool) -> String {
        name.percentDecoded(plusIsSpace: plusIsSpace) ?? String(name)
    }

    /// A JSON body with hidden values replaced at any depth, written back compact with its keys
    /// sorted (``JSON/serialized()``); `nil` when it is not JSON.
    package func applyToJSON(_ data: Data) -> String? {
        guard let json = try? JSON(parsing: data) else { return nil }
        return redactJSON(json).serialized()
    }

    private func redactJSON(_ value: JSON) -> JSON {
        switch value {
        case .object(var members):
            for (key, inner) in members {
                members[key] = hidesParameter(key) ? .string(Self.placeholder) : redactJSON(inner)
            }
            return .object(members)
        case .array(let elements):
            return .array(elements.map(redactJSON))
        default:
            return value
        }
    }
}
