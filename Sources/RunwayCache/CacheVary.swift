#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

/// Responses that vary with request header fields (RFC 9111 §4.1): a response whose `Vary`
/// names fields answers only a request that sends the same values for them as the request it
/// answered did (kept with the entry as ``CacheEntry/selecting``), and one whose `Vary` is `*`
/// answers no other request, so it is never stored.
enum CacheVary {
    /// The field names listed by the `Vary` fields of `headers`, lower-cased, each once.
    static func names(in headers: HTTPHeaders) -> [String] {
        var names: [String] = []
        for value in headers.values(for: "Vary") {
            for part in value.split(separator: ",") {
                let name = String(part).trimmingBlanks().lowercased()
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    /// Whether a response with `headers` varies with something no request shows (`Vary: *`).
    static func isUnmatchable(_ headers: HTTPHeaders) -> Bool {
        names(in: headers).contains("*")
    }

    /// The fields of `request` that the `Vary` of a response with `headers` names.
    static func selecting(_ request: Request, responseHeaders headers: HTTPHeaders) -> HTTPHeaders {
        var selecting = HTTPHeaders()
        for name in names(in: headers) {
            for value in request.headers.values(for: name) { selecting.add(name: name, value: value) }
        }
        return selecting
    }

    /// Whether `entry` may answer `request`: every field its response's `Vary` names has the
    /// same values in `request` as in the request it was stored for (a field absent from both
    /// matches).
    static func matches(_ request: Request, _ entry: CacheEntry) -> Bool {
        names(in: entry.headers).allSatisfy { name in
            name != "*" && normalized(request.headers.values(for: name)) == normalized(entry.selecting.values(for: name))
        }
    }

    /// A field's values as one line, without the blanks around each.
    private static func normalized(_ values: [String]) -> String {
        values.map { $0.trimmingBlanks() }.joined(separator: ",")
    }
}

#endif
