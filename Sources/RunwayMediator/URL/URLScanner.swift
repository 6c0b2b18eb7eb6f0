/// A hand-written reader of mediator URLs over UTF-8 bytes (no `URLComponents`), held in an
/// array and read through bounds-checked subscripts: the input is untrusted.
///
/// `scheme://host/seg/seg?query#fragment`. The scheme is lowercased; the host is the first
/// segment, percent-decoded and lowercased (ASCII); the path is split on `/` first and each
/// segment percent-decoded afterwards, so `%2F` is a `/` inside a value. Query and fragment are
/// kept as byte ranges and never take part in matching.
struct URLScanner {
    /// One path segment (segment 0 is the host): its decoded text and its raw byte range.
    struct Segment {
        var value: String
        var rawStart: Int
    }

    /// The result of a scan; ranges index the scanned buffer.
    struct Scan {
        var scheme: String
        var segments: [Segment]
        /// Where the path ends (before `?`, `#`, or the end), minus a trailing slash.
        var pathEnd: Int
        var queryStart: Int
        var queryEnd: Int
        var fragmentStart: Int
        /// Whether the authority held user info, a port or an IP literal (only read with
        /// `foreignAuthority`): a URL no route can match.
        var hasForeignAuthority = false
    }

    /// - Parameter foreignAuthority: Whether user info, a port and an IP literal in brackets are
    ///   read (the host is then what is between them) rather than `.malformedURL`: for a URL that
    ///   is not a mediator URL but may be another app's or the web's (`https://host:8443/x`).
    static func scan(_ bytes: [UInt8], options: MediatorURLOptions, foreignAuthority: Bool = false) throws -> Scan {
        let count = bytes.count
        guard count > 0 else { throw malformed("the URL is empty") }
        guard count <= options.maxLength else { throw malformed("the URL is longer than \(options.maxLength) bytes") }
        for byte in bytes where byte <= 0x20 || byte == 0x7F {
            throw malformed("the URL holds a space or control byte 0x\(String(byte, radix: 16))")
        }

        // scheme ":" "//"
        var index = 0
        guard isLetter(bytes[0]) else { throw malformed("the URL does not start with a scheme") }
        var schemeIsLower = true
        while index < count, bytes[index] != UInt8(ascii: ":") {
            let byte = bytes[index]
            guard
                isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: ".")
            else { throw malformed("the scheme holds '\(Character(Unicode.Scalar(byte)))'") }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { schemeIsLower = false }
            index += 1
        }
        guard index + 2 < count, bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/")
        else { throw malformed("the URL has no '://' after its scheme") }
        var scheme = String(decoding: bytes[0..<index], as: UTF8.self)
        if !schemeIsLower { scheme = scheme.lowercased() }
        index += 3

        // The end of the path: the first '?' or '#'.
        var pathLimit = index
        while pathLimit < count, bytes[pathLimit] != UInt8(ascii: "?"), bytes[pathLimit] != UInt8(ascii: "#") {
            pathLimit += 1
        }
        var queryStart = pathLimit
        var queryEnd = pathLimit
        var fragmentStart = count
        if pathLimit < count, bytes[pathLimit] == UInt8(ascii: "?") {
            queryStart = pathLimit + 1
            queryEnd = queryStart
            while queryEnd < count, bytes[queryEnd] != UInt8(ascii: "#") { queryEnd += 1 }
            if queryEnd < count { fragmentStart = queryEnd + 1 }
        } else if pathLimit < count {
            fragmentStart = pathLimit + 1
        }

        // host
        var hostStart = index
        var hostIsLower = true
        var hostHasEscape = false
        // User info and a port end or start the host (foreign authorities only).
        var portStart = -1
        var inBrackets = false
        var hasForeignAuthority = false
        while index < pathLimit, bytes[index] != UInt8(ascii: "/") {
            let byte = bytes[index]
            // A capital, or a letter beyond ASCII (which may be one: `Ü`).
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") || byte >= 0x80 { hostIsLower = false }
            if byte == UInt8(ascii: "%") { hostHasEscape = true }
            if byte == UInt8(ascii: "@") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") {
                guard foreignAuthority else {
                    throw malformed(
                        "the host holds '\(Character(Unicode.Scalar(byte)))' (user info, ports and IP literals are not part of a "
                            + "mediator URL)")
                }
                hasForeignAuthority = true
                if byte == UInt8(ascii: "@") {
                    hostStart = index + 1  // what came before was user info, colons included
                    portStart = -1
                } else if byte == UInt8(ascii: "[") {
                    inBrackets = true
                } else if byte == UInt8(ascii: "]") {
                    inBrackets = false
                } else if !inBrackets, portStart < 0 {
                    portStart = index
                }
            }
            index += 1
        }
        let hostEnd = portStart >= 0 ? portStart : index
        guard hostEnd > hostStart else { throw malformed("the URL has no host (the target)") }
        var host = try decode(bytes, hostStart, hostEnd, plusAsSpace: false)
        if hasForeignAuthority { hostIsLower = false }
        if !hostIsLower || hostHasEscape && host.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 })
        {
            host = lowercasedHost(host)
        }
        var segments: [Segment] = []
        segments.reserveCapacity(6)
        segments.append(Segment(value: host, rawStart: hostStart))

        // path segments
        var pathEnd = pathLimit
        while index < pathLimit {
            // bytes[index] == "/"
            let start = index + 1
            var end = start
            while end < pathLimit, bytes[end] != UInt8(ascii: "/") { end += 1 }
            if end == start {
                if end == pathLimit {
                    pathEnd = index  // a single trailing slash
                } else if options.emptySegments.rejects {
                    throw malformed("the path has an empty segment")
                }
            } else {
                segments.append(Segment(value: try decode(bytes, start, end, plusAsSpace: false), rawStart: start))
            }
            index = end
        }
        return Scan(
            scheme: scheme, segments: segments, pathEnd: pathEnd, queryStart: queryStart, queryEnd: queryEnd,
            fragmentStart: fragmentStart, hasForeignAuthority: hasForeignAuthority)
    }

    /// Calls `body` with each query item, decoded; an item without `=` has an empty value.
    static func forEachQueryItem(
        _ bytes: [UInt8], _ scan: Scan, options: MediatorURLOptions,
        _ body: (String, String) throws -> Void
    ) throws {
        var index = scan.queryStart
        let end = scan.queryEnd
        let plus = options.plusInQuery.isSpace
        while index < end {
            var itemEnd = index
            var equals = -1
            while itemEnd < end, bytes[itemEnd] != UInt8(ascii: "&") {
                if equals < 0, bytes[itemEnd] == UInt8(ascii: "=") { equals = itemEnd }
                itemEnd += 1
            }
            if itemEnd > index {
                let nameEnd = equals < 0 ? itemEnd : equals
                guard nameEnd > index else { throw malformed("a query item has no name") }
                let name = try decode(bytes, index, nameEnd, plusAsSpace: plus)
                let value = equals < 0 ? "" : try decode(bytes, equals + 1, itemEnd, plusAsSpace: plus)
                try body(name, value)
            }
            index = itemEnd + 1
        }
    }

    /// Percent-decodes `bytes[start..<end]`; a bad escape or invalid UTF-8 is `.malformedURL`.
    static func decode(_ bytes: [UInt8], _ start: Int, _ end: Int, plusAsSpace: Bool) throws -> String {
        var needsWork = false
        for index in start..<end where bytes[index] == UInt8(ascii: "%") || (plusAsSpace && bytes[index] == UInt8(ascii: "+")) {
            needsWork = true
            break
        }
        guard needsWork else {
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(end - start)
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < end, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { throw malformed("a percent escape is incomplete or not hexadecimal") }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw malformed("a percent-decoded value is not valid UTF-8")
        }
        return text
    }

    /// Decodes a range that is known to hold only complete escapes (joined segments).
    static func decodeLenient(_ bytes: [UInt8], _ start: Int, _ end: Int) -> String {
        (try? decode(bytes, start, end, plusAsSpace: false))
            ?? String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// A host (a target's name) in lower case, as it is matched: ASCII letters by their byte,
    /// any other (`ZÜRICH` is `zürich`) as Unicode lowercases it, as target names are registered.
    static func lowercasedHost(_ text: String) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return text.lowercased() }
        return String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }

    static func malformed(_ message: String) -> MediatorError {
        MediatorError(.malformedURL, message)
    }

    @inline(__always) static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    @inline(__always) static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
