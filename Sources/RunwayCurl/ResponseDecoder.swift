import RunwayCompression
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Inflates a response body that libcurl handed over as sent
/// (``CurlDispatcher/Configuration/ResponseDecoding/awaitingTask``).
enum ResponseDecoder {
    /// The encodings asked for: the ones ``decode(_:limit:)`` undoes.
    static let acceptEncoding = "gzip, deflate"

    /// The response with its body decoded per `Content-Encoding`; headers stay as sent.
    /// - Parameter limit: The most decoded bytes (``RequestOptions/maxResponseSize``).
    /// - Throws: ``RunwayError`` `.responseTooLarge` past `limit`; `.responseInvalid` for a
    ///   corrupt or truncated body, or an encoding that was not asked for.
    /// - Parameter passingOthers: The request asked for its own encodings: one this decoder
    ///   does not know is the caller's to undo, so the body comes back as sent.
    static func decode(_ response: Response, limit: Int, passingOthers: Bool = false) throws(RunwayError) -> Response {
        guard !response.body.isEmpty, response.headers["Content-Encoding"] != nil else { return response }
        var body = response.body
        // Listed in the order they were applied, across repeated fields too: undone last to first.
        let encodings = response.headers.values(for: "Content-Encoding").joined(separator: ",")
        for token in encodings.split(separator: ",").reversed() {
            let encoding = token.trimmingBlanks().lowercased()
            switch encoding {
            case "", "identity":
                continue
            case "gzip", "x-gzip":
                body = try inflate(body, format: .gzipOrZlib, encoding: encoding, limit: limit, response: response)
            case "deflate":
                // Meant to be zlib-wrapped; some servers send it raw, which libcurl accepts too.
                // Told apart by the first two bytes, as the loop's inflater does, so a corrupt or
                // cut zlib body says what is wrong with it rather than what raw deflate makes of it.
                let format: Gzip.Format =
                    body.count < 2 ? .rawDeflate : .ofDeflate(startingWith: body[body.startIndex], body[body.startIndex + 1])
                body = try inflate(body, format: format, encoding: encoding, limit: limit, response: response)
            default:
                if passingOthers { return response }
                throw RunwayError(
                    .responseInvalid,
                    "the response is \(encoding)-encoded, which was not asked for (Accept-Encoding: \(acceptEncoding))",
                    response: response)
            }
        }
        var decoded = response
        decoded.body = body
        return decoded
    }

    private static func inflate(
        _ body: Data, format: Gzip.Format, encoding: String, limit: Int, response: Response
    ) throws(RunwayError) -> Data {
        do {
            return try Gzip.decompress(body, limit: limit, format: format)
        } catch  where error.isTooLarge {
            throw RunwayError(.responseTooLarge, "response body is over the \(limit)-byte limit (counted after decompression)")
        } catch {
            throw RunwayError(
                .responseInvalid, "the \(encoding) response body cannot be decoded: \(error)", response: response, underlying: error)
        }
    }
}
