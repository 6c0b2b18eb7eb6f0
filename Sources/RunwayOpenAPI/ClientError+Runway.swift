#if OpenAPI  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if OpenAPI  // the package trait that brings this dependency (TraitCheck.swift)
import OpenAPIRuntime
#endif

extension ClientError {
    /// The `RunwayError` behind this error, when the transport threw one: its
    /// `code` (`.timeout`, `.cannotConnect`, `.cancelled`, ...), `stage` and `response`.
    /// `nil` when the error arose elsewhere (the generated code could not encode the input or
    /// decode the response: see `underlyingError`).
    ///
    /// ```swift
    /// catch let error as ClientError where error.runwayError?.code == .timeout { ... }
    /// ```
    public var runwayError: RunwayError? {
        if let error = underlyingError as? RunwayError { return error }
        return (underlyingError as? ClientError)?.runwayError
    }
}

#endif
