/// An HTTP Archive: the HAR 1.2 document a ``HARRecorder`` builds (``HARRecorder/har()``) and
/// writes (``HARRecorder/write(to:)``), which browsers' developer tools and HAR viewers open.
///
/// A value to read, change or encode; it is made by a recorder or decoded from a file. The
/// fields are HAR 1.2's, under their names (see the specification at
/// <http://www.softwareishard.com/blog/har-12-spec/>), with the custom fields HAR allows (names
/// starting with `_`) that browsers use: `_fromCache` and `_error`. Sizes are in bytes, times in
/// milliseconds, and `-1` stands for "unknown" or "did not happen", as HAR says.
public struct HAR: Sendable, Codable, Equatable {
    /// The archive's one root object.
    public var log: Log

    /// The root: who wrote the archive and what it holds.
    public struct Log: Sendable, Codable, Equatable {
        /// The format's version: `"1.2"`.
        public var version = "1.2"
        /// The program that wrote the archive.
        public var creator: Creator
        /// The calls, oldest first.
        public var entries: [Entry]
        /// A note, such as how many entries were dropped to stay within the recorder's bound.
        public var comment: String?
    }

    /// The program that wrote an archive.
    public struct Creator: Sendable, Codable, Equatable {
        /// Its name: `"Runway"`.
        public var name: String
        /// Its version.
        public var version: String
    }

    /// One call: its request, its response (or the failure), and how long each phase took.
    public struct Entry: Sendable, Codable, Equatable {
        /// When the call started, ISO 8601 with fractional seconds (`2026-05-01T09:30:00.125Z`).
        public var startedDateTime: String
        /// The call's time: the sum of the ``timings`` that are not `-1` (``Timings/ssl`` aside,
        /// which ``Timings/connect`` includes).
        public var time: Double
        /// The request.
        public var request: Request
        /// The response; status 0 with ``error`` set when none arrived.
        public var response: Response
        /// Cache facts; empty (a hit is marked by ``fromCache``).
        public var cache = Cache()
        /// The phases of the call.
        public var timings: Timings
        /// The address of the server that answered, when the response crossed the network.
        public var serverIPAddress: String?
        /// A note.
        public var comment: String?
        /// `"memory"` or `"disk"` when a cache answered (`_fromCache`, as Chrome writes it).
        public var fromCache: String?
        /// Why the call failed, when it did (`_error`, as Chrome writes it).
        public var error: String?
        /// The API's name, when the call had one (`_apiName`).
        public var apiName: String?
        /// The service's name, when the call had one (`_serviceID`).
        public var serviceID: String?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, serverIPAddress, comment
            case fromCache = "_fromCache"
            case error = "_error"
            case apiName = "_apiName"
            case serviceID = "_serviceID"
        }
    }

    /// A request as the application built it, secrets replaced.
    public struct Request: Sendable, Codable, Equatable {
        /// The method, such as `GET`.
        public var method: String
        /// The absolute URL, hidden query values replaced.
        public var url: String
        /// The HTTP version, such as `HTTP/1.1` or `HTTP/2`; empty when no transfer told.
        public var httpVersion: String
        /// Always empty (HAR requires the list): cookies travel in ``headers``, where their values
        /// are hidden.
        public var cookies: [NameValue] = []
        /// The header fields, in order, hidden values replaced.
        public var headers: [NameValue]
        /// The URL's query parameters, decoded, hidden values replaced.
        public var queryString: [NameValue]
        /// The body, when the request has one.
        public var postData: PostData?
        /// Always `-1`: the head's size on the wire is not known.
        public var headersSize = -1
        /// The body's size in bytes; 0 without one.
        public var bodySize: Int
    }

    /// A response, secrets replaced.
    public struct Response: Sendable, Codable, Equatable {
        /// The status code; 0 when no response arrived.
        public var status: Int
        /// The status code's standard reason phrase (HTTP/2 sends none, so neither is kept).
        public var statusText: String
        /// The HTTP version, such as `HTTP/1.1` or `HTTP/2`; empty for a cache hit or a failure.
        public var httpVersion: String
        /// Always empty (HAR requires the list): cookies travel in ``headers``, where their values
        /// are hidden.
        public var cookies: [NameValue] = []
        /// The header fields, in order, hidden values replaced.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` header, or empty.
        public var redirectURL = ""
        /// Always `-1`: the head's size on the wire is not known.
        public var headersSize = -1
        /// The body's size as received: 0 for a cache hit, `-1` when it was compressed on the
        /// wire (only the decoded size is known); for a streamed body, the bytes the caller got.
        public var bodySize: Int
    }

    /// A header field or a query parameter.
    public struct NameValue: Sendable, Codable, Equatable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request body.
    public struct PostData: Sendable, Codable, Equatable {
        /// The `Content-Type`, or empty.
        public var mimeType: String
        /// The body as text, hidden values replaced, cut at the recorder's body limit; empty when
        /// it is binary or multipart (``comment`` says so).
        public var text: String
        /// Why the text is empty or cut, when it is.
        public var comment: String?
    }

    /// A response body.
    public struct Content: Sendable, Codable, Equatable {
        /// The decoded body's size in bytes; for a streamed body (handed to the caller as sent,
        /// never decoded), the bytes the caller got.
        public var size: Int
        /// The `Content-Type`, or `x-unknown`.
        public var mimeType: String
        /// The body: text with hidden values replaced, or base64 when it is binary
        /// (``encoding``), cut at the recorder's body limit; `nil` when not recorded.
        public var text: String?
        /// `"base64"` when ``text`` is the base64 of binary bytes.
        public var encoding: String?
        /// Why the text is missing or cut, when it is.
        public var comment: String?
    }

    /// Cache facts (HAR's `beforeRequest` and `afterRequest` are not recorded).
    public struct Cache: Sendable, Codable, Equatable {
        /// A note.
        public var comment: String?
    }

    /// The phases of a call in milliseconds, one after another, `-1` for a phase that did not
    /// happen; ``ssl`` is part of ``connect``.
    public struct Timings: Sendable, Codable, Equatable {
        /// Waiting before the request went out once the connection was ready (or, on a reused
        /// connection, from the transfer's start); `-1` when nothing crossed the network.
        public var blocked: Double
        /// Name resolution; `-1` on a reused connection.
        public var dns: Double
        /// Connecting, the TLS handshake included; `-1` on a reused connection.
        public var connect: Double
        /// Sending the request: 0, as libcurl does not say when it finished (it counts in ``wait``).
        public var send: Double
        /// From sending to the first response byte; for a cache hit, a stub or a failure, which
        /// have no transfer to time, the whole call.
        public var wait: Double
        /// Receiving the response.
        public var receive: Double
        /// The TLS handshake (within ``connect``); `-1` without TLS or on a reused connection.
        public var ssl: Double

        /// The sum HAR's ``Entry/time`` must equal: every phase that is not `-1`, ``ssl`` aside.
        public var total: Double {
            [blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
        }
    }
}
