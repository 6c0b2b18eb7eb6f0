#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `multipart/form-data` body (RFC 7578): text fields, bytes, and files streamed from disk.
///
/// ```swift
/// var form = MultipartForm()
/// form.append("Flat with a view", name: "title")
/// try form.append(contentsOf: photoURL, name: "photo", contentType: "image/jpeg")
/// var request = try Request(method: .post, "https://example.com/listings")
/// request.setBody(form)   // Content-Type with the boundary, and the body as a stream
/// ```
/// Files are read as the body is sent, never held whole in memory; the body's length (sent as
/// `Content-Length`) is known up front from the files' sizes, and a file that changes size
/// before it is sent fails the call (`.invalidRequest`) rather than send a body of another
/// length. The body can be sent again from its start (retry, a redirect).
///
/// Field names and file names are written as browsers write them (WHATWG HTML): UTF-8, with
/// `"`, CR and LF percent-encoded. A backslash is too (`%5C`), which browsers leave as it is:
/// parsers that read the value as a quoted string (Python's, Go's) take it as an escape, and a
/// name ending in one would run on into the next parameter. So no name can break out of its
/// header. The boundary is random (`RunwayForm` and 32 letters and digits), far too long to occur
/// in a part by chance; parts are not scanned for it.
public struct MultipartForm: Sendable {
    /// The delimiter between parts, without the leading `--`.
    public let boundary: String
    private var parts: [Part] = []

    private struct Part: Sendable {
        /// `--boundary`, the part's header fields and the blank line.
        let head: Data
        let content: Content
    }

    fileprivate enum Content: Sendable {
        case bytes(Data)
        case file(URL, size: Int)

        var count: Int {
            switch self {
            case .bytes(let data): data.count
            case .file(_, let size): size
            }
        }
    }

    /// A form with a random boundary.
    public init() {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        boundary = "RunwayForm" + String((0..<32).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    /// A form with the given boundary.
    /// - Throws: `.configuration` when it is not 1 to 70 of RFC 2046's boundary characters (letters,
    ///   digits, `'()+_,-./:=?` and inner spaces).
    public init(boundary: String) throws(RunwayError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=? ")
        guard (1...70).contains(boundary.count), boundary.allSatisfy(allowed.contains), boundary.last != " " else {
            throw RunwayError(
                .configuration, "\"\(boundary)\" is not a multipart boundary: 1 to 70 letters, digits or '()+_,-./:=? (no trailing space)",
                field: "boundary")
        }
        self.boundary = boundary
    }

    /// The `Content-Type` of the body: `multipart/form-data; boundary=…`, the boundary in quotes
    /// when it holds a character other than letters, digits, `+`, `-`, `.` and `_` (a space,
    /// `'()`, `,`, `/`, `:`, `=` or `?`), which parsers would otherwise end it at or misread.
    public var contentType: String {
        let plain = boundary.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "+", "-", ".", "_": true
            default: false
            }
        }
        return plain ? "multipart/form-data; boundary=\(boundary)" : "multipart/form-data; boundary=\"\(boundary)\""
    }

    /// The body's length in bytes.
    public var length: Int {
        parts.reduce(0) { $0 + $1.head.count + $1.content.count + 2 } + boundary.utf8.count + 6
    }

    /// Adds a text field (UTF-8, no `Content-Type`, as a browser sends it).
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(head: head(name: name, filename: nil, contentType: nil), content: .bytes(Data(value.utf8))))
    }

    /// Adds bytes, as a file when `filename` is given.
    /// - Throws: `.invalidHeader` when `contentType` holds a control character.
    public mutating func append(_ data: Data, name: String, filename: String? = nil, contentType: String? = nil) throws(RunwayError) {
        try Self.check(contentType)
        parts.append(Part(head: head(name: name, filename: filename, contentType: contentType), content: .bytes(data)))
    }

    /// Adds a file, read from disk as the body is sent.
    /// - Parameters:
    ///   - file: The file; its size now is the part's length.
    ///   - name: The field name.
    ///   - filename: The file name sent; by default the file's last path component.
    ///   - contentType: The part's `Content-Type`.
    /// - Throws: `.fileIO` when the file does not exist, cannot be read or is not a regular file;
    ///   `.invalidHeader` when `contentType` holds a control character.
    public mutating func append(
        contentsOf file: URL, name: String, filename: String? = nil, contentType: String = "application/octet-stream"
    ) throws(RunwayError) {
        try Self.check(contentType)
        guard let size = try RequestBodyStream.file(file).length else { return }
        let head = head(name: name, filename: filename ?? file.lastPathComponent, contentType: contentType)
        parts.append(Part(head: head, content: .file(file, size: size)))
    }

    /// The body as a stream that can be sent again from its start, with its length and no digest
    /// (declare one with ``RequestBodyStream/sha256`` to sign it).
    public var bodyStream: RequestBodyStream {
        let parts = parts
        let end = Data("--\(boundary)--\r\n".utf8)
        return .sequence(length: length) { MultipartSequence(parts: parts.map { ($0.head, $0.content) }, end: end) }
    }

    private func head(name: String, filename: String?, contentType: String?) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(name))\""
        if let filename { text += "; filename=\"\(Self.escape(filename))\"" }
        text += "\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        return Data((text + "\r\n").utf8)
    }

    /// A name as browsers write it in `Content-Disposition`, `"`, CR and LF percent-encoded, and
    /// `\`, which a quoted-string parser would take as an escape.
    private static func escape(_ name: String) -> String {
        var escaped = ""
        for character in name.unicodeScalars {
            switch character {
            case "\"": escaped += "%22"
            case "\\": escaped += "%5C"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    private static func check(_ contentType: String?) throws(RunwayError) {
        guard let contentType, contentType.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return }
        throw RunwayError(.invalidHeader, "a part's Content-Type holds a control character: \(contentType.debugDescription)")
    }

    /// The body's bytes: each part's head, content (a file read 64 KiB at a time) and CR LF, then
    /// the closing delimiter.
    fileprivate struct MultipartSequence: AsyncSequence, Sendable {
        typealias Element = Data
        let parts: [(head: Data, content: Content)]
        let end: Data

        func makeAsyncIterator() -> Iterator { Iterator(parts: parts, end: end) }

        struct Iterator: AsyncIteratorProtocol {
            let parts: [(head: Data, content: Content)]
            let end: Data
            var index = 0
            /// The open file of the current part, and how much of it is left.
            var file: FileReader?
            var remaining = 0
            /// The open file's size when it was added to the form: the part's length.
            var fileSize = 0
            /// Whether a part's content has ended: the CR LF that closes it goes first in the
            /// next chunk.
            var closesPart = false
            var ended = false

            mutating func next() async throws -> Data? {
                if file != nil { return try readFile() }
                guard !ended else { return nil }
                var chunk = closesPart ? Data("\r\n".utf8) : Data()
                closesPart = false
                guard index < parts.count else {
                    ended = true
                    chunk.append(end)
                    return chunk
                }
                let (head, content) = parts[index]
                index += 1
                chunk.append(head)
                switch content {
                case .bytes(let data):
                    chunk.append(data)
                    closesPart = true
                case .file(let url, let size):
                    do {
                        file = try FileReader(path: url.path)
                    } catch {
                        throw RunwayError(.fileIO, "cannot open \(url.path) to send it: \(error.message)", underlying: error)
                    }
                    remaining = size
                    fileSize = size
                    if size == 0, let file {
                        try Self.checkEnds(file, size: 0)
                        closeFile()
                    }
                }
                return chunk
            }

            /// The file's next bytes; empty once a file that shrank ends early (the stream's
            /// length check then fails the call).
            private mutating func readFile() throws(RunwayError) -> Data {
                guard let file else { return Data() }
                let data: Data
                do {
                    data = try file.read(upTo: Swift.min(64 << 10, remaining))
                } catch {
                    throw RunwayError(.fileIO, "cannot read \(file.path): \(error.message)", underlying: error)
                }
                remaining = data.isEmpty ? 0 : remaining - data.count
                if remaining == 0 {
                    if !data.isEmpty { try Self.checkEnds(file, size: fileSize) }
                    closeFile()
                }
                return data
            }

            /// Checks that `file`, whose `size` bytes have been read, ends there.
            /// - Throws: `.invalidRequest` when it holds more (it grew since it was added to the
            ///   form: sent, the part would be the file cut short); `.fileIO` when it cannot be read.
            private static func checkEnds(_ file: FileReader, size: Int) throws(RunwayError) {
                let more: Data
                do {
                    more = try file.read(upTo: 1)
                } catch {
                    throw RunwayError(.fileIO, "cannot read \(file.path): \(error.message)", underlying: error)
                }
                guard more.isEmpty else {
                    throw RunwayError(
                        .invalidRequest,
                        "\(file.path) holds more than the \(size) bytes it had when it was added to the form: it changed, and the "
                            + "part would be sent cut short",
                        field: "bodyStream")
                }
            }

            private mutating func closeFile() {
                file?.close()
                file = nil
                closesPart = true
            }
        }
    }
}

extension Request {
    /// Sends `form` as the body: sets ``bodyStream`` and the `Content-Type` with the form's boundary
    /// (and clears ``body``).
    public mutating func setBody(_ form: MultipartForm) {
        body = nil
        bodyStream = form.bodyStream
        headers["Content-Type"] = form.contentType
    }
}
