import Foundation
import Runway

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

    /// A body as text: redacted when it is a form or JSON, a byte count when it is binary or a
    /// gzip stream, cut at ``bodyLimit``.
    func render(body: Data, headers: HTTPHeaders) -> String {
        if bodyLimit == 0 { return "<\(body.count) bytes>" }
        let type = headers["Content-Type"]?.lowercased() ?? ""
        let encoding = headers["Content-Encoding"]?.lowercased() ?? "identity"
        guard encoding == "identity" || encoding.isEmpty, let text = String(data: body, encoding: .utf8),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" })
        else { return "<\(body.count) bytes \(encoding == "identity" ? "binary" : encoding)>" }
        let shown: String
        let start = text.first { !$0.isWhitespace }
        if type.contains("multipart/") {
            return "<\(body.count) bytes multipart>"
        } else if type.contains("json") || start == "{" || start == "[" {
            // JSON whatever the type says; a body that does not parse (JSON lines, or broken)
            // is read line by line, and a line that is not JSON is not shown.
            shown =
                redaction.applyToJSON(body)
                ?? text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    line.allSatisfy(\.isWhitespace)
                        ? String(line) : redaction.applyToJSON(Data(line.utf8)) ?? "<\(line.utf8.count) bytes, not JSON>"
                }.joined(separator: "\n")
        } else if type.contains("x-www-form-urlencoded") || Self.looksLikeForm(text) {
            shown = redaction.applyToForm(text)
        } else {
            shown = text
        }
        guard shown.utf8.count > bodyLimit else { return shown }
        let cut = String(decoding: shown.utf8.prefix(bodyLimit), as: UTF8.self)
        return cut + "… (\(shown.utf8.count - bodyLimit) more bytes)"
    }

    /// `name=value&…` with no spaces or line breaks: a form, whatever the type says.
    private static func looksLikeForm(_ text: String) -> Bool {
        text.contains("=") && !text.contains(where: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" })
    }

    private func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
