import RunwayCore

/// Runs managers one after another, each step's parameters made from the previous step's raw
/// data (YTKNetwork's `YTKChainRequest`).
///
/// ```swift
/// let profile = try await APIChain()
///     .then(loginManager)
///     .then(profileManager) { login in ["userID": login?["id"] ?? nil] }
///     .run()
/// ```
/// The first failure stops the chain and is thrown; cancelling the task cancels the current step.
public struct APIChain: Sendable {
    /// Makes a step's parameters from the previous step's raw data (`nil` for the first step);
    /// returning `nil` lets the manager ask its param source.
    public typealias MakeParams = @Sendable (_ previous: JSON?) throws(RunwayError) -> [String: JSON]?

    private struct Step: Sendable {
        let manager: any APIManager
        let makeParams: MakeParams
    }

    private var steps: [Step] = []

    /// An empty chain.
    public init() {}

    /// Appends a step.
    public func then(_ manager: any APIManager, params: @escaping MakeParams = { _ in nil }) -> APIChain {
        var chain = self
        chain.steps.append(Step(manager: manager, makeParams: params))
        return chain
    }

    /// Runs the steps in order and returns every step's raw data.
    public func runAll() async throws(RunwayError) -> [JSON] {
        var previous: JSON?
        var values: [JSON] = []
        for (index, step) in steps.enumerated() {
            let params: [String: JSON]?
            do throws(RunwayError) {
                params = try step.makeParams(previous)
            } catch {
                var error = error
                // A step's parameters failed: the chain's stage, naming the step.
                if error.stage == nil { error.stage = RunwayError.Stage(kind: "chain", name: "step \(index + 1) params") }
                throw error
            }
            let value = try await step.manager.load(params: params)
            values.append(value)
            previous = value
        }
        return values
    }

    /// Runs the steps in order and returns the last step's raw data (`.null` for an empty chain).
    @discardableResult
    public func run() async throws(RunwayError) -> JSON {
        try await runAll().last ?? .null
    }
}
