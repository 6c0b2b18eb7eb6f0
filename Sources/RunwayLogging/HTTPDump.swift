#if Logging  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders requests as `curl` command lines and responses as HTTP text, redacted, with control
/// characters escaped: a value (a header's, a body's) never starts a line of the log of its own.
struct HTTPDump {
    let redaction: Redaction
    let bodyLimit: Int

    /// A `curl` command that repeats the request (secrets replaced).
    func curl(_ request: Request) -> String {
        var parts = ["curl", "-X", request.method.rawValue, quote(redaction.apply(to: request.url))]
        for (name, value) in redaction.apply(to: request.headers) {
            parts += ["-H", quote("\(name): \(value)")]
        }
        if request.options.acceptCompressedResponses { parts.append("--compressed") }
        for override in request.options.connectOverrides {
            let port = override.port.map(String.init) ?? ""
            let target = "\(override.host):\(port):\(override.connectHost):\(override.connectPort.map(String.init) ?? "")"
            parts += ["--connect-to", Self.escapingControlCharacters(target)]
        }
        if let proxy = request.options.proxy?.server {
            // Its credentials redacted; `--noproxy` for none is left out, as in every other line.
            parts += ["--proxy", quote(proxy.redactedURL)]
        }
        if let body = request.body {
            parts += ["--data-binary", quote(render(body: body, headers: request.headers))]
        } else if let stream = request.bodyStream {
            parts += ["--data-binary", quote("<body streamed, \(stream.length.map { "\($0) bytes" } ?? "length unknown")>")]
        }
        return parts.joined(separator: " ")
    }

    /// The status line, headers and body of a response (secrets replaced), one line each: a line
    /// break in a value is written `\n` (``escapingControlCharacters(_:)``).
    func response(_ response: Response) -> String {
        var lines = ["HTTP \(response.status)"]
        lines += redaction.apply(to: response.headers).map { "\($0.0): \($0.1)" }
        if let file = response.fileURL {
            lines += ["", "<body written to \(file.path)>"]
        } else if response.bodyStream != nil {
            lines += ["", "<body streamed>"]
        } else if !response.body.isEmpty {
            lines += ["", render(body: response.body, headers: response.headers)]
        }
        return lines.map(Self.escapingControlCharacters).joined(separator: "\n")
    }

    /// A body as text: redacted when it is a form or JSON (`Redaction`), a byte count when it is
    /// binary, multipart or still compressed, cut at ``bodyLimit``.
    ///
    /// A response keeps its `Content-Encoding` header after the dispatcher has decoded its body,
    /// so the header alone does not say whether the bytes are still compressed; the bytes do.
    /// Compressed bytes do not read as text (gzip starts with a control character; a zlib or raw
    /// deflate stream of more than a few bytes all but surely holds bytes that are not UTF-8 or
    /// are control characters, and never the original text in clear), so a body under a
    /// `Content-Encoding` is shown when it reads as text, and as its size and encoding otherwise.
    func render(body: Data, headers: HTTPHeaders) -> String {
        if bodyLimit == 0 { return "<\(body.count) bytes>" }
        let encoding = headers["Content-Encoding"]?.lowercased() ?? "identity"
        let encoded = !(encoding == "identity" || encoding.isEmpty)
        let shown: String
        switch redaction.apply(toBody: body, contentType: headers["Content-Type"], keeping: bodyLimit) {
        case .binary: return encoded ? "<\(body.count) bytes \(encoding)>" : "<\(body.count) bytes binary>"
        case .multipart: return "<\(body.count) bytes multipart>"
        case .text(let text): shown = text
        case .prefix(let text, let size): return text + "… (of \(size) bytes)"
        }
        guard shown.utf8.count > bodyLimit else { return shown }
        let cut = shown.prefix(utf8Bytes: bodyLimit)
        return cut + "… (\(shown.utf8.count - cut.utf8.count) more bytes)"
    }

    /// `text` in single quotes for a shell: each `'` (the scalar, even before a combining mark)
    /// becomes `'\''`. Text with a control character goes in bash's `$'…'` instead, where it is an
    /// escape (`\n`, `\x1B`, `\u0085`), `\` is `\\` and `'` is `\'`: the line stays one line,
    /// and the command still sends the same bytes.
    private func quote(_ text: String) -> String {
        if text.unicodeScalars.contains(where: Self.isControl) {
            return "$'"
                + Self.replacing(in: text) { scalar in
                    scalar == "\\" || scalar == "'"
                        ? "\\" + String(scalar)
                        : Self.escape(scalar) { $0.isASCII ? "\\x" + Self.hex($0, digits: 2) : "\\u" + Self.hex($0, digits: 4) }
                } + "'"
        }
        return "'" + Self.replacing(in: text) { $0 == "'" ? "'\\''" : nil } + "'"
    }

    /// `text` with each control character written as an escape: `\n`, `\r`, `\t`, `\u{1B}`.
    /// A value cannot start a line of the log of its own (forging one), nor move a terminal's
    /// cursor. Other text, `\` included, is as it is.
    static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return replacing(in: text) { escape($0) { "\\u{" + String($0.value, radix: 16, uppercase: true) + "}" } }
    }

    /// `\n`, `\r` and `\t` for those, what `other` writes for another control character, `nil`
    /// for the rest.
    private static func escape(_ scalar: Unicode.Scalar, other: (Unicode.Scalar) -> String) -> String? {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        case _ where isControl(scalar): other(scalar)
        default: nil
        }
    }

    /// `text` with each scalar for which `replacement` has text replaced by it.
    private static func replacing(in text: String, _ replacement: (Unicode.Scalar) -> String?) -> String {
        var replaced = ""
        for scalar in text.unicodeScalars {
            if let text = replacement(scalar) { replaced += text } else { replaced.unicodeScalars.append(scalar) }
        }
        return replaced
    }

    /// C0 and C1 control characters, DEL, and the Unicode line and paragraph separators: what
    /// can break a line or drive a terminal.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    private static func hex(_ scalar: Unicode.Scalar, digits: Int) -> String {
        let text = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

#endif
