import CCurl
import Runway

/// Maps libcurl result codes to ``RunwayError`` codes.
enum CurlError {
    /// - Parameter lastStatus: The status line last read (0: none could be read).
    static func runwayError(_ code: CURLcode, request: Request, easy: UnsafeMutableRawPointer, lastStatus: Int) -> RunwayError {
        let text = String(cString: curl_easy_strerror(code))
        let message = "\(text) (curl \(code.rawValue)) for \(request.method) \(request.url.absoluteString)"
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL where !(300..<400).contains(lastStatus):
            // The request's own scheme was checked before dispatch and no redirect was being
            // followed: libcurl says this of a reply that is not HTTP (no valid status line).
            return RunwayError(.responseInvalid, "the server's reply is not an HTTP response (curl \(code.rawValue)) for \(request.method) \(request.url.absoluteString)")
        case CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            // Before the request was about to go (no pre-transfer time), nothing of it left:
            // a connect timeout, refused, unreachable, unresolved.
            var preTransfer: curl_off_t = 0
            runway_easy_getinfo_off_t(easy, CURLINFO_PRETRANSFER_TIME_T, &preTransfer)
            let neverSent = preTransfer == 0
            if code == CURLE_OPERATION_TIMEDOUT, neverSent {
                return RunwayError(
                    .timeout, "timed out before a connection was made: nothing was sent (curl \(code.rawValue)) for \(request.method) \(request.url.absoluteString)",
                    neverSent: true)
            }
            return RunwayError(self.code(for: code), message, neverSent: neverSent)
        case CURLE_OUT_OF_MEMORY:
            // libcurl 7.x reports response headers over its 100 KB limit as out of memory.
            return RunwayError(.responseTooLarge, "the response headers are over libcurl's limit, or memory ran out (curl \(code.rawValue)) for \(request.method) \(request.url.absoluteString)")
        default:
            return RunwayError(self.code(for: code), message)
        }
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
        case CURLE_BAD_CONTENT_ENCODING:
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
}
