import RunwayCore

/// The base mechanism every manager gets; these are not requirements, so they cannot be
/// overridden.
extension APIManager {
    /// Calls the API and waits for the landing (see ``APIManager`` for the order of events).
    ///
    /// The delegate, if any, hears the landing too: the two paths have the same semantics.
    /// - Parameter params: The parameters; `nil` asks the ``paramSource`` (or sends none).
    /// - Returns: The raw data (also kept in ``rawData``).
    /// - Throws: `RunwayError`: the failure delivered, or `.cancelled` for a call that was not
    ///   started or did not land (the message says which).
    ///
    /// `@concurrent`: it runs on the global executor, never on the caller's actor, whatever
    /// the caller's isolation or language mode. The call's work (the chain's signing, gzip and
    /// cache reads, JSON parsing) runs in a task the engine owns on that executor, so it never
    /// lands on the main actor; cancelling the caller's task cancels that task too, unless
    /// others wait for the same call (`shareInFlight`).
    @discardableResult
    @concurrent
    public func load(params: [String: JSON]? = nil) async throws(RunwayError) -> JSON {
        try await loadResponse(params: params).json
    }

    /// ``load(params:)``, returning the response and its JSON.
    func loadResponse(params: [String: JSON]?) async throws(RunwayError) -> APIResponse {
        switch engine.submit(self, params: params, awaiting: true) {
        case .notStarted(let error):
            throw ManagerEngine.unsent(error)
        case .running(let call, let task):
            return try await engine.wait(for: call, task: task).get()
        }
    }

    /// A call that fails before it is made (its parameters could not be built): it lands as
    /// any failure before the network does, and `error` is thrown.
    func loadResponse(failingWith error: RunwayError) async throws(RunwayError) -> APIResponse {
        switch engine.fail(self, error: error, awaiting: true) {
        case .notStarted(let error):
            throw ManagerEngine.unsent(error)
        case .running(let call, let task):
            return try await engine.wait(for: call, task: task).get()
        }
    }

    /// Calls the API; the landing goes to the ``delegate`` (the delegate style).
    /// - Parameter params: The parameters; `nil` asks the ``paramSource`` (or sends none).
    /// - Returns: Whether the call will land (`false`: vetoed or dropped by the policy).
    @discardableResult
    public func loadData(params: [String: JSON]? = nil) -> Bool {
        switch engine.submit(self, params: params, awaiting: false) {
        case .notStarted: false
        case .running: true
        }
    }

    /// Cancels every call in flight; they end with `.cancelled` and are not delivered.
    public func cancelAll() {
        engine.cancelAll(reason: "cancelAll() was called")
    }

    /// The delegate that hears every landing, held weakly.
    public var delegate: (any APIManagerDelegate)? {
        get { engine.read { $0.delegate } }
        set { engine.lock.withLock { engine.state.delegate = newValue } }
    }

    /// Where parameters come from when a call gives none, held weakly.
    public var paramSource: (any APIManagerParamSource)? {
        get { engine.read { $0.paramSource } }
        set { engine.lock.withLock { engine.state.paramSource = newValue } }
    }

    /// The raw data of the last successful call, `nil` before the first.
    public var rawData: JSON? { engine.read { $0.lastSuccess?.json } }

    /// The error of the last failed call; cleared by a success.
    public var lastError: RunwayError? { engine.read { $0.lastError } }

    /// The last response received (successful or not).
    public var lastResponse: Response? { engine.read { $0.lastResponse } }

    /// Whether a call of this manager is in flight (the single source of truth for spinners).
    public var isLoading: Bool { engine.read { !$0.calls.isEmpty } }

    /// The raw data, without a reformer.
    public func fetchData() -> JSON? { rawData }

    /// The raw data reformed for one view.
    /// - Throws: `RunwayError` `.noContent` before any successful call; a `RunwayError` the
    ///   reformer throws, as it is; `.responseInvalid` when it throws any other error (that error
    ///   is the `RunwayError.underlying`).
    public func fetchData<R: Reformer>(with reformer: R) throws(RunwayError) -> R.Output {
        guard let raw = rawData else {
            throw RunwayError(.noContent, "\(apiName) has no data yet", stage: .manager(apiName))
        }
        do {
            return try reformer.reform(raw, from: self)
        } catch let error as RunwayError {
            throw error
        } catch {
            throw RunwayError(
                .responseInvalid, "\(R.self) could not reform \(apiName): \(error)", stage: .manager(apiName),
                response: lastResponse, underlying: error)
        }
    }
}

extension RunwayError {
    /// A parameter failed validation: for ``APIManager/validate(params:)``.
    public static func paramsInvalid(field: String, _ message: String) -> RunwayError {
        RunwayError(.paramsInvalid, message, field: field)
    }

    /// A response failed validation: for ``APIManager/validate(response:)``; the response is kept.
    public static func responseInvalid(_ message: String, response: APIResponse, field: String? = nil) -> RunwayError {
        RunwayError(.responseInvalid, message, field: field, response: response.response)
    }
}
