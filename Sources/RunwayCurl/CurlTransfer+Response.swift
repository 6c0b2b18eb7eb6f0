import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CurlTransfer {
    /// The response, or the error, for a transfer libcurl reports done with `code` on `easy`.
    func outcome(easy: UnsafeMutableRawPointer, code: CURLcode) -> Result<Response, RunwayError> {
        if let failure { return .failure(failure) }
        // Stopped by the header callback once the response was complete, to close its connection,
        // or at a 303 that libcurl would follow with the wrong method.
        var code = (closedUntrustedConnection || stoppedAtRedirect) && code == CURLE_WRITE_ERROR ? CURLE_OK : code
        // A 417 to the request's expectation, which libcurl was kept from sending again.
        if code == CURLE_TOO_MANY_REDIRECTS, refusedExpectation, status == 417 { code = CURLE_OK }
        if code == CURLE_ABORTED_BY_CALLBACK, refusedResend {
            return .failure(
                RunwayError(
                    .connectionLost,
                    "the connection closed before the response, and \(request.method) is not idempotent: not sent again, "
                        + "since the server may have it (a retry policy that allows it, or an Idempotency-Key header, may) "
                        + "for \(RunwayError.text(forURL: request.url))"))
        }
        if code == CURLE_SEND_FAIL_REWIND {
            return .failure(
                RunwayError(
                    .connectionLost,
                    "the streamed body had to be sent again (a 307 or 308 redirect, or a connection that closed before the "
                        + "response) and it cannot be: part of it was read (make it with RequestBodyStream.sequence(length:sha256:_:) "
                        + "or from a file) for \(request.method) \(RunwayError.text(forURL: request.url))"
                ))
        }
        // libcurl read the declared length and stopped; the sequence may have yielded more since.
        if code == CURLE_OK, let error = bodyReader?.failure { return .failure(error) }
        guard code == CURLE_OK else {
            let detail = errorDetail
            if let proxy, let failure = CurlError.proxyError(code, proxy: proxy, request: request, easy: easy, detail: detail) {
                return .failure(failure)
            }
            // A head cut after its Content-Length: libcurl calls it a body cut short ("transfer
            // closed with N bytes remaining to read"), but no byte of the body came.
            if code == CURLE_PARTIAL_FILE, status != 0, !headerSectionEnded { return .failure(headCut()) }
            return .failure(CurlError.runwayError(code, request: request, easy: easy, lastStatus: status, detail: detail))
        }
        // libcurl 7.88 passes a head cut before any Content-Length as a complete, empty response.
        guard status == 0 || headerSectionEnded else { return .failure(headCut()) }
        if let unfinished = unfinishedEncoding() { return .failure(unfinished) }
        var responseCode = 0
        runway_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &responseCode)
        let response = Response(
            status: responseCode != 0 ? responseCode : status,
            headers: headers,
            body: body,
            metrics: metrics(easy),
            origin: .network)
        if response.status == 407, let proxy, proxy.isHTTP, !isSecure {
            // A request the proxy forwards (plain `http`) gets its refusal as the response.
            return .failure(CurlError.proxyRefusedCredentials(proxy, status: 407, request: request, response: response))
        }
        return .success(response)
    }

    /// The `.connectionLost` of a response whose header section never ended.
    private func headCut() -> RunwayError {
        RunwayError(
            .connectionLost,
            "the connection closed inside the response's header section (status \(status), no blank line) for "
                + "\(request.method) \(RunwayError.text(forURL: request.url))")
    }

    /// Per-phase timings and connection facts from `curl_easy_getinfo`.
    func metrics(_ easy: UnsafeMutableRawPointer) -> TransferMetrics {
        func time(_ info: CURLINFO) -> Duration {
            var micros: curl_off_t = 0
            runway_easy_getinfo_off_t(easy, info, &micros)
            return .microseconds(micros)
        }
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            runway_easy_getinfo_long(easy, info, &value)
            return value
        }
        var ip: UnsafeMutablePointer<CChar>?
        runway_easy_getinfo_string(easy, CURLINFO_PRIMARY_IP, &ip)
        // `address:port`, `[v6 address]:port`, built by appending (cheaper than interpolating).
        var remoteAddress = ip.map { String(cString: $0) } ?? ""
        if !remoteAddress.isEmpty {
            if remoteAddress.utf8.contains(UInt8(ascii: ":")) { remoteAddress = "[" + remoteAddress + "]" }
            remoteAddress += ":"
            remoteAddress += String(long(CURLINFO_PRIMARY_PORT))
        }
        let version: String =
            switch long(CURLINFO_HTTP_VERSION) {
            case CURL_HTTP_VERSION_1_0: "1.0"
            case CURL_HTTP_VERSION_1_1: "1.1"
            case CURL_HTTP_VERSION_2_0: "2"
            case CURL_HTTP_VERSION_3: "3"
            default: ""
            }
        // libcurl times a phase the transfer skipped too, at a few microseconds: the lookup of
        // an IP literal, and the lookup, connect and handshake of a reused connection. Zero
        // says it did not happen, as `TransferMetrics` promises.
        let reused = long(CURLINFO_NUM_CONNECTS) == 0
        return TransferMetrics(
            nameLookup: reused || Self.isIPLiteral(lookedUpName) ? .zero : time(CURLINFO_NAMELOOKUP_TIME_T),
            connect: reused ? .zero : time(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: reused ? .zero : time(CURLINFO_APPCONNECT_TIME_T),
            preTransfer: time(CURLINFO_PRETRANSFER_TIME_T),
            firstByte: time(CURLINFO_STARTTRANSFER_TIME_T),
            total: time(CURLINFO_TOTAL_TIME_T),
            connectionReused: reused,
            httpVersion: version,
            remoteAddress: remoteAddress,
            redirectCount: long(CURLINFO_REDIRECT_COUNT))
    }

    /// The name libcurl looked up to connect: the proxy's, else the address of a connect
    /// override for the URL's host, else the URL's host.
    var lookedUpName: String {
        if let proxy { return proxy.host }
        let host = request.url.host(percentEncoded: false) ?? ""
        let override = request.options.connectOverrides.first { $0.host.caseInsensitiveEquals(host) }
        return override?.connectHost ?? host
    }

    /// Whether `name` is an IPv4 address in dotted-quad form or an IPv6 address (in brackets
    /// or not): a name libcurl connects to without a lookup.
    static func isIPLiteral(_ name: String) -> Bool {
        if name.utf8.contains(UInt8(ascii: ":")) { return true }  // no host name holds a ':'
        let parts = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            }
    }
}
