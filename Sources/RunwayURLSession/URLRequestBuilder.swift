import Foundation
import RunwayCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a validated ``Request`` into a `URLRequest`.
enum URLRequestBuilder {
    static func make(for request: Request, resumeOffset: Int64, ifRange: String?) throws(RunwayError) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers {
            // A value of only spaces is empty once trimmed; sent as is, it would reach libcurl
            // under FoundationNetworking as "Name:  ", which removes the header instead.
            let value = field.value.utf8.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } ? "" : field.value
            if urlRequest.value(forHTTPHeaderField: field.name) == nil {
                urlRequest.setValue(value, forHTTPHeaderField: field.name)
            } else {
                urlRequest.addValue(value, forHTTPHeaderField: field.name)
            }
        }
        if request.headers["Accept-Encoding"] == nil {
            // Only what the dispatcher checks the body of (``Transfer/checkEncoding(of:for:)``):
            // FoundationNetworking would ask for brotli and zstd too.
            // A resumed download asks for none: its range counts the bytes stored, decoded.
            urlRequest.setValue(
                request.options.acceptCompressedResponses && resumeOffset == 0 ? Transfer.acceptEncoding : "identity",
                forHTTPHeaderField: "Accept-Encoding")
        }
        if resumeOffset > 0 {
            urlRequest.setValue("bytes=\(resumeOffset)-", forHTTPHeaderField: "Range")
            if let ifRange, request.headers["If-Range"] == nil { urlRequest.setValue(ifRange, forHTTPHeaderField: "If-Range") }
        }
        if let body = request.body {
            urlRequest.httpBody = body
        }
        return urlRequest
    }
}
