#if HTTPTypes  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if HTTPTypes  // the package trait that brings this dependency (TraitCheck.swift)
import HTTPTypes
#endif

extension HTTPFields {
    /// Creates header fields from Runway's, in the same order: a repeated field (`Set-Cookie`,
    /// several `Accept`) stays one field per value, never joined.
    ///
    /// Names keep their case. Values keep their bytes: obs-text (UTF-8 beyond ASCII), inner and
    /// outer whitespace and controls other than CR, LF and NUL pass as they are.
    /// - Throws: `RunwayError` `.invalidHeader`, with `field` naming the header, when a name is not
    ///   an HTTP token (a pseudo-header such as `:authority` among them) or a value holds CR, LF
    ///   or NUL; `.invalidHeader` too for more than 65,534 fields, the most `HTTPFields` holds.
    public init(_ headers: RunwayCore.HTTPHeaders) throws(RunwayError) {
        // HTTPFields traps from the 65,535th field on.
        guard headers.count < Int(UInt16.max) else {
            throw RunwayError(.invalidHeader, "\(headers.count) header fields are more than the \(UInt16.max - 1) HTTPFields holds")
        }
        self.init()
        reserveCapacity(headers.count)
        for field in headers {
            append(try HTTPField(field))
        }
    }
}

extension RunwayCore.HTTPHeaders {
    /// Creates Runway header fields from `HTTPFields`, in the same order, one field per field.
    ///
    /// Each name is taken as written (`HTTPField.Name.rawName`), each value as its UTF-8 text.
    /// Pseudo-header fields (`:path`, `:status`) are never among them: `HTTPFields` refuses them.
    /// - Throws: `RunwayError` `.invalidHeader`, with `field` naming the header, for a value that
    ///   is not valid UTF-8 (a `String` could not hold its bytes).
    public init(_ fields: HTTPFields) throws(RunwayError) {
        self.init()
        reserveCapacity(fields.count)
        for field in fields {
            let name = field.name.rawName
            let value = field.value
            // Decoding replaces bytes that are not UTF-8 with U+FFFD; only then can the text
            // differ from the bytes, so only then are they compared.
            if value.unicodeScalars.contains("\u{FFFD}") {
                var decoded = HTTPField(name: field.name, lenientValue: value.utf8)
                decoded.indexingStrategy = field.indexingStrategy
                guard decoded == field else {
                    throw RunwayError(.invalidHeader, "the value of header \"\(name)\" is not valid UTF-8", field: name)
                }
            }
            add(name: name, value: value)
        }
    }
}

extension HTTPField {
    /// The field for a Runway header field, its value byte for byte.
    init(_ field: RunwayCore.HTTPHeaders.Field) throws(RunwayError) {
        guard let name = HTTPField.Name(field.name) else {
            let reason =
                field.name.utf8.first == UInt8(ascii: ":")
                ? "\(field.name.debugDescription) is a pseudo-header field, not a header field (set the URL, method or status instead)"
                : "header name \(field.name.debugDescription) is not an HTTP token"
            throw RunwayError(.invalidHeader, reason, field: field.name)
        }
        // A value legal as RFC 9110 writes it (no control character, no space at either end:
        // nearly every one) is kept as the same string, which `HTTPField` stores as it is. It is
        // checked over the string's contiguous bytes; the lenient path below copies them.
        if HTTPField.isValidValue(field.value) {
            self.init(name: name, value: field.value)
            return
        }
        if field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw RunwayError(.invalidHeader, "header \"\(field.name)\" contains CR, LF or NUL", field: field.name)
        }
        // Lenient: only CR, LF and NUL would be changed, and there are none.
        self.init(name: name, lenientValue: field.value.utf8)
    }
}

extension HTTPRequest.Method {
    /// The method for a Runway method, by its token.
    /// - Throws: `RunwayError` `.invalidRequest` when the method is not an HTTP token.
    public init(_ method: HTTPMethod) throws(RunwayError) {
        guard let converted = HTTPRequest.Method(method.rawValue) else {
            throw RunwayError(.invalidRequest, "method \(method.rawValue.debugDescription) is not an HTTP token")
        }
        self = converted
    }
}

extension HTTPMethod {
    /// The Runway method for an `HTTPRequest.Method`, extension methods (`QUERY`, `PROPFIND`)
    /// included.
    /// - Throws: `RunwayError` `.invalidRequest` for a method with a lower-case letter: methods
    ///   are case-sensitive (RFC 9110 §9.1) and an `HTTPMethod` is upper-case, so `propfind`
    ///   would be sent as another method.
    public init(_ method: HTTPRequest.Method) throws(RunwayError) {
        let token = method.rawValue
        guard !token.utf8.contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }) else {
            throw RunwayError(
                .invalidRequest,
                "method \"\(token)\" has lower-case letters: methods are case-sensitive, and Runway sends them upper-case")
        }
        self.init(rawValue: token)
    }
}

#endif
