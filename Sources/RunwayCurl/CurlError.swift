import CCurl
import RunwayCore

/// Maps libcurl result codes to ``RunwayError`` codes.
enum CurlError {
    /// - Parameters:
    ///   - lastStatus: The status line last read (0: none could be read).
    ///   - detail: What libcurl wrote in the transfer's error buffer, if anything.
    static func runwayError(
        _ code: CURLcode, request: Request, easy: UnsafeMutableRawPointer, lastStatus: Int, detail: String?
    ) -> RunwayError {
        let lostConnection = code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR
        let detail = safeDetail(detail, request: request, proxy: nil).flatMap { isStale($0, lostConnection: lostConnection) ? nil : $0 }
        let target = "(curl \(code.rawValue)) for \(request.method) \(RunwayError.text(forURL: request.url))"
        let message = "\(detail ?? String(cString: curl_easy_strerror(code))) \(target)"
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL where (300..<400).contains(lastStatus) && isPinnedHTTPS(request):
            return pinnedDowngrade(request, target: target)
        case CURLE_UNSUPPORTED_PROTOCOL where !(300..<400).contains(lastStatus):
            // The request's own scheme was checked before dispatch and no redirect was being
            // followed: libcurl says this of a reply that is not HTTP (no valid status line).
            return RunwayError(.responseInvalid, "the server's reply is not an HTTP response\(detail.map { ": " + $0 } ?? "") \(target)")
        case CURLE_URL_MALFORMAT where (300..<400).contains(lastStatus):
            // The request's URL was checked before dispatch: this is the Location of a redirect
            // libcurl was to follow, the server's fault, not the caller's URL.
            return RunwayError(
                .responseInvalid,
                "the server redirected (\(lastStatus)) to a Location that is not a URL\(detail.map { ": " + $0 } ?? "") \(target)")
        case CURLE_WEIRD_SERVER_REPLY:
            // libcurl refused a line of the head before the header callback saw it.
            let what = detail ?? "a header line without a colon, a Content-Length that is not a number, or a malformed status line"
            return RunwayError(.responseInvalid, "the server's reply is not valid HTTP: \(what) \(target)")
        case CURLE_BAD_FUNCTION_ARGUMENT where lastStatus != 0:
            // Every option was set, and checked, before the transfer began: during one, libcurl
            // 7.88 gives this code when its header store cannot split a line of the reply into a
            // name and a value (a folded line before any field, a trailer line without a colon).
            return RunwayError(
                .responseInvalid,
                "the server's reply is not valid HTTP: a header or trailer line that is not a field\(detail.map { " (" + $0 + ")" } ?? "") "
                    + target)
        case CURLE_RECV_ERROR where detail.map(isMalformedChunk) == true:
            // Not a lost connection: the server sent a body it did not frame right, and would again.
            return RunwayError(.responseInvalid, "the response's chunked body is malformed: \(detail ?? "") \(target)")
        case CURLE_RECV_ERROR where detail.map(isOversizedHead) == true:
            // Not a lost connection either: a head over libcurl's total limit would come again.
            return RunwayError(.responseTooLarge, "the response headers are over libcurl's limit: \(detail ?? "") \(target)")
        case CURLE_HTTP2_STREAM where detail.map(isProtocolError) == true:
            // Not a lost connection: the stream ended with PROTOCOL_ERROR, nghttp2's refusal of a
            // malformed response (a `:status` that is not three digits, or two of them, an
            // upper-case field name), or the server's word that the exchange broke the protocol.
            // Sent again, it would end the same way.
            return RunwayError(.responseInvalid, "the HTTP/2 response is not valid: \(detail ?? "") \(target)")
        case CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            // Before the request was about to go (no pre-transfer time), nothing of it left:
            // a connect timeout, refused, unreachable, unresolved.
            var preTransfer: curl_off_t = 0
            runway_easy_getinfo_off_t(easy, CURLINFO_PRETRANSFER_TIME_T, &preTransfer)
            let neverSent = preTransfer == 0
            if code == CURLE_OPERATION_TIMEDOUT, neverSent {
                return RunwayError(
                    .timeout, "timed out before a connection was made, nothing was sent\(detail.map { ": " + $0 } ?? "") \(target)",
                    neverSent: true)
            }
            return RunwayError(self.code(for: code), message, neverSent: neverSent)
        case CURLE_SSL_CACERT_BADFILE:
            // libcurl could not load the request's CA bundle (an empty file, one that holds no PEM
            // certificate, a directory; PEM bytes in memory that hold none): before the handshake.
            return RunwayError(
                .configuration, "the CA bundle cannot be used: \(message)", field: "tls.certificateAuthorities", neverSent: true)
        case CURLE_SSL_CERTPROBLEM:
            // libcurl could not load the client certificate or its key (a file that is not one, a
            // wrong password, a key of another certificate): before the handshake began.
            return RunwayError(
                .configuration, "the client certificate or its key cannot be used: \(message)", field: "tls.clientCertificate",
                neverSent: true)
        case CURLE_RECV_ERROR where detail.map(isTLSAlert) == true:
            // Under TLS 1.3 a server checks the client's certificate after the client's side of
            // the handshake is done: its refusal (no certificate, an unknown CA, an expired one)
            // arrives as an alert on the first read.
            return RunwayError(.tls, "the server refused the TLS connection: \(message)")
        case CURLE_OUT_OF_MEMORY:
            // libcurl 7.x reports response headers over its 100 KB limit as out of memory.
            return RunwayError(.responseTooLarge, "the response headers are over libcurl's limit, or memory ran out \(target)")
        default:
            return RunwayError(self.code(for: code), message)
        }
    }

    /// Whether `request` is `https` with pinned public keys, whose redirects libcurl follows to
    /// `https` only (a redirect to another scheme ends with `CURLE_UNSUPPORTED_PROTOCOL`).
    static func isPinnedHTTPS(_ request: Request) -> Bool {
        request.url.scheme?.lowercased() == "https" && !request.options.tls.pinnedPublicKeys.isEmpty
    }

    /// A pinned `https` request redirected to plain `http`, not followed: no key could be
    /// checked there. `.tls`, as a pin that does not match; the first request went out.
    static func pinnedDowngrade(_ request: Request, target: String) -> RunwayError {
        RunwayError(
            .tls,
            "a redirect to plain http was not followed: the request pins public keys, which only https can check \(target)",
            field: "tls.pinnedPublicKeys")
    }

    /// Whether libcurl's words are those of its chunked-body parser finding the framing broken
    /// (a chunk size that is not hexadecimal, too long, or a chunk not ended by CR LF), rather
    /// than of a connection that failed while reading.
    static func isMalformedChunk(_ detail: String) -> Bool {
        detail.hasSuffix("in chunked-encoding")
            && ["Illegal or missing hexadecimal sequence", "Too long hexadecimal number", "Malformed encoding found"]
                .contains { detail.hasPrefix($0) }
    }

    /// Whether libcurl's words are those of a connection that failed while the final failure is
    /// of another kind: libcurl keeps the first words written during a transfer, those of a
    /// reused connection found dead before it sent the request again on a fresh one.
    /// - Parameter lostConnection: Whether the final failure is itself one of receiving or
    ///   sending.
    static func isStale(_ detail: String, lostConnection: Bool) -> Bool {
        !lostConnection && (detail.hasPrefix("Recv failure") || detail.hasPrefix("Send failure"))
    }

    /// Whether libcurl's words are OpenSSL's for a TLS alert the server sent (`tlsv13 alert
    /// certificate required`, `tlsv1 alert unknown ca`, `sslv3 alert bad certificate`).
    static func isTLSAlert(_ detail: String) -> Bool {
        detail.hasPrefix("OpenSSL SSL_read:") && detail.contains(" alert ")
    }

    /// Whether libcurl's words say the response's header section went over its total limit
    /// (300 KB in libcurl 7.88, each field being under its 100 KB limit for one header).
    static func isOversizedHead(_ detail: String) -> Bool {
        detail.hasPrefix("Too large response headers")
    }

    /// Whether libcurl's words are those of an HTTP/2 stream that ended with PROTOCOL_ERROR
    /// ("HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err 1)").
    static func isProtocolError(_ detail: String) -> Bool {
        detail.hasPrefix("HTTP/2 stream ") && detail.hasSuffix(": PROTOCOL_ERROR (err 1)")
    }

    /// libcurl's words for an error's message, unless they hold something of the request's
    /// that messages never show (its URL's user, password, query or fragment, a proxy's
    /// credentials): then `nil`, and the message falls back on the code's generic text.
    static func safeDetail(_ detail: String?, request: Request, proxy: Proxy.Server?) -> String? {
        guard let detail else { return nil }
        let url = request.url
        let query = url.query(percentEncoded: false) ?? ""
        // A query's values one by one too (a token alone), those long enough to be a secret.
        let values = query.split(separator: "&").compactMap { $0.split(separator: "=", maxSplits: 1).dropFirst().first }
        let secrets =
            [
                url.user(percentEncoded: true), url.user(percentEncoded: false), url.password(percentEncoded: true),
                url.password(percentEncoded: false), url.query(percentEncoded: true), query, url.fragment(percentEncoded: true),
                url.fragment(percentEncoded: false), proxy?.credentials?.user, proxy?.credentials?.password,
            ] + values.filter { $0.count >= 4 }.map(String.init)
        return secrets.contains { $0.map { !$0.isEmpty && detail.contains($0) } ?? false } ? nil : detail
    }

    private static func code(for code: CURLcode) -> RunwayError.Code {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            .timeout
        case CURLE_COULDNT_CONNECT:
            .cannotConnect
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            .dnsFailure
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            .connectionLost
        case CURLE_BAD_CONTENT_ENCODING, CURLE_WEIRD_SERVER_REPLY:
            .responseInvalid
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED:
            .tls
        case CURLE_UNSUPPORTED_PROTOCOL:
            .unsupportedScheme
        case CURLE_URL_MALFORMAT:
            .invalidURL
        case CURLE_TOO_MANY_REDIRECTS:
            .tooManyRedirects
        case CURLE_FILESIZE_EXCEEDED:
            .responseTooLarge
        case CURLE_ABORTED_BY_CALLBACK:
            .cancelled
        default:
            .transport
        }
    }

    /// The error for a transfer through `proxy` that failed at the proxy, naming the proxy (never
    /// its credentials), or `nil` when the failure is not the proxy's.
    ///
    /// Each is `.cannotConnect`, `field` `proxy`: the origin was not reached. Refused credentials
    /// (an HTTP proxy's 407, or the 401 some proxies send instead; a SOCKS5 refusal) say so.
    static func proxyError(
        _ code: CURLcode, proxy: Proxy.Server, request: Request, easy: UnsafeMutableRawPointer, detail: String?
    ) -> RunwayError? {
        let target = "for \(request.method) \(RunwayError.text(forURL: request.url))"
        let detail = safeDetail(detail, request: request, proxy: proxy)
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY:
            let text = detail ?? String(cString: curl_easy_strerror(code))
            return RunwayError(
                .cannotConnect, "cannot connect to the \(proxy.name): \(text) (curl \(code.rawValue)) \(target)", field: "proxy",
                neverSent: true)
        case CURLE_PROXY:
            var detail = 0
            runway_easy_getinfo_long(easy, CURLINFO_PROXY_ERROR, &detail)
            return socksError(CURLproxycode(UInt32(clamping: detail)), proxy: proxy, target: target)
        default:
            guard proxy.isHTTP else { return nil }
            var connectStatus = 0
            runway_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
            if proxy.kind == .https, connectStatus == 0, code == CURLE_SSL_CACERT_BADFILE {
                // The proxy's own CA bundle, loaded before its handshake: no tunnel was asked for yet.
                let text = detail ?? String(cString: curl_easy_strerror(code))
                return RunwayError(
                    .configuration, "the \(proxy.name)'s CA bundle cannot be used: \(text) (curl \(code.rawValue)) \(target)",
                    field: "proxy", neverSent: true)
            }
            if proxy.kind == .https, connectStatus == 0, self.code(for: code) == .tls {
                // No tunnel was answered (or none was asked for, for plain `http`): the TLS that
                // failed is the proxy's own, its certificate most likely.
                let text = detail ?? String(cString: curl_easy_strerror(code))
                return RunwayError(
                    .tls, "TLS with the \(proxy.name) failed: \(text) (curl \(code.rawValue)) \(target)", field: "proxy",
                    neverSent: true)
            }
            guard connectStatus >= 300 else { return nil }
            if connectStatus == 407 || connectStatus == 401 {
                return proxyRefusedCredentials(proxy, status: connectStatus, request: request, response: nil)
            }
            let origin = "\(request.url.host ?? ""):\(request.url.port ?? (request.url.scheme == "https" ? 443 : 80))"
            return RunwayError(
                .cannotConnect, "the \(proxy.name) did not open a tunnel to \(origin): HTTP \(connectStatus) \(target)",
                field: "proxy", neverSent: true)
        }
    }

    /// The proxy asked for credentials, or refused the ones sent (`status` 407, or 401).
    static func proxyRefusedCredentials(_ proxy: Proxy.Server, status: Int, request: Request, response: Response?) -> RunwayError {
        let sent = proxy.credentials == nil ? "asks for credentials and none are set" : "refused the credentials"
        return RunwayError(
            .cannotConnect, "the \(proxy.name) \(sent) (HTTP \(status)) for \(request.method) \(RunwayError.text(forURL: request.url))",
            field: "proxy", response: response, neverSent: response == nil)
    }

    private static func socksError(_ detail: CURLproxycode, proxy: Proxy.Server, target: String) -> RunwayError {
        let reason: String
        switch detail {
        case CURLPX_USER_REJECTED, CURLPX_NO_AUTH, CURLPX_RECV_AUTH, CURLPX_SEND_AUTH:
            reason = proxy.credentials == nil ? "asks for credentials and none are set" : "refused the credentials"
        case CURLPX_REPLY_CONNECTION_REFUSED:
            reason = "could not connect to the origin: connection refused"
        case CURLPX_REPLY_HOST_UNREACHABLE, CURLPX_REPLY_NETWORK_UNREACHABLE, CURLPX_REPLY_TTL_EXPIRED:
            reason = "could not reach the origin"
        case CURLPX_REPLY_NOT_ALLOWED:
            reason = "does not allow the connection"
        case CURLPX_RESOLVE_HOST:
            reason = "was not used: the origin's name did not resolve on this machine"
        case CURLPX_REPLY_GENERAL_SERVER_FAILURE:
            reason = "failed (general SOCKS server failure)"
        default:
            reason = "failed (libcurl proxy code \(detail.rawValue))"
        }
        return RunwayError(.cannotConnect, "the \(proxy.name) \(reason) \(target)", field: "proxy", neverSent: true)
    }
}
