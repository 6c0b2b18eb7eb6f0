#if OpenAPI  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if OpenAPI  // the package trait that brings these dependencies (TraitCheck.swift)
import HTTPTypes
#endif

extension RunwayTransport {
    /// How a ``RunwayTransport`` turns operations into Runway calls.
    public struct Configuration: Sendable {
        /// The API name of an operation, by its operation ID: what `RequestContext.apiName` is
        /// set to, and so what the per-API policies (cache, validation, retry, merging, signing
        /// scope), logs and metrics key on. By default the operation ID itself.
        public var apiName: @Sendable (_ operationID: String) -> String
        /// The service the calls belong to (`RequestContext.serviceID`), if any.
        public var serviceID: ServiceID?
        /// The transport options of every call: timeouts, response size limit, TLS, proxy.
        public var options: RequestOptions
        /// When a response body is streamed rather than buffered.
        public var responseBody: ResponseBodyPolicy
        /// The largest request body read into memory, in bytes (1 MiB by default), when the
        /// runtime can read it more than once and knows its length; larger ones, and any
        /// other, are streamed.
        public var requestBodyBufferLimit: Int

        /// Creates a configuration whose API names come from a dictionary.
        /// - Parameters:
        ///   - apiNames: API names by operation ID; an operation not listed is named by its
        ///     operation ID.
        ///   - serviceID: The service the calls belong to.
        ///   - options: The transport options of every call.
        ///   - responseBody: When a response body is streamed (``ResponseBodyPolicy/automatic``).
        ///   - requestBodyBufferLimit: The largest request body read into memory.
        public init(
            apiNames: [String: String] = [:], serviceID: ServiceID? = nil, options: RequestOptions = RequestOptions(),
            responseBody: ResponseBodyPolicy = .automatic, requestBodyBufferLimit: Int = 1 << 20
        ) {
            self.init(
                serviceID: serviceID, options: options, responseBody: responseBody, requestBodyBufferLimit: requestBodyBufferLimit,
                apiName: { @Sendable operationID in apiNames[operationID] ?? operationID })
        }

        /// Creates a configuration whose API names come from a closure.
        /// - Parameters:
        ///   - serviceID: The service the calls belong to.
        ///   - options: The transport options of every call.
        ///   - responseBody: When a response body is streamed (``ResponseBodyPolicy/automatic``).
        ///   - requestBodyBufferLimit: The largest request body read into memory.
        ///   - apiName: The API name of an operation, by its operation ID.
        public init(
            serviceID: ServiceID? = nil, options: RequestOptions = RequestOptions(), responseBody: ResponseBodyPolicy = .automatic,
            requestBodyBufferLimit: Int = 1 << 20, apiName: @escaping @Sendable (_ operationID: String) -> String
        ) {
            self.apiName = apiName
            self.serviceID = serviceID
            self.options = options
            self.responseBody = responseBody
            self.requestBodyBufferLimit = requestBodyBufferLimit
        }
    }

    /// When a response body is streamed (handed over as it arrives, read once) rather than
    /// buffered (read whole into memory, bounded by `RequestOptions.maxResponseSize`).
    ///
    /// Caches store and answer buffered responses only, so an operation whose answers are cached
    /// must be buffered. Stream what is large or open-ended: downloads, exports, event streams.
    public struct ResponseBodyPolicy: Sendable {
        /// Whether the call for an operation streams its response body.
        let decide: @Sendable (_ operationID: String, _ request: HTTPRequest) -> Bool

        /// Decides per operation with `decide`, given the operation ID and the request (its
        /// `Accept` field names the media types the operation documents).
        public static func custom(_ decide: @escaping @Sendable (_ operationID: String, _ request: HTTPRequest) -> Bool) -> Self {
            Self(decide: decide)
        }

        /// Every response body is buffered.
        public static let buffered = Self { _, _ in false }

        /// Every response body is streamed (no call is answered from a cache).
        public static let streamed = Self { _, _ in true }

        /// Streams when the request's `Accept` names a streaming media type
        /// (``streamingMediaTypes``): the generated code sets `Accept` to the media types the
        /// operation's responses document, so a download (`application/octet-stream`, with or
        /// without a JSON error body beside it) or an event stream (`text/event-stream`) streams,
        /// and an operation that answers JSON only is buffered. `*/*`, or no `Accept`, buffers.
        public static let automatic = Self { _, request in acceptsStreamingType(request) }

        /// Streams the listed operations, and the others as ``automatic`` does.
        public static func streamed(operations: Set<String>) -> Self {
            Self { operationID, request in operations.contains(operationID) || acceptsStreamingType(request) }
        }

        /// The media types ``automatic`` streams: binary data, event streams, JSON Lines and
        /// sequences, and multipart bodies (`multipart/` and any subtype).
        public static let streamingMediaTypes: Set<String> = [
            "application/octet-stream", "text/event-stream", "application/jsonl", "application/x-ndjson",
            "application/json-seq", "multipart/*",
        ]

        /// Whether the call for `operationID`, with `request` as the generated code made it,
        /// streams its response body.
        public func streams(operationID: String, request: HTTPRequest) -> Bool {
            decide(operationID, request)
        }

        /// Whether a media type in the request's `Accept` field is a streaming one. Runs for every
        /// call, so it compares bytes, case-insensitively, without making strings.
        static func acceptsStreamingType(_ request: HTTPRequest) -> Bool {
            for value in request.headerFields[values: .accept] {
                let bytes = Array(value.utf8)
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                    if isStreamingType(bytes[start..<end]) { return true }
                    start = end + 1
                }
            }
            return false
        }

        /// Whether one element of an `Accept` value (`type/subtype`, parameters, spaces around)
        /// is a streaming media type.
        private static func isStreamingType(_ element: ArraySlice<UInt8>) -> Bool {
            let isSpace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            var type = element.drop(while: isSpace)
            if let semicolon = type.firstIndex(of: UInt8(ascii: ";")) { type = type[..<semicolon] }
            while let last = type.last, isSpace(last) { type = type.dropLast() }
            let lowered = type.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
            return lowered.starts(with: multipartPrefix) || streamingMediaTypeBytes.contains(lowered)
        }

        private static let multipartPrefix = Array("multipart/".utf8)
        private static let streamingMediaTypeBytes = Set(streamingMediaTypes.map { Array($0.utf8) })
    }
}

#endif
