import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response as a manager's validators and hooks see it: the HTTP response and its body parsed
/// as JSON (`.null` for an empty body).
public struct APIResponse: Sendable {
    /// The response as the chain returned it.
    public var response: Response
    /// The body as JSON; `.null` when the body is empty.
    public var json: JSON
    /// The decoder of ``decode(_:)``: the manager's ``APIManager/decoder``, else its service's
    /// ``Service/decoder``; `nil` (a plain `JSONDecoder`) for a response made by hand.
    var decoder: JSONDecoder?

    /// Creates an API response.
    public init(response: Response, json: JSON) {
        self.response = response
        self.json = json
    }

    /// The HTTP status code.
    public var status: Int { response.status }

    /// The body decoded into `T`, straight from the bytes received (not from ``json``), with the
    /// manager's or the service's `JSONDecoder` (dates, key strategy).
    /// ```swift
    /// func validate(response: APIResponse) throws(RunwayError) {
    ///     let page = try response.decode(ProductPage.self)
    ///     if page.items.isEmpty { throw .responseInvalid("no products", response: response) }
    /// }
    /// ```
    /// - Throws: `RunwayError` `.responseInvalid` naming the type and where decoding failed
    ///   (`RunwayError.field` is the coding path, e.g. `items[2].price`); the `DecodingError`
    ///   is the `RunwayError.underlying` and the response is kept.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(RunwayError) -> T {
        do {
            return try (decoder ?? plainJSONDecoder).decode(T.self, from: response.body)
        } catch let error as DecodingError {
            var (path, reason) = Self.describe(error)
            if path.isEmpty, case .dataCorrupted = error, reason.contains("not valid JSON"),
                (try? JSON(parsing: response.body)) != nil
            {
                // Foundation's JSONDecoder on Linux says "not valid JSON", with no coding path, of
                // valid JSON holding a number its Swift type cannot hold.
                reason =
                    "the body is valid JSON, but a value in it does not fit the Swift type it is decoded into: a number "
                    + "out of that type's range, or with a fraction for an integer type (JSONDecoder said: \(reason))"
            }
            let at = path.isEmpty ? "" : " at \(path)"
            throw RunwayError(
                .responseInvalid, "the body is not a \(T.self)\(at): \(reason)", field: path.isEmpty ? nil : path,
                response: response, underlying: error)
        } catch {
            throw RunwayError(.responseInvalid, "the body is not a \(T.self): \(error)", response: response, underlying: error)
        }
    }

    /// A coding path as a field is named in errors: `items[2].price`.
    static func text(ofCodingPath codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            // JSONDecoder and JSONEncoder name an array element `Index 2` (integer value 2); a
            // member keeps its name, even one with an integer value too (a dictionary's key "42",
            // Int-backed CodingKeys), which is looked up by name.
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// Where a decoding error happened (`items[2].price`) and what it was, in words.
    static func describe(_ error: DecodingError) -> (path: String, reason: String) {
        let path = Self.text(ofCodingPath:)
        switch error {
        case .keyNotFound(let key, let context):
            return (path(context.codingPath + [key]), "no value for key \"\(key.stringValue)\"")
        case .valueNotFound(let type, let context):
            return (path(context.codingPath), "expected \(type), found null")
        case .typeMismatch(let type, let context):
            return (path(context.codingPath), "expected \(type): \(context.debugDescription)")
        case .dataCorrupted(let context):
            return (path(context.codingPath), context.debugDescription)
        @unknown default:
            return ("", "\(error)")
        }
    }
}
