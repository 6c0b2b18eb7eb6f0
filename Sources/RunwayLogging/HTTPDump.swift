import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders requests as `curl` command lines and responses as HTTP text, redacted.
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
            parts += ["--connect-to", "\(override.host):\(port):\(override.connectHost):\(override.connectPort.map(String.init) ?? "")"]
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

    /// The status line, headers and body of a response (secrets replaced).
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
        return lines.joined(separator: "\n")
    }

    /// A body as text: redacted when it is a form or JSON (`Redaction`), a byte count when it is
    /// binary, multipart or a gzip stream, cut at ``bodyLimit``.
    func render(body: Data, headers: HTTPHeaders) -> String {
        if bodyLimit == 0 { return "<\(body.count) bytes>" }
        let encoding = headers["Content-Encoding"]?.lowercased() ?? "identity"
        guard encoding == "identity" || encoding.isEmpty else { return "<\(body.count) bytes \(encoding)>" }
        let shown: String
        switch redaction.apply(toBody: body, contentType: headers["Content-Type"]) {
        case .binary: return "<\(body.count) bytes binary>"
        case .multipart: return "<\(body.count) bytes multipart>"
        case .text(let text): shown = text
        }
        guard shown.utf8.count > bodyLimit else { return shown }
        let cut = String(decoding: shown.utf8.prefix(bodyLimit), as: UTF8.self)
        return cut + "… (\(shown.utf8.count - bodyLimit) more bytes)"
    }

    /// `text` in single quotes for a shell: each `'` (the scalar, even before a combining mark)
    /// becomes `'\''`.
    private func quote(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "'")) else { return "'" + text + "'" }
        var quoted = "'"
        for scalar in text.unicodeScalars {
            if scalar == "'" { quoted += "'\\''" } else { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "'"
    }
}
