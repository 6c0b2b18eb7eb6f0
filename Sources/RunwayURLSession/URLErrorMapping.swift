import Foundation
import RunwayCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Maps `URLSession` failures to ``RunwayError`` codes.
enum URLErrorMapping {
    /// - Parameters:
    ///   - error: what URLSession failed the task with.
    ///   - bodyIsEncoded: whether the response announced a `Content-Encoding` (libcurl's decoder
    ///     then reads the body, and may fail writing what it cannot decode).
    static func runwayError(for error: any Error, bodyIsEncoded: Bool = false) -> RunwayError {
        let nsError = error as NSError
        // Foundation's error carries the failing URL (user name, password, query and all) in
        // its user info, which its description prints: it is kept without it.
        let error = NSError(
            domain: nsError.domain, code: nsError.code, userInfo: [NSLocalizedDescriptionKey: nsError.localizedDescription])
        guard nsError.domain == NSURLErrorDomain else {
            return RunwayError(.transport, "\(error)", underlying: error)
        }
        // Failable on Linux, not on Darwin; the cast keeps one spelling for both.
        guard let code = URLError.Code(rawValue: nsError.code) as URLError.Code? else {
            return RunwayError(.transport, "\(error)", underlying: error)
        }
        let message = "\(nsError.localizedDescription) (NSURLError \(nsError.code))"
        if code == .unknown, isTLSFailure(nsError.localizedDescription) {
            return RunwayError(.tls, message, underlying: error)
        }
        if code == .unknown, isMalformedChunk(nsError.localizedDescription) {
            // Not a lost connection: the server framed the body wrong, and would again.
            return RunwayError(.responseInvalid, "the response's chunked body is malformed: \(message)", underlying: error)
        }
        if code == .unknown, isCutReply(nsError.localizedDescription) {
            return RunwayError(.connectionLost, message, underlying: error)
        }
        if code == .unknown, let reason = unreadableReply(nsError.localizedDescription, bodyIsEncoded: bodyIsEncoded) {
            return RunwayError(.responseInvalid, "\(reason): \(message)", underlying: error)
        }
        if code == .unknown, nsError.localizedDescription.lowercased().contains("failed writing header") {
            return RunwayError(
                .responseInvalid,
                "FoundationNetworking could not read a header line of the reply (it refuses a status line without a reason "
                    + "phrase, bare LF line ends and values that are not UTF-8, which CurlDispatcher reads): \(message)",
                underlying: error)
        }
        if code == .unsupportedURL, let reason = unreadableHead(nsError.localizedDescription) {
            return RunwayError(.responseInvalid, "\(reason): \(message)", underlying: error)
        }
        // Refused, unreachable or unresolved: nothing of the request left.
        let neverSent = code == .cannotConnectToHost || code == .cannotFindHost || code == .dnsLookupFailed
        return RunwayError(runwayCode(for: code), message, underlying: error, neverSent: neverSent)
    }

    /// A reply cut before its end (libcurl's `CURLE_PARTIAL_FILE`, a chunked body cut short),
    /// which swift-corelibs-foundation reports as `NSURLErrorUnknown` with libcurl's message: the
    /// connection was lost, as `CurlDispatcher` reports it (and a retry policy reads it).
    static func isCutReply(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return lowered.contains("partial file") || lowered.contains("transfer closed") || lowered.contains("chunk")
    }

    /// A chunked body whose chunk sizes libcurl cannot read: its message for a malformed chunk
    /// holds "chunk" too, and must not read as a cut reply, which a retry policy sends again.
    static func isMalformedChunk(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return lowered.contains("in chunked-encoding")
            && ["illegal or missing hexadecimal", "too long hexadecimal", "malformed encoding found"].contains { lowered.contains($0) }
    }

    /// Why a reply that libcurl refused to read is not valid, as `CurlDispatcher` reports it
    /// (`.responseInvalid`), or `nil`: swift-corelibs-foundation passes libcurl's message with
    /// `NSURLErrorUnknown`. A body its decoder cannot decode (`CURLE_BAD_CONTENT_ENCODING`, or a
    /// write failure on an encoded body, which is how it refuses bytes after the end of a gzip
    /// stream), or a `Content-Length` that is not a number (`CURLE_WEIRD_SERVER_REPLY`).
    static func unreadableReply(_ message: String, bodyIsEncoded: Bool) -> String? {
        let lowered = message.lowercased()
        if lowered.contains("content unencoding") || (bodyIsEncoded && lowered.contains("failed writing received data")) {
            return "the response body cannot be decoded in its Content-Encoding"
        }
        if lowered.contains("content-length") {
            return "the response's Content-Length is not a length"
        }
        return nil
    }

    /// Why a reply's head is not HTTP, as `CurlDispatcher` reports it (`.responseInvalid`), or
    /// `nil`: libcurl fails such a reply with `CURLE_UNSUPPORTED_PROTOCOL`, which
    /// swift-corelibs-foundation reports as `NSURLErrorUnsupportedURL`, the error of a URL's
    /// scheme. A status line without a version (`HTTP/0.9`: also what bytes a previous response
    /// left on the kept-alive connection read as), a status of fewer than three digits, or a
    /// version that is not HTTP's.
    static func unreadableHead(_ message: String) -> String? {
        let lowered = message.lowercased()
        if lowered.contains("http/0.9") {
            return "the server's reply is not an HTTP response: it has no status line (a server that answers without one, "
                + "or bytes a previous response sent past its end on a connection FoundationNetworking reused)"
        }
        if lowered.contains("in http response") || lowered.contains("in response") {
            return "the server's reply is not an HTTP response"
        }
        return nil
    }

    /// swift-corelibs-foundation reports libcurl's TLS failures (`CURLE_PEER_FAILED_VERIFICATION`,
    /// `CURLE_SSL_CONNECT_ERROR`, ...) as `NSURLErrorUnknown` with libcurl's message, so the
    /// message is all there is to recognise them by.
    static func isTLSFailure(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return lowered.contains("ssl") || lowered.contains("tls") || lowered.contains("certificate")
    }

    static func runwayCode(for code: URLError.Code) -> RunwayError.Code {
        switch code {
        case .timedOut:
            .timeout
        case .cannotConnectToHost:
            .cannotConnect
        case .cannotFindHost, .dnsLookupFailed:
            .dnsFailure
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse, .cannotDecodeContentData,
            .cannotDecodeRawData, .zeroByteResource:
            .connectionLost
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            .noNetwork
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            .tls
        case .cancelled, .userCancelledAuthentication:
            .cancelled
        case .httpTooManyRedirects, .redirectToNonExistentLocation:
            .tooManyRedirects
        case .badURL:
            .invalidURL
        case .unsupportedURL:
            .unsupportedScheme
        case .dataLengthExceedsMaximum:
            .responseTooLarge
        case .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile, .cannotRemoveFile,
            .cannotMoveFile:
            .fileIO
        default:
            .transport
        }
    }
}
