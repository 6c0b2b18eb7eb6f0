import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The response head, read on the loop thread header line by header line.
extension CurlTransfer {

    /// One header line; a status line starts a new response (after a redirect or `100 Continue`).
    ///
    /// Runs on the loop thread for every line, so it reads the status code and `Content-Length`
    /// over the bytes and otherwise only copies the line (see ``parsedHeaders()``).
    /// - Returns: `false` when the head is not one to read a body by (a status outside 100–599,
    ///   a `Content-Length` that is not a length or contradicts another): ``failure`` says why,
    ///   and the transfer stops. Also `false` at the end of a complete 204 whose connection must
    ///   close (``closedUntrustedConnection``).
    func receiveHeader(_ bytes: Span<UInt8>) -> Bool {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        guard end > 0 else {
            // The blank line that ends a header section, or the trailer section after a chunked
            // body (see below), which has nothing more to check.
            if headerSectionEnded { return true }
            if status == 101, request.headers["Upgrade"] == nil {
                // libcurl reads on as a body whatever the connection carries after it.
                failure = invalidResponse(
                    "the server switched protocols (101), which the request did not ask for: what follows is not its response")
                return false
            }
            if respondsOverHTTP1, transferEncoded, let length = contentLength, status >= 200, status != 204, status != 304,
                request.method != .head
            {
                // Two framings of one body (RFC 9112 §6.3: to be handled as an error, a sign of
                // response splitting or smuggling). libcurl 7.88 reads it chunked and keeps the
                // connection, so whatever the length framed beyond the chunks would be read as the
                // next request's response. Failing here, before any body byte, closes the connection.
                failure = invalidResponse(
                    "the response has both Content-Length (\(length)) and Transfer-Encoding: its body's end is ambiguous")
                return false
            }
            if status != 0 { headerSectionEnded = true }
            if streams { headerSectionDidEnd() }
            if status == 204, respondsOverHTTP1, transferEncoded || (contentLength ?? 0) > 0 {
                // A 204 has no body, and a server must not send Content-Length (RFC 9110 §8.6) or
                // Transfer-Encoding (RFC 9112 §6.1) with one. This one announces a body, so the
                // connection's framing cannot be trusted: its bytes may follow, and libcurl 7.88,
                // which ignores a 204's body, would keep the connection and read them as the next
                // request's response. Stopping the transfer here, at the end of a complete
                // response, makes libcurl close the connection (as after any failed transfer)
                // before another transfer can take it, one waiting for it included; over HTTP/2
                // each stream is framed apart, and the connection stays.
                closedUntrustedConnection = true
                return false
            }
            if status == 303, redirectHasLocation, returnsSeeOther {
                // libcurl would follow it with the same custom method (see ``returnsSeeOther``):
                // the 303 is the response, and the request goes nowhere else.
                stoppedAtRedirect = true
                return false
            }
            if redirectHasLocation, redirectLeavesOrigin {
                // libcurl would send the request's Proxy-Authorization there (see
                // ``guardsProxyCredentials``): the redirect is the response.
                stoppedAtRedirect = true
                return false
            }
            return true
        }
        // A status line only where a response starts: first, or after a header section ended.
        // Inside a section, a line that happens to begin with "HTTP/" is a field like any other.
        if status == 0 || headerSectionEnded, end > 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"),
            bytes[2] == UInt8(ascii: "T"), bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/")
        {
            // "HTTP/1.1 200 OK", "HTTP/2 200": the status is the three digits after the first space.
            var i = 5
            while i < end, bytes[i] != UInt8(ascii: " ") { i += 1 }
            var code = 0
            var digits = 0
            i += 1
            while i < end, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9"), digits < 4 {
                code = code * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                digits += 1
                i += 1
            }
            guard digits == 3, (100...599).contains(code) else {
                let line = Self.fieldText(bytes.extracting(..<min(end, 64)))
                failure = invalidResponse("the status line \"\(line)\" has no status code from 100 to 599")
                return false
            }
            if bytes[5] != UInt8(ascii: "1"), !mayRespondOverHTTP2() {
                // libcurl 7.88 takes "HTTP/2 200" or "HTTP/2.0 200" from an HTTP/1.1 connection
                // and reports HTTP/2; HTTP/2 never sends a status line of its own.
                let line = Self.fieldText(bytes.extracting(..<min(end, 64)))
                failure = invalidResponse("the status line \"\(line)\" names another version than the connection's HTTP/1.1")
                return false
            }
            status = code
            respondsOverHTTP1 = bytes[5] == UInt8(ascii: "1")
            transferEncoded = false
            chunkedCodings = 0
            // libcurl keeps the first words of a failure it got past: a reused connection found
            // dead before libcurl sent the request again on a fresh one. A response arriving says
            // they are not this transfer's failure, if it fails.
            if errorBuffer[0] != 0 { errorBuffer[0] = 0 }
            contentLength = nil
            contentEncoding = nil
            lastField = .other
            headerSectionEnded = false
            redirectHasLocation = false
            redirectLeavesOrigin = false
            // A redirect or an authentication challenge is what may send the request again.
            if code >= 300 { answeredSinceSent = true }
            if followsRedirects, (300..<400).contains(code), !RedirectPolicy.isFollowed(code), let easy {
                // libcurl follows the `Location` of any 3xx. A 304 answers a conditional request,
                // a 305 names a proxy (deprecated, for what that lets a server do), and 300 and
                // the rest are no instruction to go elsewhere: the response is this one, body and
                // all. Read before any field, so libcurl never takes the `Location` to follow.
                _ = runway_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
            }
            if code == 417, expectsContinue, let easy {
                // The request's expectation refused (see ``refusedExpectation``): no re-send may
                // follow this response, and over HTTP/1.1 its connection, whose server may still
                // wait for the body the request announced, carries no other request.
                refusedExpectation = true
                _ = runway_easy_setopt_long(easy, CURLOPT_MAXREDIRS, 0)
                if respondsOverHTTP1 { _ = runway_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1) }
            }
            if parsesHeadersOnLoop {
                headers = HTTPHeaders()
                // Room for a typical response's fields at once, rather than growing field by field.
                headers.reserveCapacity(12)
            } else {
                rawHeaders.removeAll(keepingCapacity: true)
            }
            return true
        }
        // libcurl 7.88 reads the start of a response as a status line even when its protocol name is
        // not "HTTP" in capitals: "http/1.1 404 Not Found" is a 200 from HTTP/1.0 to it, and none
        // of the checks above would run. At a response's start, and where a response may start
        // again (no field name holds a '/'), such a line is not HTTP.
        if status == 0 || (headerSectionEnded && Self.beginsWithHTTPSlashInAnyCase(bytes.extracting(..<end))) {
            let line = Self.fieldText(bytes.extracting(..<min(end, 64)))
            failure = invalidResponse("the response begins with \"\(line)\", not an HTTP status line (\"HTTP/1.1 200 OK\")")
            return false
        }
        // A field after the header section ended is a trailer field (after a chunked body, or
        // an HTTP/2 stream's trailing HEADERS). It is not merged into the header fields
        // (RFC 9110 §6.5.1), nor does it frame anything: the body has been read.
        if headerSectionEnded { return true }
        let line = bytes.extracting(..<end)
        let folded = line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t")
        if folded, parsesHeadersOnLoop ? headers.isEmpty : rawHeaders.isEmpty {
            // An obsolete folded line continues the field before it (RFC 9112 §5.2); there is
            // none. libcurl 7.88 refuses it on a transfer's first response, but after a redirect it
            // appends it to the redirect's last field and goes on.
            failure = invalidResponse("the response's first header line is folded (it begins with a blank), so it continues no field")
            return false
        }
        if folded {
            // A folded line continues the last field. libcurl does not unfold when it frames the
            // body: it would frame it by the first line alone while `headers` (unfolded) say more.
            switch lastField {
            case .contentLength, .transferEncoding:
                let name = lastField == .contentLength ? "Content-Length" : "Transfer-Encoding"
                failure = invalidResponse(
                    "the response's \(name) continues on a folded line (one that begins with a blank), which libcurl does not "
                        + "read when it frames the body: its body's end is ambiguous")
                return false
            case .contentEncoding:
                if inflatesOnLoop { continueContentEncoding(line) }
            case .other:
                break
            }
        } else if line[0] == UInt8(ascii: ":") {
            // Not a field: a field's name is a token, never empty (RFC 9110 §5.1). libcurl refuses a
            // line without a colon, and would take this one.
            let text = Self.fieldText(line.extracting(..<min(line.count, 80)))
            failure = invalidResponse("the response's header line \"\(text)\" has no field name")
            return false
        }
        if Self.isFramingFieldWithBlankBeforeColon(line) {
            // libcurl matches `Content-Length:` and `Transfer-Encoding:` exactly, so it would frame
            // the body without this field while `headers` (read without the blanks) give it:
            // the body as read would not be the one the headers describe (RFC 9112 §5.1).
            let text = Self.fieldText(line.extracting(..<min(line.count, 80)))
            failure = invalidResponse("the response's \"\(text)\" has blanks before its colon, so its body's framing is ambiguous")
            return false
        }
        if !folded { lastField = .other }
        switch Self.contentLength(line) {
        case .otherField:
            break
        case .length(let length):
            lastField = .contentLength
            if let known = contentLength, known != length {
                failure = invalidResponse(
                    "the response has two Content-Length fields that disagree (\(known) and \(length)): its body's end is unknown")
                return false
            }
            contentLength = length
        case .invalid:
            let text = Self.fieldText(line.extracting(..<min(line.count, 80)))
            failure = invalidResponse(
                "the response's \"\(text)\" is not a length (digits, or a list of the same number): its body's end is unknown")
            return false
        }
        if Self.isTransferEncoding(line) {
            lastField = .transferEncoding
            transferEncoded = true
            let value = Self.fieldText(line.extracting(18...))
            let codings = Self.transferCodings(value)
            guard codings.allSatisfy({ $0 == "chunked" }) else {
                // Runway sends no `TE`, so only chunked may frame a body; libcurl would hand over
                // another coding's bytes (gzip's, say) as the body, undecoded.
                failure = invalidResponse(
                    "the response's Transfer-Encoding \"\(value.trimmingBlanks())\" applies a coding that was not asked for: "
                        + "its body cannot be read")
                return false
            }
            chunkedCodings += codings.count
            if chunkedCodings > 1 {
                // Never applied twice (RFC 9112 §6.1). libcurl 7.88 undoes it once, so a body
                // chunked twice would come out still framed, as its body.
                failure = invalidResponse("the response's Transfer-Encoding applies chunked more than once: its body cannot be read")
                return false
            }
        }
        if followsRedirects, RedirectPolicy.isFollowed(status), Self.isLocation(line) {
            redirectHasLocation = true
            // A POST's 301, 302 or 303 makes libcurl send a GET next (another method's 303 is
            // returned, not followed: ``returnsSeeOther``).
            if request.method == .post, status <= 303 { redirectedAsGET = true }
            if guardsProxyCredentials {
                redirectLeavesOrigin = Self.leavesOrigin(Self.fieldText(line.extracting(9...)).trimmingBlanks(), from: request.url)
            }
        }
        if inflatesOnLoop, let encoding = Self.contentEncoding(line) {
            lastField = .contentEncoding
            contentEncoding = contentEncoding.map { "\($0), \(encoding)" } ?? encoding
        }
        if parsesHeadersOnLoop {
            Self.parseField(line, into: &headers)
        } else {
            if rawHeaders.isEmpty { rawHeaders.reserveCapacity(512) }
            rawHeaders.append(addingCapacity: line.count + 1) { kept in
                for index in line.indices { kept.append(line[index]) }
                kept.append(0x0A)
            }
        }
        return true
    }

    /// Adds a folded line's text to ``contentEncoding``, as ``parseField(_:into:)`` adds it to the
    /// field's value, so the loop inflates by the codings `headers` give.
    private func continueContentEncoding(_ line: Span<UInt8>) {
        let more = Self.fieldText(line).trimmingBlanks()
        guard !more.isEmpty else { return }
        let value = contentEncoding ?? ""
        contentEncoding = value.isEmpty ? more : value + " " + more
    }

    /// A `.responseInvalid` failure saying `what` of the response, with the request it answers.
    private func invalidResponse(_ what: String) -> RunwayError {
        RunwayError(.responseInvalid, "\(what) (\(request.method) \(RunwayError.text(forURL: urlString)))")
    }

    /// The response's header fields: parsed on the awaiting task from the bytes the loop kept,
    /// or as the loop parsed them (downloads). Call once the transfer is handed back.
    func parsedHeaders() -> HTTPHeaders {
        guard !parsesHeadersOnLoop else { return headers }
        var fields = HTTPHeaders()
        fields.reserveCapacity(12)
        let kept = rawHeaders
        let all = kept.span
        var start = 0
        var index = 0
        while index < all.count {
            // Each line ends in the line feed the loop appended.
            if all[index] == 0x0A {
                Self.parseField(all.extracting(start..<index), into: &fields)
                start = index + 1
            }
            index += 1
        }
        return fields
    }

    /// What a field line is to the loop, for a folded line that continues it (``lastField``).
    enum FieldRole {
        case other, contentLength, transferEncoding, contentEncoding
    }

    private static let contentLengthName = Array("content-length:".utf8)
    private static let transferEncodingName = Array("transfer-encoding:".utf8)

    /// The codings a `Transfer-Encoding` field's value lists, lower-cased, empty items left out.
    private static func transferCodings(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingBlanks().lowercased() }.filter { !$0.isEmpty }
    }

    /// Whether `line` is a `Location` field (its name compared without case, over the bytes).
    static func isLocation(_ line: Span<UInt8>) -> Bool {
        guard line.count >= 9, line[8] == UInt8(ascii: ":") else { return false }
        for index in 0..<8 where line[index] | 0x20 != locationName[index] { return false }
        return true
    }

    private static let locationName = Array("location".utf8)

    /// Whether `location`, resolved against `url` as the redirect interceptor resolves it, names
    /// another origin, or cannot be read as a URL (then it is not followed either).
    static func leavesOrigin(_ location: String, from url: URL) -> Bool {
        guard let target = URL(string: Request.encodingWhatURLsCannotHold(location), relativeTo: url)?.absoluteURL else { return true }
        return !target.isSameOrigin(as: url)
    }

    /// Whether `line` is a `Content-Length` or `Transfer-Encoding` field with blanks between its
    /// name and its colon (names compared without case, over the bytes).
    static func isFramingFieldWithBlankBeforeColon(_ line: Span<UInt8>) -> Bool {
        // Most lines are rejected by their first byte, the rest but these by the byte after the
        // name (`Content-Length` is 14 bytes, `Transfer-Encoding` 17), which must be a blank.
        guard line.count > 15, line[0] | 0x20 == UInt8(ascii: "c") || line[0] | 0x20 == UInt8(ascii: "t") else { return false }
        let afterName = line[0] | 0x20 == UInt8(ascii: "c") ? 14 : 17
        guard line.count > afterName, line[afterName] == UInt8(ascii: " ") || line[afterName] == UInt8(ascii: "\t") else {
            return false
        }
        var colon = 0
        while colon < line.count, line[colon] != UInt8(ascii: ":") { colon += 1 }
        guard colon < line.count else { return false }
        var nameEnd = colon
        while nameEnd > 0, line[nameEnd - 1] == UInt8(ascii: " ") || line[nameEnd - 1] == UInt8(ascii: "\t") { nameEnd -= 1 }
        guard nameEnd < colon else { return false }
        // The names without their colon.
        for name in [contentLengthName, transferEncodingName] where name.count - 1 == nameEnd {
            var same = true
            for index in 0..<nameEnd where line[index] | 0x20 != name[index] {
                same = false
                break
            }
            if same { return true }
        }
        return false
    }

    /// Whether `line` is a `Transfer-Encoding` field (its name compared without case, over the bytes).
    static func isTransferEncoding(_ line: Span<UInt8>) -> Bool {
        // "transfer-encoding:" is 18 bytes; most lines are rejected by their first byte.
        guard line.count >= 18, line[0] | 0x20 == UInt8(ascii: "t"), line[17] == UInt8(ascii: ":"), line[8] == UInt8(ascii: "-")
        else { return false }
        for index in 1..<17 where index != 8 && line[index] | 0x20 != transferEncodingName[index] { return false }
        return true
    }

    /// What a header line says of the body's length.
    enum LengthField: Equatable {
        /// The line is another field.
        case otherField
        case length(Int)
        /// A `Content-Length` field whose value is not one length (RFC 9110 §8.6: digits, or a
        /// list of one number repeated).
        case invalid
    }

    /// The `Content-Length` of `line`, if it is one (checked over the bytes: this runs on the
    /// loop thread for every header line).
    static func contentLength(_ line: Span<UInt8>) -> LengthField {
        // "content-length:" is 15 bytes; most lines are rejected by their first byte.
        guard line.count >= 15, line[0] | 0x20 == UInt8(ascii: "c"), line[14] == UInt8(ascii: ":"), line[7] == UInt8(ascii: "-")
        else { return .otherField }
        // The letters compared without case ('-' and ':' were checked exactly above).
        for index in 1..<14 where index != 7 && line[index] | 0x20 != contentLengthName[index] { return .otherField }
        // Elements separated by commas, each digits between optional blanks, all the same number
        // (empty elements aside); the end of the line closes the last one.
        var length: Int?
        var value = 0
        var digits = 0
        var afterDigits = false
        for index in 15...line.count {
            let byte = index < line.count ? line[index] : UInt8(ascii: ",")
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !afterDigits else { return .invalid }  // "5 6"
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowed) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                guard !overflow, !overflowed else { return .invalid }
                value = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if digits > 0 { afterDigits = true }
            case UInt8(ascii: ","):
                guard digits > 0 else { continue }  // an empty element, as lists allow
                guard length == nil || length == value else { return .invalid }
                length = value
                value = 0
                digits = 0
                afterDigits = false
            default:
                return .invalid
            }
        }
        return length.map { .length($0) } ?? .invalid
    }

    private static let contentEncodingName = Array("content-encoding:".utf8)

    /// The value of a `Content-Encoding` line, if `line` is one; read as ``parseField(_:into:)``
    /// reads it, blanks between the name and its colon included, so the loop inflates by the
    /// codings `headers` give.
    static func contentEncoding(_ line: Span<UInt8>) -> String? {
        let name = contentEncodingName
        guard line.count >= name.count, line[0] | 0x20 == UInt8(ascii: "c") else { return nil }
        for index in 1..<16 where line[index] | 0x20 != name[index] { return nil }
        var colon = 16
        while colon < line.count, line[colon] == UInt8(ascii: " ") || line[colon] == UInt8(ascii: "\t") { colon += 1 }
        guard colon < line.count, line[colon] == UInt8(ascii: ":") else { return nil }
        return fieldText(line.extracting((colon + 1)...)).trimmingBlanks()
    }

    /// Adds one header line (no line break) to `fields`: `Name: value`, or an obsolete folded
    /// line (RFC 9112 §5.2) continuing the previous field's value; others are ignored. A carriage
    /// return inside the line, which ends no line, is read as a space (RFC 9112 §2.2), so no
    /// value handed on holds one.
    static func parseField(_ line: Span<UInt8>, into fields: inout HTTPHeaders) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return }
        var carriageReturn = 0
        while carriageReturn < end, line[carriageReturn] != 0x0D { carriageReturn += 1 }
        if carriageReturn < end {
            var spaced = [UInt8](repeating: 0, count: end)
            for at in 0..<end { spaced[at] = line[at] == 0x0D ? UInt8(ascii: " ") : line[at] }
            parseField(spaced.span, into: &fields)
            return
        }
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            var start = 0
            while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
            guard start < end else { return }
            fields.continueLastValue(with: fieldText(line.extracting(start..<end)))
            return
        }
        var colon = 0
        while colon < end, line[colon] != UInt8(ascii: ":") { colon += 1 }
        guard colon < end else { return }
        // Blanks between the name and its colon are not the name's (RFC 9112 §5.1 has a
        // proxy remove them).
        var nameEnd = colon
        while nameEnd > 0, line[nameEnd - 1] == UInt8(ascii: " ") || line[nameEnd - 1] == UInt8(ascii: "\t") { nameEnd -= 1 }
        var start = colon + 1
        while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        var stop = end
        while stop > start, line[stop - 1] == UInt8(ascii: " ") || line[stop - 1] == UInt8(ascii: "\t") { stop -= 1 }
        fields.add(name: fieldText(line.extracting(..<nameEnd)), value: fieldText(line.extracting(start..<stop)))
    }

    /// Whether a line begins with "http/" in any case.
    static func beginsWithHTTPSlashInAnyCase(_ line: Span<UInt8>) -> Bool {
        guard line.count >= 5, line[4] == UInt8(ascii: "/") else { return false }
        return (line[0] | 0x20) == UInt8(ascii: "h") && (line[1] | 0x20) == UInt8(ascii: "t") && (line[2] | 0x20) == UInt8(ascii: "t")
            && (line[3] | 0x20) == UInt8(ascii: "p")
    }

    /// Whether the response being read may come over HTTP/2: over TLS unless HTTP/1.1 was asked
    /// for, over plain HTTP only with prior knowledge. The URL is the one libcurl is at (a
    /// redirect may have gone from `http` to `https`). Asked only of a status line that is not
    /// HTTP/1.x.
    private func mayRespondOverHTTP2() -> Bool {
        let version = request.options.httpVersion
        var scheme: UnsafeMutablePointer<CChar>?
        if let easy, runway_easy_getinfo_string(easy, CURLINFO_SCHEME, &scheme) == CURLE_OK, let scheme {
            return String(cString: scheme).lowercased() == "https" ? version != .http1 : version == .http2
        }
        return isSecure ? version != .http1 : version == .http2
    }

    /// The text of a field's name or value: UTF-8 when the bytes are valid UTF-8, else
    /// ISO-8859-1, each byte the character of its value (U+0000–U+00FF), as HTTP has read field
    /// bytes above 0x7F (`obs-text`, RFC 9110 §5.5): no byte is lost or replaced.
    static func fieldText(_ bytes: Span<UInt8>) -> String {
        if let utf8 = try? UTF8Span(validating: bytes) { return String(copying: utf8) }
        var scalars = String.UnicodeScalarView()
        for index in bytes.indices { scalars.append(Unicode.Scalar(bytes[index])) }
        return String(scalars)
    }
}
