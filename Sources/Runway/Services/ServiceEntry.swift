import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A registered service resolved for the registry's environment: its base URL, read once, and
/// its chain (app interceptors + token refresh + own interceptors). Its common headers and
/// parameters are read for each call, so a value that changes (a locale) goes out as it is then.
final class ServiceEntry: Sendable {
    let service: any Service
    /// The service, as calls' contexts carry it (``RequestContext/service``).
    let reference: ServiceReference
    let baseURL: URL
    let pipeline: Pipeline
    var commonHeaders: HTTPHeaders { service.commonHeaders }
    var commonParameters: [String: JSON] { service.commonParameters }
    /// The service's proxy, given to requests that set none.
    let proxy: Proxy?
    /// The service's client certificate, given to requests that set none.
    let clientCertificate: ClientCertificate?
    /// `host:port` of the base URL: what reachability failures are counted by.
    let endpoint: String
    private let base: String

    init(service: any Service, baseURL: URL, pipeline: Pipeline) {
        self.service = service
        self.reference = ServiceReference(service)
        self.baseURL = baseURL
        self.pipeline = pipeline
        self.proxy = service.proxy
        self.clientCertificate = service.clientCertificate
        let port = baseURL.port ?? (baseURL.scheme?.lowercased() == "https" ? 443 : 80)
        self.endpoint = "\(baseURL.host ?? ""):\(port)"
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    var id: ServiceID { service.id }

    /// The parameters of a call: the service's common ones, overridden by the manager's.
    func parameters(_ own: [String: JSON]) -> [String: JSON] {
        let common = commonParameters
        if common.isEmpty { return own }
        return common.merging(own) { _, manager in manager }
    }

    /// Whether the path of `apiName` (before any `?`) has a segment that is `..`, each dot
    /// written as it is or as `%2E` (RFC 3986 §6.2.2.2: the same character, which a server's
    /// normalizer decodes before it removes dot segments); one pass over the bytes, nothing
    /// allocated (it runs for every call).
    static func hasDotDotSegment(_ apiName: String) -> Bool {
        apiName.withUTF8Bytes { bytes in
            var dots = 0  // dots since the segment began; -1 once it holds anything else
            var index = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "/"):
                    if dots == 2 { return true }
                    dots = 0
                case UInt8(ascii: "?"):
                    return dots == 2
                case UInt8(ascii: "."):
                    if dots >= 0 { dots += 1 }
                case UInt8(ascii: "%")
                where index + 2 < bytes.count && bytes[index + 1] == UInt8(ascii: "2") && bytes[index + 2] | 0x20 == UInt8(ascii: "e"):
                    if dots >= 0 { dots += 1 }
                    index += 2
                default:
                    dots = -1
                }
                index += 1
            }
            return dots == 2
        }
    }

    /// The URL of `apiName` under the service's base, with `parameters` as its query (for the
    /// methods that send one, ``sendsQuery(_:)``); parsed once.
    /// - Parameter field: What `apiName` is, as errors name it: `"apiName"`, or `"path"` for a
    ///   manager's ``APIManager/path`` that is not its API name.
    func url(_ apiName: String, query parameters: [String: JSON]? = nil, field: String = "apiName") throws(RunwayError) -> URL {
        let what = field == "path" ? "path" : "API name"
        do {
            try Request.checkURLText(apiName, what: what)
        } catch {
            throw RunwayError(.invalidURL, error.message, stage: .service(id), field: field)
        }
        // A fragment is never sent, and the parameters would be appended to it, unsent.
        if apiName.utf8.contains(UInt8(ascii: "#")) {
            throw RunwayError(
                .invalidURL, "\(what) \"\(apiName)\" holds a '#': a fragment is never sent (write %23 for a '#' in the path)",
                stage: .service(id), field: field)
        }
        // libcurl removes dot segments before it sends: a `..` would climb out of the base URL's
        // path (`../admin` under `/v1` calls `/admin`), and so would `%2E%2E` on a server that
        // normalizes the path. Only whole segments of the path count (`..1` and `...` are names);
        // the query is not a path.
        if Self.hasDotDotSegment(apiName) {
            throw RunwayError(
                .invalidURL, "\(what) \"\(apiName)\" holds a '..' segment, which would leave the service's base URL \(base)",
                stage: .service(id), field: field)
        }
        // One string, grown once: this runs for every call.
        var text = ""
        text.reserveCapacity(base.utf8.count + apiName.utf8.count + 2 + (parameters?.count ?? 0) * 24)
        text += base
        if !apiName.isEmpty {
            if apiName.utf8.first != UInt8(ascii: "/") { text += "/" }
            text += apiName
        }
        let pathBytes = text.utf8.count
        // Only parameters that give a pair open a query: an empty array sends nothing, not a
        // bare `?` (or `&`) that makes another URL of the same request.
        if let parameters, parameters.contains(where: { $0.value.array?.isEmpty != true }) {
            // The registry refuses a base URL with a query: only the API name may hold one.
            text += apiName.utf8.contains(UInt8(ascii: "?")) ? "&" : "?"
            Self.appendQuery(parameters, to: &text)
        }
        if let url = Request.parseURL(text) { return url }
        guard URL(string: String(decoding: text.utf8.prefix(pathBytes), as: UTF8.self)) != nil else {
            throw RunwayError(
                .invalidURL, "\(what) \"\(apiName)\" does not make a URL with \(base)", stage: .service(id), field: field)
        }
        throw RunwayError(.invalidURL, "parameters do not make a URL: \(text)", stage: .service(id))
    }

    /// Whether `method` sends its parameters in the query (GET, HEAD, DELETE) or as a JSON body.
    static func sendsQuery(_ method: HTTPMethod) -> Bool {
        method == .get || method == .head || method == .delete
    }

    /// The service's common headers, with `extra` (a call's own) in place of the fields of the
    /// names it gives.
    func headers(merging extra: HTTPHeaders) -> HTTPHeaders {
        var headers = commonHeaders
        guard !extra.isEmpty else { return headers }
        for field in extra { headers.removeAll(named: field.name) }
        for field in extra { headers.add(name: field.name, value: field.value) }
        return headers
    }

    /// The request to `url` with `parameters`: already in the URL's query for GET, HEAD and
    /// DELETE (``url(_:query:)``), as a JSON body otherwise; its header fields are the common
    /// headers with `extra` (``headers(merging:)``).
    func request(url: URL, method: HTTPMethod, parameters: [String: JSON], headers extra: HTTPHeaders, options: RequestOptions) -> Request {
        var body: Data?
        var headers = headers(merging: extra)
        if !Self.sendsQuery(method) {
            body = JSON.object(parameters).serializedData()
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        }
        return Request(method: method, url: url, headers: headers, body: body, options: self.options(options))
    }

    /// `options` with the service's ``proxy`` and ``clientCertificate`` where they name none.
    func options(_ options: RequestOptions) -> RequestOptions {
        var options = options
        if let proxy, options.proxy == nil { options.proxy = proxy }
        if let clientCertificate, options.tls.clientCertificate == nil { options.tls.clientCertificate = clientCertificate }
        return options
    }

    /// Appends `name=value` pairs sorted by name, percent-encoded (RFC 3986 unreserved characters
    /// kept, every other UTF-8 byte as `%XX`); an array gives one pair per element.
    static func appendQuery(_ parameters: [String: JSON], to text: inout String) {
        var first = true
        func append(_ name: String, _ value: JSON) {
            if !first { text += "&" }
            first = false
            // `encode` returns a name or value of unreserved characters as it is, not a copy.
            text += RequestParameters.encode(name)
            text += "="
            switch value {
            case .int(let number): text += String(number)
            case .bool(let flag): text += flag ? "true" : "false"
            case .string(let value): text += RequestParameters.encode(value)
            default: text += RequestParameters.encode(value.queryText)
            }
        }
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            if case .array(let elements) = value {
                for element in elements { append(key, element) }
            } else {
                append(key, value)
            }
        }
    }
}
