import RunwayCore

/// Runs several managers together on structured concurrency (YTKNetwork's `YTKBatchRequest`).
///
/// ```swift
/// let (detail, comments) = try await APIBatch.load(detailManager, commentsManager)
/// let outcomes = await APIBatch.loadEach([a, b, c])   // every result, nothing cancelled
/// ```
/// Each manager keeps its own policies and delegate; the batch only waits for them. Cancelling
/// the batch's task cancels the calls.
public enum APIBatch {
    /// Loads every manager concurrently and returns their raw data in the same order. The
    /// first failure cancels the others and is thrown.
    /// - Parameters:
    ///   - managers: The managers to load, each once.
    ///   - params: The parameters of each manager's call, in the same order (`nil` for a call
    ///     that asks its param source); `nil` asks every manager's param source.
    /// - Throws: `RunwayError` `.configuration`, before any call, when `params` does not hold
    ///   one entry per manager; else the first failure.
    public static func load(_ managers: [any APIManager], params: [[String: JSON]?]? = nil) async throws(RunwayError) -> [JSON] {
        if let params, params.count != managers.count {
            throw RunwayError(
                .configuration, "params holds \(params.count) entries for \(managers.count) managers: give one per manager (nil for none)",
                stage: stage, field: "params")
        }
        let outcomes = await withTaskGroup(of: (Int, Result<JSON, RunwayError>).self) { group in
            for (index, manager) in managers.enumerated() {
                let own = params.flatMap { index < $0.count ? $0[index] : nil }
                group.addTask { (index, await Self.outcome(manager, params: own)) }
            }
            var results = [Result<JSON, RunwayError>?](repeating: nil, count: managers.count)
            // The first failure to arrive caused the cancellation of the others: it is the one
            // thrown, whatever its code (a call dropped by `dropNew` is `.cancelled` too).
            var firstFailure: RunwayError?
            for await (index, result) in group {
                results[index] = result
                if case .failure(let error) = result, firstFailure == nil {
                    firstFailure = error
                    group.cancelAll()
                }
            }
            return (results, firstFailure)
        }
        if let failure = outcomes.1 { throw failure }
        var values: [JSON] = []
        for outcome in outcomes.0 {
            guard case .success(let value)? = outcome else { throw RunwayError(.cancelled, "the batch was cancelled", stage: stage) }
            values.append(value)
        }
        return values
    }

    /// Loads two managers concurrently and returns both raw data.
    public static func load(_ first: any APIManager, _ second: any APIManager) async throws(RunwayError) -> (JSON, JSON) {
        let values = try await load([first, second])
        return (values[0], values[1])
    }

    /// Loads every manager concurrently and returns every outcome in order; a failure cancels
    /// nothing.
    public static func loadEach(_ managers: [any APIManager]) async -> [Result<JSON, RunwayError>] {
        await withTaskGroup(of: (Int, Result<JSON, RunwayError>).self) { group in
            for (index, manager) in managers.enumerated() {
                group.addTask { (index, await Self.outcome(manager, params: nil)) }
            }
            var results = [Result<JSON, RunwayError>](
                repeating: .failure(RunwayError(.cancelled, "the batch was cancelled", stage: stage)), count: managers.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
    }

    /// The stage of the batch's own failures (its arguments, its cancellation).
    static let stage = RunwayError.Stage(kind: "batch", name: "APIBatch")

    static func outcome(_ manager: any APIManager, params: [String: JSON]?) async -> Result<JSON, RunwayError> {
        do throws(RunwayError) {
            return .success(try await manager.load(params: params))
        } catch {
            return .failure(error)
        }
    }
}
