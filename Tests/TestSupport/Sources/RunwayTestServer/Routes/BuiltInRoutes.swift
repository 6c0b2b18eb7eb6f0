import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The endpoints every ``TestServer`` has; one facet file per group.
enum BuiltInRoutes {
    static func add(to router: Router<TestRequestContext>) {
        addEcho(to: router)
        addStatus(to: router)
        addStreaming(to: router)
        addDownload(to: router)
        addCompression(to: router)
        addEncodings(to: router)
        addRedirect(to: router)
        addUpload(to: router)
    }

    /// A response with a JSON body.
    static func json(_ data: Data, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A response whose body is `value` encoded as JSON with sorted keys.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return json(try encoder.encode(value), status: status)
    }

    /// A plain-text 400 response.
    static func badRequest(_ message: String) -> Response {
        Response(status: .badRequest, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    /// A header field with a name of our own; `X-Invalid-Name` if `name` is not a token (it
    /// always is: every caller passes a literal).
    static func customField(_ name: String, _ value: String) -> HTTPField {
        let fieldName = HTTPField.Name(name) ?? HTTPField.Name("X-Invalid-Name") ?? .contentType
        return HTTPField(name: fieldName, value: value)
    }

    /// Request headers as a dictionary: lower-cased names, repeated fields joined with ", ".
    static func headerDictionary(_ fields: HTTPFields) -> [String: String] {
        var result: [String: String] = [:]
        for field in fields {
            let name = field.name.canonicalName
            if let existing = result[name] {
                result[name] = existing + ", " + field.value
            } else {
                result[name] = field.value
            }
        }
        return result
    }
}
