#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored response and its lifetime.
struct CacheEntry: Sendable {
    var api: String
    /// The resource the response is of (``ResponseCache/resource(of:)``): what a write to it, or
    /// ``ResponseCache/invalidate(url:)``, removes.
    var resource = ""
    var status: Int
    var headers: HTTPHeaders
    var body: Data
    /// Seconds since 1970 when stored.
    var storedAt: Double
    /// Seconds since 1970 after which the entry is stale.
    var expiresAt: Double
    /// The fields of the request it answered that its `Vary` names: a request must send the
    /// same to be answered with it (``CacheVary``).
    var selecting = HTTPHeaders()

    /// Bytes counted against the memory and disk limits.
    var size: Int {
        func count(_ fields: HTTPHeaders) -> Int { fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 8 } }
        return body.count + count(headers) + count(selecting) + api.utf8.count + resource.utf8.count + 64
    }

    /// Whether the entry is fresh at `now`: before its expiry, and not stored after `now`. An
    /// entry stored after `now` was stored while the clock was ahead (it has been set back since):
    /// its age is unknown, so it is not fresh, whatever its expiry says.
    func isFresh(at now: Double) -> Bool { storedAt <= now && now < expiresAt }

    /// Whether the entry is at most `maxStale` past its expiry at `now` (and, as for
    /// ``isFresh(at:)``, not stored after `now`).
    func isUsable(at now: Double, maxStale: Duration) -> Bool {
        storedAt <= now && now < expiresAt + Double(maxStale.components.seconds)
    }

    func response(origin: ResponseOrigin) -> Response {
        Response(status: status, headers: headers, body: body, origin: origin)
    }

    /// Headers as length-prefixed UTF-8, for the disk store.
    static func encode(_ headers: HTTPHeaders) -> Data {
        var data = Data()
        func append(_ text: String) {
            let bytes = Array(text.utf8)
            var length = UInt32(bytes.count).littleEndian
            withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
            data.append(contentsOf: bytes)
        }
        for field in headers {
            append(field.name)
            append(field.value)
        }
        return data
    }

    /// The inverse of ``encode(_:)``; `nil` for anything malformed.
    static func decodeHeaders(_ data: Data) -> HTTPHeaders? {
        let bytes = [UInt8](data)
        var index = 0
        func next() -> String? {
            guard bytes.count - index >= 4 else { return nil }
            let length = Int(bytes[index]) | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2]) << 16 | Int(bytes[index + 3]) << 24
            index += 4
            guard length >= 0, bytes.count - index >= length else { return nil }
            defer { index += length }
            return String(decoding: bytes[index..<index + length], as: UTF8.self)
        }
        var pairs: [(String, String)] = []
        while index < bytes.count {
            guard let name = next(), let value = next() else { return nil }
            pairs.append((name, value))
        }
        return HTTPHeaders(pairs)
    }
}

#endif
