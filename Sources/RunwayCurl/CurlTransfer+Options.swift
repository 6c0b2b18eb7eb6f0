import CCurl
import RunwayCore
import RunwaySync

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

extension CurlTransfer {
    /// Applies the request to a new easy handle.
    /// - Parameter share: the dispatcher's TLS session cache, held by the transfer from now on.
    /// - Parameter userAgentHeader: `User-Agent: …`, sent unless the request sets its own.
    /// - Parameter readableCAFiles: CA bundle and client certificate paths already found readable
    ///   (the dispatcher's cache).
    /// - Parameter watch: the loop's socket watch, told of every connection socket opened and closed.
    func configure(
        _ easy: UnsafeMutableRawPointer, share: CurlShare, userAgentHeader: String, watch: SocketWatch,
        readableCAFiles: Locked<Set<String>>
    ) throws(RunwayError) {
        let options = request.options
        // Held until the handle is freed: libcurl takes the share's locks when it frees a handle.
        self.share = share
        try check(runway_easy_setopt_share(easy, share.pointer), "the TLS session cache")
        let isHTTPS = isSecure
        let me = Unmanaged.passUnretained(self).toOpaque()
        try setURL(easy)
        try set(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        // The DNS bypass gives each attempt its address and what is left of the connect timeout,
        // and a retry's total timeout what is left of the call's.
        try set(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, options.connectTimeout.milliseconds))
        try set(easy, CURLOPT_TIMEOUT_MS, options.timeout.map { max(1, $0.milliseconds) } ?? 0)
        try setConnectOverrides(easy, options.connectOverrides)

        // The handle is new, so only non-default options are set.
        try set(easy, CURLOPT_NOSIGNAL, 1)
        // A transfer that ends while its host name resolves (cancelled, timed out) leaves the
        // resolver's thread to finish on its own. Otherwise libcurl waits for the name server
        // on the loop thread, and every call of the dispatcher waits with it, up to the
        // resolver's own timeouts. Unknown before libcurl 7.87, which always waits.
        _ = runway_easy_setopt_long(easy, CURLOPT_QUICK_EXIT, 1)
        try set(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        try set(easy, CURLOPT_TCP_KEEPALIVE, 1)

        // Method and body. curl copies the body (COPYPOSTFIELDS), so the request may go.
        let method = request.method
        if method == .head {
            try set(easy, CURLOPT_NOBODY, 1)
        } else if let body = request.body {
            try set(easy, CURLOPT_POST, 1)
            try setBody(easy, body)
            if method != .post { try set(easy, CURLOPT_CUSTOMREQUEST, method.rawValue) }
        } else if let stream = request.bodyStream {
            try set(easy, CURLOPT_POST, 1)
            try setBodyStream(easy, stream)
            if method != .post { try set(easy, CURLOPT_CUSTOMREQUEST, method.rawValue) }
        } else if method == .post {
            // A POST without a body is still a POST to libcurl, not a custom method, so a 301,
            // 302 or 303 turns it into a GET, as one with a body (a custom "POST" would go again).
            try set(easy, CURLOPT_POST, 1)
            try setBody(easy, Data())
        } else if method != .get {
            try set(easy, CURLOPT_CUSTOMREQUEST, method.rawValue)
        }

        var resume: (offset: Int64, validator: String?) = (0, nil)
        if let download = request.download { resume = try prepareDownload(download) }
        resumeOffset = resume.offset
        resumeValidator = resume.validator
        try setHeaders(easy, userAgentHeader: userAgentHeader, range: resume.offset, ifRange: resume.validator)
        // Runway inflates, on the awaiting task or on the loop as the body arrives (see
        // `ResponseDecoding`): libcurl 7.88 passes a truncated gzip stream as complete.
        if options.acceptCompressedResponses || streams { try set(easy, CURLOPT_HTTP_CONTENT_DECODING, 0) }

        // Callbacks.
        try check(
            runway_easy_setopt_socket_callbacks(
                easy, curlOpenSocketCallback, curlCloseSocketCallback, Unmanaged.passUnretained(watch).toOpaque()),
            "socket callbacks")
        try check(runway_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "write callback")
        try set(easy, CURLOPT_WRITEDATA, me)
        try check(runway_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "header callback")
        try set(easy, CURLOPT_HEADERDATA, me)
        if sendsOnce || idleNanoseconds != nil {
            // Asked before every send, so libcurl cannot send a POST again on its own; and when
            // the connection is made, which starts the idle clock.
            try check(runway_easy_setopt_prereq_callback(easy, curlPrereqCallback), "pre-request callback")
            try set(easy, CURLOPT_PREREQDATA, me)
        }
        if request.progress != nil || watchesUpload {
            try check(runway_easy_setopt_progress_callback(easy, curlProgressCallback), "progress callback")
            try set(easy, CURLOPT_XFERINFODATA, me)
            try set(easy, CURLOPT_NOPROGRESS, 0)
        }

        // Redirects.
        if options.redirects.maxRedirects > 0 {
            // A pinned `https` request follows `https` only: over plain `http` no key is checked,
            // and the pin would be skipped without a word. One test decides both this and the
            // error a refused redirect maps to (`CurlError.pinnedDowngrade`).
            try set(easy, CURLOPT_REDIR_PROTOCOLS_STR, CurlError.isPinnedHTTPS(request) ? "https" : "http,https")
            try set(easy, CURLOPT_FOLLOWLOCATION, 1)
            try set(easy, CURLOPT_MAXREDIRS, options.redirects.maxRedirects)
            // libcurl keeps a custom method (PUT, PATCH, DELETE) on a 301 or 302 and drops its
            // body: the body goes again, as on a 307 or 308. (A 303 to one is not followed: see
            // `returnsSeeOther`.)
            if method != .post, request.hasBody { try set(easy, CURLOPT_POSTREDIR, Int(CURL_REDIR_POST_301 | CURL_REDIR_POST_302)) }
        }

        // HTTP version: HTTP/2 over TLS via ALPN; h2c only when asked (see CurlDispatcher).
        switch options.httpVersion {
        case .http1:
            try set(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        case .http2 where !isHTTPS:
            try set(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
        default:
            break  // CURL_HTTP_VERSION_2TLS is libcurl's default
        }
        if isHTTPS && options.httpVersion != .http1 {
            // Wait for a connection that may multiplex rather than open another. Only where
            // HTTP/2 can be negotiated: over HTTP/1.1 it would serialise requests.
            try set(easy, CURLOPT_PIPEWAIT, 1)
        }

        // TLS.
        let tls = options.tls
        if !tls.verifyPeer {
            try set(easy, CURLOPT_SSL_VERIFYPEER, 0)
            try set(easy, CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let authorities = tls.certificateAuthorities {
            if let path = authorities.filePath {
                guard Self.isReadable(path, known: readableCAFiles) else {
                    throw RunwayError(
                        .configuration, "CA bundle \(path) is not a readable file", field: "tls.certificateAuthorities", neverSent: true)
                }
                try set(easy, CURLOPT_CAINFO, path)
                try set(easy, CURLOPT_CAPATH, nil as String?)
            } else if let pem = authorities.pemData {
                try setBlob(easy, CURLOPT_CAINFO_BLOB, pem, "CA bundle in memory")
                try set(easy, CURLOPT_CAPATH, nil as String?)
            }
        }
        if !tls.pinnedPublicKeys.isEmpty {
            try set(easy, CURLOPT_PINNEDPUBLICKEY, tls.pinnedPublicKeys.joined(separator: ";"))
        }
        if let certificate = tls.clientCertificate {
            try setClientCertificate(easy, certificate, readableFiles: readableCAFiles)
        }

        try setProxy(easy)
    }

    /// The client certificate and its key. libcurl reuses a connection, and resumes a TLS
    /// session, only for a request with the same certificate (file or bytes), so no request goes
    /// out under another's identity. Files are checked before the request goes, as a CA bundle's.
    private func setClientCertificate(
        _ easy: UnsafeMutableRawPointer, _ certificate: ClientCertificate, readableFiles: Locked<Set<String>>
    ) throws(RunwayError) {
        let paths = certificate.filePaths
        for path in paths where !Self.isReadable(path, known: readableFiles) {
            throw RunwayError(
                .configuration, "the client certificate's file \(path) is not a readable file", field: "tls.clientCertificate",
                neverSent: true)
        }
        try set(easy, CURLOPT_SSLCERTTYPE, certificate.isPKCS12 ? "P12" : "PEM")
        if let first = paths.first {
            try set(easy, CURLOPT_SSLCERT, first)
            if paths.count > 1 { try set(easy, CURLOPT_SSLKEY, paths[1]) }
        } else if let bytes = certificate.certificateData {
            try setBlob(easy, CURLOPT_SSLCERT_BLOB, bytes, "client certificate in memory")
            if let key = certificate.privateKeyData { try setBlob(easy, CURLOPT_SSLKEY_BLOB, key, "client certificate's key in memory") }
        }
        if !certificate.isPKCS12 { try set(easy, CURLOPT_SSLKEYTYPE, "PEM") }
        // Always a password, empty when none is given: without one OpenSSL asks for it on the
        // terminal, and would block the loop until someone typed it.
        try set(easy, CURLOPT_KEYPASSWD, certificate.keyPassword ?? "")
    }

    /// Whether `path` is a readable file, asked of the file system once per path (`known` holds
    /// the paths already found readable: the dispatcher's cache).
    private static func isReadable(_ path: String, known: Locked<Set<String>>) -> Bool {
        if known.withLock({ $0.contains(path) }) { return true }
        guard FileManager.default.isReadableFile(atPath: path) else { return false }
        known.withLock { _ = $0.insert(path) }
        return true
    }

    /// Sets a blob option to `data`, which libcurl copies (`CURL_BLOB_COPY`).
    private func setBlob(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ data: Data, _ what: String) throws(RunwayError) {
        var data = data
        let code = data.withUnsafeMutableBytes { raw in runway_easy_setopt_blob(easy, option, raw.baseAddress, raw.count) }
        try check(code, what)
    }

    /// Sets the URL parsed here, on the caller's thread (`CURLOPT_CURLU`): given as text
    /// (`CURLOPT_URL`), it would be parsed when the transfer starts, on the loop thread every
    /// transfer passes, which now copies the parsed parts instead (about 5,800 fewer
    /// instructions a request there at c = 16, as many more here). Parsed with the flags libcurl
    /// parses its own text with, so both read a URL alike. A followed redirect's URL is parsed by
    /// libcurl.
    /// - Throws: `.invalidURL`, never sent, for a URL libcurl cannot read: a host name with a
    ///   character URLs allow but libcurl refuses (`$`, `!`, `'`, `*`, `,` and the like).
    ///   Unparsed, libcurl would fail it later on the loop thread, with no word on what was sent.
    private func setURL(_ easy: UnsafeMutableRawPointer) throws(RunwayError) {
        guard let url = curl_url() else {
            throw RunwayError(.transport, "libcurl could not allocate a URL handle", neverSent: true)
        }
        let flags = UInt32(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME)
        let parsed = urlString.withCString { curl_url_set(url, CURLUPART_URL, $0, flags) }
        guard parsed == CURLUE_OK else {
            curl_url_cleanup(url)
            throw RunwayError(
                .invalidURL,
                "libcurl cannot read the URL \"\(RunwayError.text(forURL: urlString))\": \(String(cString: curl_url_strerror(parsed)))",
                neverSent: true)
        }
        parsedURL = url
        try check(runway_easy_setopt_curlu(easy, url), "the URL")
    }

    /// The connect overrides (DNS bypass), if any: per transfer, unlike `CURLOPT_RESOLVE`, which
    /// would leave entries in the multi handle's shared DNS cache.
    private func setConnectOverrides(_ easy: UnsafeMutableRawPointer, _ wanted: [ConnectOverride]) throws(RunwayError) {
        guard !wanted.isEmpty else { return }
        var overrides: UnsafeMutablePointer<curl_slist>?
        for override in wanted {
            overrides = Self.append(overrides, override)
        }
        connectToList = overrides
        try set(easy, CURLOPT_CONNECT_TO, overrides)
    }

    /// The proxy, or none. Always set: without `CURLOPT_PROXY` libcurl would take one from
    /// `http_proxy` and the like in the environment on its own, and without `CURLOPT_NOPROXY`
    /// it would let `no_proxy` bypass an explicit one (``Proxy/environment`` reads both
    /// before the hand-over instead). Without a proxy `CURLOPT_NOPROXY` is set too: libcurl
    /// reads `no_proxy` and `NO_PROXY` from the environment for every transfer otherwise, only
    /// to find there is no proxy to bypass.
    private func setProxy(_ easy: UnsafeMutableRawPointer) throws(RunwayError) {
        guard let proxy else {
            try set(easy, CURLOPT_PROXY, "")
            try set(easy, CURLOPT_NOPROXY, "")
            return
        }
        try set(easy, CURLOPT_PROXY, proxy.url)
        try set(easy, CURLOPT_NOPROXY, "")
        if let credentials = proxy.credentials {
            try set(easy, CURLOPT_PROXYUSERNAME, credentials.user)
            try set(easy, CURLOPT_PROXYPASSWORD, credentials.password)
        }
        // The proxy's `200 Connection established` is not the response's header section.
        if proxy.isHTTP { try set(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1) }
        // An HTTPS proxy's certificate is verified, by the system's authorities or the given ones.
        if let authorities = proxy.certificateAuthorities {
            if let path = authorities.filePath {
                guard FileManager.default.isReadableFile(atPath: path) else {
                    throw RunwayError(
                        .configuration, "the \(proxy.name)'s CA bundle \(path) is not a readable file", field: "proxy", neverSent: true)
                }
                try set(easy, CURLOPT_PROXY_CAINFO, path)
            } else if let pem = authorities.pemData {
                try setBlob(easy, CURLOPT_PROXY_CAINFO_BLOB, pem, "the proxy's CA bundle in memory")
            }
            try set(easy, CURLOPT_PROXY_CAPATH, nil as String?)
        }
    }

    /// The body, copied by libcurl (COPYPOSTFIELDS), so the request may go.
    private func setBody(_ easy: UnsafeMutableRawPointer, _ body: Data) throws(RunwayError) {
        runway_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
        let code = body.withUnsafeBytes { raw in
            // An empty body still needs a non-null pointer.
            runway_easy_setopt_pointer(
                easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
        }
        try check(code, "request body")
    }

    /// The request's headers, then ours: the default User-Agent, no `Expect: 100-continue`
    /// round trip for a body, no Content-Type of libcurl's, what the awaiting task decodes, and the `Range`
    /// and `If-Range` of a resumed download.
    private func setHeaders(_ easy: UnsafeMutableRawPointer, userAgentHeader: String, range: Int64, ifRange: String?) throws(RunwayError) {
        var list: UnsafeMutablePointer<curl_slist>?
        // Each line is assembled in one buffer, NUL-terminated, and copied by libcurl: no
        // string is built per field.
        var line: [UInt8] = []
        line.reserveCapacity(256)
        for field in request.headers {
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: field.name.utf8)
            // "Name;" is curl's way to send a header with an empty value ("Name:" would remove
            // curl's own header of that name); a value of only spaces is empty once trimmed.
            if field.value.allBytes({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                line.append(UInt8(ascii: ";"))
            } else {
                line.append(UInt8(ascii: ":"))
                line.append(UInt8(ascii: " "))
                line.append(contentsOf: field.value.utf8)
            }
            line.append(0)
            list = line.withUnsafeBytes { curl_slist_append(list, $0.baseAddress?.assumingMemoryBound(to: CChar.self)) }
        }
        // The default User-Agent as a header line: CURLOPT_USERAGENT would have libcurl format
        // the line anew (aprintf) for every request, on the loop thread.
        if request.headers["User-Agent"] == nil { list = Self.append(list, userAgentHeader) }
        // libcurl asks a body of over 1 KiB to wait for `100 Continue`; with no body, no line
        // (each custom line costs libcurl a scan per header name it looks for, on the loop).
        if request.hasBody { list = Self.append(list, "Expect:") }
        // A body goes with the Content-Type the request has, or none: libcurl would otherwise
        // label it `application/x-www-form-urlencoded`, which the signer never saw.
        if request.hasBody || request.method == .post, request.headers["Content-Type"] == nil { list = Self.append(list, "Content-Type:") }
        if decodesOnAwaitingTask || inflatesOnLoop, !asksOwnEncodings {
            // Only what Runway inflates (it can tell a truncated stream); libcurl passes the body
            // through as sent. A resumed download asks for none: its range counts stored bytes.
            list = Self.append(list, range > 0 ? "Accept-Encoding: identity" : Self.acceptEncodingLine)
        } else if streams, !asksOwnEncodings {
            // A streamed body is handed over as sent: ask for it unencoded.
            list = Self.append(list, "Accept-Encoding: identity")
        }
        if range > 0 { list = Self.append(list, "Range: bytes=\(range)-") }
        if range > 0, let ifRange, request.headers["If-Range"] == nil { list = Self.append(list, "If-Range: \(ifRange)") }
        headerList = list
        try set(easy, CURLOPT_HTTPHEADER, list)
    }

    /// The `Accept-Encoding` line of what Runway decodes, made once.
    private static let acceptEncodingLine = "Accept-Encoding: \(ResponseDecoder.acceptEncoding)"

    /// `curl_slist_append` of `line`, which libcurl copies; lent with `withCString` (see
    /// ``set(_:_:_:)``), not copied into an array first.
    private static func append(_ list: UnsafeMutablePointer<curl_slist>?, _ line: String) -> UnsafeMutablePointer<curl_slist>? {
        line.withCString { curl_slist_append(list, $0) }
    }

    /// Appends `override`'s line (``withConnectToLine(_:_:)``) to `list`.
    private static func append(_ list: UnsafeMutablePointer<curl_slist>?, _ override: ConnectOverride) -> UnsafeMutablePointer<curl_slist>?
    {
        withConnectToLine(override) { curl_slist_append(list, $0) }
    }

    /// Calls `body` with `override` as libcurl's `CURLOPT_CONNECT_TO` takes it, a C string:
    /// `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`, an IPv6 address in brackets, a port left out
    /// empty. Written into one buffer on the stack: concatenating strings cost about 1,500
    /// instructions per bypassed request, on the loop thread. A NUL in a name ends the line there,
    /// as `withCString` would.
    static func withConnectToLine<R>(_ override: ConnectOverride, _ body: (UnsafePointer<CChar>) -> R) -> R {
        var host = override.host
        var connectHost = override.connectHost
        // An IPv6 address in brackets, on both sides: libcurl matches the host against the URL's
        // written `[::1]`, and reads the address's colons as the port's otherwise.
        let hostBracketed = !host.allBytes { $0 != UInt8(ascii: ":") } && host.utf8.first != UInt8(ascii: "[")
        let bracketed = !connectHost.allBytes { $0 != UInt8(ascii: ":") } && connectHost.utf8.first != UInt8(ascii: "[")
        // Both names, three colons, four brackets, two ports of at most 20 characters, the NUL.
        let capacity = host.utf8.count + connectHost.utf8.count + 48
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
            var line = LineWriter(buffer: buffer)
            if hostBracketed { line.put(UInt8(ascii: "[")) }
            line.put(&host)
            if hostBracketed { line.put(UInt8(ascii: "]")) }
            line.put(UInt8(ascii: ":"))
            line.put(port: override.port)
            line.put(UInt8(ascii: ":"))
            if bracketed { line.put(UInt8(ascii: "[")) }
            line.put(&connectHost)
            if bracketed { line.put(UInt8(ascii: "]")) }
            line.put(UInt8(ascii: ":"))
            line.put(port: override.connectPort)
            line.put(0)
            guard let start = buffer.baseAddress else { return "".withCString(body) }  // never: the capacity is 48 at least
            return body(start)
        }
    }

    /// Writes bytes into a buffer the caller sized (a struct, not closures over a counter, which
    /// the runtime checks for exclusive access at every write).
    private struct LineWriter {
        let buffer: UnsafeMutableBufferPointer<CChar>
        var count = 0

        mutating func put(_ byte: UInt8) {
            buffer[count] = CChar(bitPattern: byte)
            count += 1
        }

        mutating func put(_ text: inout String) {
            text.withUTF8 { bytes in
                for byte in bytes { put(byte) }
            }
        }

        /// A port in decimal; nothing for none.
        mutating func put(port: Int?) {
            guard let port else { return }
            if port < 0 { put(UInt8(ascii: "-")) }
            // The digits last to first, then turned around in place.
            var first = count
            var rest = port.magnitude
            repeat {
                put(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            } while rest > 0
            var last = count - 1
            while first < last {
                buffer.swapAt(first, last)
                first += 1
                last -= 1
            }
        }
    }

    /// Makes the destination's folder and takes the partial file (``lockPartialFile(_:)``);
    /// returns where the download resumes and the validator sent with it as `If-Range` (0 and
    /// `nil`: from the start, the partial file emptied). Bytes without a validator kept for them
    /// are not resumed: nothing could tell whether they are of the resource's current version.
    private func prepareDownload(_ download: DownloadTarget) throws(RunwayError) -> (offset: Int64, validator: String?) {
        try download.makeFolder()
        try download.checkPlaces()
        let size = try lockPartialFile(download)
        if download.resumes(request), size > 0, let validator = download.storedValidator() { return (size, validator) }
        if size > 0, ftruncate(partialLock, 0) != 0 {
            throw RunwayError(.fileIO, "cannot empty \(download.partialFile.path): \(String(cString: strerror(errno)))", neverSent: true)
        }
        // The partial file is empty: a validator left beside it labels nothing.
        unlink(download.validatorFile.path)
        return (0, nil)
    }

    private func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: Int) throws(RunwayError) {
        try check(runway_easy_setopt_long(easy, option, value), "option \(option.rawValue)")
    }

    private func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String?) throws(RunwayError) {
        // `withCString` lends a string's own NUL-terminated storage (a short one's on the stack);
        // passing a String where C wants a pointer copies it into a new array every time.
        let code =
            if let value { value.withCString { runway_easy_setopt_string(easy, option, $0) } } else {
                runway_easy_setopt_string(easy, option, nil)
            }
        try check(code, "option \(option.rawValue)")
    }

    private func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: UnsafeMutableRawPointer?) throws(RunwayError) {
        try check(runway_easy_setopt_pointer(easy, option, value), "option \(option.rawValue)")
    }

    private func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: UnsafeMutablePointer<curl_slist>?) throws(RunwayError)
    {
        try check(runway_easy_setopt_slist(easy, option, value), "option \(option.rawValue)")
    }

    /// Throws when libcurl refused an option; `what` is only built on failure (hot path).
    func check(_ code: CURLcode, _ what: @autoclosure () -> String) throws(RunwayError) {
        guard code == CURLE_OK else {
            throw RunwayError(.configuration, "libcurl rejected \(what()): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, clamped to `Int`.
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let ms = Double(seconds) * 1000 + (Double(attoseconds) / 1e15).rounded(.up)
        return ms >= Double(Int.max) ? Int.max : Int(ms)
    }
}
