import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The response head, read on the loop thread header line by header line.
extension CurlTransfer {

    /// One header line; a status line starts a new response (after a redirect or `100 Continue`).
    ///
    /// Runs on the loop thread for every line, so it reads the status code and `Content-Length`
    /// over the bytes and otherwise only copies the line (see ``parsedHeaders()``).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        guard end > 0 else {
            // The blank line that ends a header section.
            if status != 0 { headerSectionEnded = true }
            if streams { headerSectionDidEnd() }
            return
        }
        if end > 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
            bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/")
        {
            // "HTTP/1.1 200 OK", "HTTP/2 200": the status is the three digits after the first space.
            var i = 5
            while i < end, bytes[i] != UInt8(ascii: " ") { i += 1 }
            var code = 0
            i += 1
            while i < end, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                code = code * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                i += 1
            }
            status = code
            contentLength = nil
            contentEncoding = nil
            headerSectionEnded = false
            // A redirect or an authentication challenge is what may send the request again.
            if code >= 300 { answeredSinceSent = true }
            if parsesHeadersOnLoop {
                headers = HTTPHeaders()
                // Room for a typical response's fields at once, rather than growing field by field.
                headers.reserveCapacity(12)
            } else {
                rawHeaders.removeAll(keepingCapacity: true)
            }
            return
        }
        let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
        if let length = Self.contentLength(line) { contentLength = length }
        if inflatesOnLoop, let encoding = Self.contentEncoding(line) {
            contentEncoding = contentEncoding.map { "\($0), \(encoding)" } ?? encoding
        }
        if parsesHeadersOnLoop {
            Self.parseField(line, into: &headers)
        } else {
            if rawHeaders.isEmpty { rawHeaders.reserveCapacity(512) }
            // Typed as bytes, so the copy is one memcpy rather than a loop over a sequence.
            rawHeaders.append(contentsOf: line.assumingMemoryBound(to: UInt8.self))
            rawHeaders.append(0x0A)
        }
    }

    /// The response's header fields: parsed on the awaiting task from the bytes the loop kept,
    /// or as the loop parsed them (downloads). Call once the transfer is handed back.
    func parsedHeaders() -> HTTPHeaders {
        guard !parsesHeadersOnLoop else { return headers }
        var fields = HTTPHeaders()
        fields.reserveCapacity(12)
        rawHeaders.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                var end = start
                while end < all.count, all[end] != 0x0A { end += 1 }
                Self.parseField(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &fields)
                start = end + 1
            }
        }
        return fields
    }

    private static let contentLengthName = Array("content-length:".utf8)

    /// The value of a `Content-Length` line, if `line` is one (checked over the bytes: this runs
    /// on the loop thread for every header line).
    static func contentLength(_ line: UnsafeRawBufferPointer) -> Int? {
        // "content-length:" is 15 bytes; most lines are rejected by their first byte.
        guard line.count > 15, line[0] | 0x20 == UInt8(ascii: "c"), line[14] == UInt8(ascii: ":"), line[7] == UInt8(ascii: "-")
        else { return nil }
        // The letters compared without case ('-' and ':' were checked exactly above).
        for index in 1..<14 where index != 7 && line[index] | 0x20 != contentLengthName[index] { return nil }
        var value = 0
        var sawDigit = false
        for index in 15..<line.count {
            let byte = line[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if sawDigit { break } else { continue }
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value < Int.max / 10 - 10 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            sawDigit = true
        }
        return sawDigit ? value : nil
    }

    private static let contentEncodingName = Array("content-encoding:".utf8)

    /// The value of a `Content-Encoding` line, if `line` is one.
    static func contentEncoding(_ line: UnsafeRawBufferPointer) -> String? {
        let name = contentEncodingName
        guard line.count > name.count, line[0] | 0x20 == UInt8(ascii: "c"), line[16] == UInt8(ascii: ":") else { return nil }
        for index in 1..<16 where line[index] | 0x20 != name[index] { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: line[17...]), as: UTF8.self)
            .trimmingBlanks()
    }

    /// Adds one header line (no line break) to `fields`: `Name: value`, or an obsolete folded
    /// line (RFC 9112 §5.2) continuing the previous field's value; others are ignored.
    static func parseField(_ line: UnsafeRawBufferPointer, into fields: inout HTTPHeaders) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0D { end -= 1 }
        guard end > 0, let base = line.baseAddress else { return }
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            var start = 0
            while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
            guard start < end else { return }
            fields.continueLastValue(with: String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self))
            return
        }
        guard let found = memchr(base, Int32(UInt8(ascii: ":")), end) else { return }
        let colon = base.distance(to: UnsafeRawPointer(found))
        var start = colon + 1
        while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        var stop = end
        while stop > start, line[stop - 1] == UInt8(ascii: " ") || line[stop - 1] == UInt8(ascii: "\t") { stop -= 1 }
        fields.add(
            name: String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self),
            value: String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<stop]), as: UTF8.self))
    }
}
