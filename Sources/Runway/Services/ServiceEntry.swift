import Foundation

/// A registered service resolved for the registry's environment: its base URL, common headers
/// and parameters read once, and its chain (app interceptors + token refresh + own interceptors).
final class ServiceEntry: Sendable {
    let service: any Service
    let baseURL: URL
    let pipeline: Pipeline
    let commonHeaders: HTTPHeaders
    let commonParameters: [String: JSON]
    private let base: String

    init(service: any Service, baseURL: URL, pipeline: Pipeline) {
        self.service = service
        self.baseURL = baseURL
        self.pipeline = pipeline
        self.commonHeaders = service.commonHeaders
        self.commonParameters = service.commonParameters
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    var id: ServiceID { service.id }

    /// The parameters of a call: the service's common ones, overridden by the manager's.
    func parameters(_ own: [String: JSON]) -> [String: JSON] {
        if commonParameters.isEmpty { return own }
        return commonParameters.merging(own) { _, manager in manager }
    }

    /// The URL of `apiName` under the base URL, without query.
    func apiURL(_ apiName: String) throws(RunwayError) -> URL {
        var text = base
        if !apiName.isEmpty {
            if !apiName.hasPrefix("/") { text += "/" }
            text += apiName
        }
        guard let url = URL(string: text) else {
            throw RunwayError(.invalidURL, "API name \"\(apiName)\" does not make a URL with \(base)", stage: .service(id), field: "apiName")
        }
        return url
    }

    /// The request to `apiURL` with `parameters`: in the query for GET, HEAD and DELETE, as a
    /// JSON body otherwise.
    func request(apiURL: URL, method: HTTPMethod, parameters: [String: JSON], options: RequestOptions) throws(RunwayError) -> Request {
        var url = apiURL
        var body: Data?
        var headers = commonHeaders
        let inQuery = method == .get || method == .head || method == .delete
        if inQuery {
            if !parameters.isEmpty {
                let text = apiURL.absoluteString + (apiURL.query == nil ? "?" : "&") + Self.query(parameters)
                guard let withQuery = URL(string: text) else {
                    throw RunwayError(.invalidURL, "parameters do not make a URL: \(text)", stage: .service(id))
                }
                url = withQuery
            }
        } else {
            body = JSON.object(parameters).serializedData()
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        }
        return Request(method: method, url: url, headers: headers, body: body, options: options)
    }

    /// `name=value` pairs sorted by name, percent-encoded; an array gives one pair per element.
    static func query(_ parameters: [String: JSON]) -> String {
        // Built in place: this runs for every GET call with parameters.
        var query = ""
        query.reserveCapacity(parameters.count * 16)
        func append(_ name: String, _ value: JSON) {
            if !query.isEmpty { query += "&" }
            query += name
            query += "="
            query += percentEncoded(value.queryText)
        }
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            let name = percentEncoded(key)
            if case .array(let elements) = value {
                for element in elements { append(name, element) }
            } else {
                append(name, value)
            }
        }
        return query
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func percentEncoded(_ text: String) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
