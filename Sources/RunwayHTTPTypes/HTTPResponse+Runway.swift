#if HTTPTypes  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if HTTPTypes  // the package trait that brings this dependency (TraitCheck.swift)
import HTTPTypes
#endif

extension HTTPResponse {
    /// Creates an `HTTPResponse` from a Runway response: its status and its header fields, in
    /// order, repeated fields (`Set-Cookie`) kept apart. The body stays in `response.body`.
    ///
    /// A Runway response keeps no reason phrase, so the status gets the standard one for its code
    /// (`200 OK`, `404 Not Found`; none for a code without one) unless `reasonPhrase` is given.
    /// The header fields are the server's, as received: a body that the dispatcher decoded still
    /// has its `Content-Encoding` and `Content-Length` fields.
    /// - Parameters:
    ///   - response: the response to convert.
    ///   - reasonPhrase: the reason phrase to use instead of the standard one.
    /// - Throws: `RunwayError` `.responseInvalid`, with the response attached, when the status is
    ///   not a three-digit code (100...999), `reasonPhrase` holds a control character, or a
    ///   header field cannot be an `HTTPField` (``HTTPTypes/HTTPFields/init(_:)``; `field`
    ///   names it).
    public init(_ response: Response, reasonPhrase: String? = nil) throws(RunwayError) {
        guard (100...999).contains(response.status) else {
            throw RunwayError(
                .responseInvalid, "status \(response.status) is not a three-digit HTTP status code", response: response)
        }
        let status: Status
        if let reasonPhrase {
            // HTTPTypes would turn such a byte into a space; say so instead.
            let isValid = reasonPhrase.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
            guard isValid else {
                throw RunwayError(
                    .responseInvalid, "reason phrase \(reasonPhrase.debugDescription) holds a control character", response: response)
            }
            status = Status(code: response.status, reasonPhrase: reasonPhrase)
        } else {
            status = Self.standardStatuses[response.status] ?? Status(code: response.status)
        }
        let fields: HTTPFields
        do {
            fields = try HTTPFields(response.headers)
        } catch {
            throw RunwayError(.responseInvalid, error.message, field: error.field, response: response, underlying: error)
        }
        self.init(status: status, headerFields: fields)
    }

    /// Every status HTTPTypes names, by code: their reason phrases are the standard ones.
    private static let standardStatuses: [Int: Status] = {
        let named: [Status] = [
            .continue, .switchingProtocols, .earlyHints,
            .ok, .created, .accepted, .nonAuthoritativeInformation, .noContent, .resetContent, .partialContent,
            .multipleChoices, .movedPermanently, .found, .seeOther, .notModified, .temporaryRedirect, .permanentRedirect,
            .badRequest, .unauthorized, .forbidden, .notFound, .methodNotAllowed, .notAcceptable,
            .proxyAuthenticationRequired, .requestTimeout, .conflict, .gone, .lengthRequired, .preconditionFailed,
            .contentTooLarge, .uriTooLong, .unsupportedMediaType, .rangeNotSatisfiable, .expectationFailed,
            .misdirectedRequest, .unprocessableContent, .tooEarly, .upgradeRequired, .preconditionRequired,
            .tooManyRequests, .requestHeaderFieldsTooLarge, .unavailableForLegalReasons,
            .internalServerError, .notImplemented, .badGateway, .serviceUnavailable, .gatewayTimeout,
            .httpVersionNotSupported, .networkAuthenticationRequired,
        ]
        return Dictionary(named.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
    }()
}

extension Response {
    /// Creates a Runway response from an `HTTPResponse` and its body: the status code and the
    /// header fields, in order (``RunwayCore/HTTPHeaders/init(_:)``).
    ///
    /// The reason phrase is not kept: a Runway response has none (HTTP/2 has none either, and
    /// clients ignore it, RFC 9112 §4).
    /// - Parameters:
    ///   - response: the status and header fields.
    ///   - body: the body (`HTTPResponse` has none of its own).
    /// - Throws: `RunwayError` `.invalidHeader` for a header value that is not valid UTF-8.
    public init(_ response: HTTPResponse, body: Data = Data()) throws(RunwayError) {
        self.init(status: response.status.code, headers: try HTTPHeaders(response.headerFields), body: body)
    }
}

#endif
