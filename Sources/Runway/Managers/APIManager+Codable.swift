import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Codable both ways: typed results decoded from the bytes received, typed parameters encoded
/// to JSON.
extension APIManager {
    /// Calls the API and decodes its body into `T`.
    ///
    /// The call is an ordinary ``load(params:)`` (policies, validators, delegate, ``rawData``);
    /// `T` is decoded afterwards from the response's bytes with the manager's ``decoder``, else
    /// its service's ``Service/decoder``, so the body is never re-serialised to be decoded. Like
    /// a reformer, decoding is the caller's view of the data: a body that is not a `T` is thrown
    /// to this caller and leaves the manager's state as the call left it.
    /// ```swift
    /// let product = try await productManager.load(as: Product.self, params: ["id": 42])
    /// ```
    /// - Throws: `RunwayError`: the call's failure, or `.responseInvalid` naming the coding
    ///   path when the body is not a `T` (see ``APIResponse/decode(_:)``).
    @concurrent
    public func load<T: Decodable>(as type: T.Type, params: [String: JSON]? = nil) async throws(RunwayError) -> T {
        let response = try await loadResponse(params: params)
        return try decoded(response, as: T.self)
    }

    /// Calls the API with `parameters` encoded by the manager's ``encoder`` (they must encode to
    /// a JSON object: its keys are the parameters) and decodes the body into `T`.
    /// ```swift
    /// struct NewItem: Encodable { let productID: Int; let quantity: Int }
    /// let cart = try await addToCart.load(as: Cart.self, encoding: NewItem(productID: 42, quantity: 2))
    /// ```
    /// - Throws: `.paramsInvalid` when the parameters do not encode to an object; otherwise as
    ///   ``load(as:params:)``. Parameters that do not encode fail the call as invalid parameters
    ///   do: the delegate hears it too, and under ``LoadPolicy/cancelPrevious`` it supersedes
    ///   the calls in flight.
    @concurrent
    public func load<T: Decodable, P: Encodable>(as type: T.Type, encoding parameters: P) async throws(RunwayError) -> T {
        let response = try await loadResponse(encoding: parameters)
        return try decoded(response, as: T.self)
    }

    /// Calls the API with `parameters` encoded by the manager's ``encoder`` and returns the raw
    /// data, as ``load(params:)``.
    /// - Throws: as ``load(as:encoding:)``.
    @discardableResult
    @concurrent
    public func load<P: Encodable>(encoding parameters: P) async throws(RunwayError) -> JSON {
        try await loadResponse(encoding: parameters).json
    }

    /// The last successful call's body decoded into `T`: the typed form of
    /// ``fetchData(with:)``, decoded from the bytes received.
    /// - Throws: `.noContent` before any successful call; `.responseInvalid` as
    ///   ``APIResponse/decode(_:)``.
    public func fetchData<T: Decodable>(as type: T.Type) throws(RunwayError) -> T {
        guard let response = engine.read({ $0.lastSuccess }) else {
            throw RunwayError(.noContent, "\(apiName) has no data yet", stage: .manager(apiName))
        }
        return try decoded(response, as: T.self)
    }

    /// `response`'s body as a `T`; a body that is not one fails at this manager's stage.
    private func decoded<T: Decodable>(_ response: APIResponse, as type: T.Type) throws(RunwayError) -> T {
        do throws(RunwayError) {
            return try response.decode(T.self)
        } catch {
            var error = error
            error.stage = .manager(apiName)
            throw error
        }
    }

    /// A call with `parameters` encoded; parameters that do not encode are the call's failure,
    /// delivered as any failure before the network.
    private func loadResponse<P: Encodable>(encoding parameters: P) async throws(RunwayError) -> APIResponse {
        let params: [String: JSON]
        do throws(RunwayError) {
            params = try encodedParameters(parameters)
        } catch {
            return try await loadResponse(failingWith: error)
        }
        return try await loadResponse(params: params)
    }

    private func encodedParameters<P: Encodable>(_ parameters: P) throws(RunwayError) -> [String: JSON] {
        let json: JSON
        do throws(RunwayError) {
            json = try JSON(encoding: parameters, encoder: encoder)
        } catch {
            throw RunwayError(.paramsInvalid, error.message, stage: .manager(apiName), field: error.field, underlying: error.underlying)
        }
        guard case .object(let object) = json else {
            throw RunwayError(
                .paramsInvalid, "\(P.self) must encode to a JSON object (its keys are the parameters)", stage: .manager(apiName))
        }
        return object
    }
}

extension JSON {
    /// `value` as JSON, through `encoder` (its date, data and key strategies apply).
    /// - Throws: `RunwayError` `.invalidRequest` when `value` cannot be encoded (its
    ///   `EncodingError` is the `RunwayError.underlying`, and the value's coding path, as
    ///   `items[2].price`, the `RunwayError.field`), or when it holds a number that `JSON`
    ///   cannot hold exactly: an integer beyond `Int64` (a large `UInt64`) or a number with more
    ///   digits than a `Double` holds (a long `Decimal`), which would be sent as another number.
    public init<T: Encodable>(encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws(RunwayError) {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            // The value that could not be encoded, named as a decoding error names one.
            var field: String?
            if case .invalidValue(_, let context) = error as? EncodingError {
                let path = APIResponse.text(ofCodingPath: context.codingPath)
                if !path.isEmpty { field = path }
            }
            throw RunwayError(.invalidRequest, "\(T.self) cannot be encoded as JSON: \(error)", field: field, underlying: error)
        }
        do throws(RunwayError) {
            self = try JSON(parsingExactly: data)
        } catch {
            throw RunwayError(.invalidRequest, "\(T.self) holds a number JSON cannot carry exactly: \(error.message)")
        }
    }
}
