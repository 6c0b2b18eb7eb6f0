import RunwayCore

/// A manager for an API that returns a list page by page; the manager keeps the page number.
///
/// ```swift
/// final class RentalPagesAPIManager: PagedAPIManager {
///     let engine = ManagerEngine()
///     let apiName = "listings/rent"
///     let serviceID: ServiceID = .rental
///     var pageSize: Int { 20 }
/// }
/// try await manager.loadNextPage()   // page 1, then 2, ...
/// ```
/// ``loadNextPage(params:)`` calls run one at a time in call order, each asking for the page
/// after the last one loaded, so concurrent calls never skip or repeat a page. A failed page
/// is asked for again by the next call, and so is a page cancelled before its delivery ran
/// (its response in, the delivery executor busy). After the last page, calls are not started and throw
/// `.noContent`. ``resetPages()`` starts again from ``firstPage``, cancelling the page loads in
/// flight or queued. A page whose response has no
/// list where ``items(in:)`` looks fails with `.responseInvalid`: it is never taken for an empty
/// last page. A call whose task is cancelled
/// while it waits for its turn ends at once with `.cancelled`, and `cancelAll()` cancels the
/// calls waiting behind the one in flight as well as that one.
public protocol PagedAPIManager: APIManager {
    /// Items per page (default 20).
    var pageSize: Int { get }
    /// The number of the first page (default 1).
    var firstPage: Int { get }
    /// The parameter carrying the page number (default `"page"`).
    var pageParameter: String { get }
    /// The parameter carrying the page size (default `"pageSize"`).
    var pageSizeParameter: String { get }
    /// Whether `response` (page number `page`) is the last page. Default: fewer than
    /// ``pageSize`` items in ``items(in:)``.
    func isLastPage(_ response: JSON, page: Int) -> Bool
    /// The items of one page; every page's response passes through it before the page counts
    /// as loaded, so what it throws fails the page.
    ///
    /// Default: the response if it is an array; else the first array among its members
    /// `items`, `list`, `data`, `results`, `records`; else the first among those of its `data`
    /// or `result` object, as in `{"code": 0, "data": {"list": [...], "total": 95}}`.
    /// - Throws: `RunwayError` `.responseInvalid` (the default) when there is no such array.
    ///   Implement this method to say where your API puts the list.
    func items(in response: JSON) throws(RunwayError) -> [JSON]
}

extension PagedAPIManager {
    public var pageSize: Int { 20 }
    public var firstPage: Int { 1 }
    public var pageParameter: String { "page" }
    public var pageSizeParameter: String { "pageSize" }

    public func isLastPage(_ response: JSON, page: Int) -> Bool {
        // A page reaches this only once `items(in:)` has found its list.
        ((try? items(in: response)) ?? []).count < pageSize
    }

    public func items(in response: JSON) throws(RunwayError) -> [JSON] {
        if let array = response.array { return array }
        let keys = ["items", "list", "data", "results", "records"]
        for key in keys {
            if let array = response[key]?.array { return array }
        }
        for outer in ["data", "result"] {
            guard let object = response[outer], object.object != nil else { continue }
            for key in keys {
                if let array = object[key]?.array { return array }
            }
        }
        throw RunwayError(
            .responseInvalid,
            "\(apiName): the page has no list: the response is not an array, and none of items, list, data, results, "
                + "records is one, at the top or inside data or result (implement items(in:) to say where the list is)")
    }

    /// The last page loaded since the last reset; `nil` before the first.
    public var currentPage: Int? { engine.read { $0.paging.currentPage } }

    /// Whether the last page loaded is the first page (`false` before any page).
    public var isFirstPage: Bool { engine.read { $0.paging.currentPage } == firstPage }

    /// Whether the last page has been loaded.
    public var isLastPage: Bool { engine.read { $0.paging.isLastPage } }

    /// Forgets the pages loaded; the next ``loadNextPage(params:)`` asks for ``firstPage``.
    ///
    /// The calls in flight, and the page loads waiting for their turn, belong to the pages
    /// forgotten: they are cancelled as by `cancelAll()` (they end with `.cancelled` and are not
    /// delivered), so a list refreshed while a page loads never receives that page after its
    /// new first page, or before it.
    public func resetPages() {
        engine.cancelAll(reason: "resetPages() was called")
        engine.lock.withLock {
            engine.state.paging.currentPage = nil
            engine.state.paging.isLastPage = false
            engine.state.paging.generation += 1
        }
    }

    /// Loads the page after the last one loaded and waits for the landing.
    /// - Parameter params: Parameters besides the page ones; `nil` asks the param source.
    /// - Throws: `RunwayError`; `.noContent` (not started) after the last page.
    /// `@concurrent`, like ``APIManager/load(params:)``: never on the caller's actor.
    @discardableResult
    @concurrent
    public func loadNextPage(params: [String: JSON]? = nil) async throws(RunwayError) -> JSON {
        // Read once: a computed `engine` hands out a new one on each read (refused below).
        let engine = self.engine
        if let error = ManagerEngine.unstoredEngineError(self, engine, .manager(apiName)) { throw error }
        return try await Self.nextPage(
            WeakReference(self), engine: WeakReference(engine), gate: engine.pageGate,
            cancellations: engine.read { $0.paging.cancellations },
            params: params, awaiting: true
        ).get().json
    }

    /// Loads the page after the last one loaded; the landing goes to the delegate. Calls made
    /// while one is loading are queued, not dropped. Holds the manager only weakly.
    public func loadNextPageData(params: [String: JSON]? = nil) {
        let strongEngine = self.engine
        // A computed `engine`: not started, as `loadData` is not (nothing would ever land).
        if ManagerEngine.unstoredEngineError(self, strongEngine, .manager(apiName)) != nil { return }
        let manager = WeakReference(self)
        let engine = WeakReference(strongEngine)
        let gate = strongEngine.pageGate
        // Read now, not when the task starts: a `cancelAll()` right after this call cancels it.
        let cancellations = strongEngine.read { $0.paging.cancellations }
        Task {
            _ = await Self.nextPage(manager, engine: engine, gate: gate, cancellations: cancellations, params: params, awaiting: false)
        }
    }

    private static func nextPage(
        _ manager: WeakReference<Self>, engine weakEngine: WeakReference<ManagerEngine>, gate: PageGate,
        cancellations: Int, params: [String: JSON]?, awaiting: Bool
    ) async -> CallOutcome {
        let wasCancelled = Task.isCancelled
        guard await gate.acquire() else {
            // A `load()` from a task already cancelled is not started, as `load()` says.
            let message =
                wasCancelled
                ? "not started: the awaiting task was cancelled"
                : "cancelled: the awaiting task was cancelled while the page waited for its turn"
            return .failure(RunwayError(.cancelled, message, stage: manager.object.map { .manager($0.apiName) }, neverSent: true))
        }
        defer { gate.release() }
        let submission: ManagerEngine.Submission
        do {
            guard let strong = manager.object, let engine = weakEngine.object else {
                return .failure(ManagerEngine.unsent(RunwayError(.cancelled, "cancelled: the manager was released")))
            }
            let stage = RunwayError.Stage.manager(strong.apiName)
            if Task.isCancelled {
                return .failure(ManagerEngine.unsent(RunwayError(.cancelled, "cancelled: the awaiting task was cancelled", stage: stage)))
            }
            let (current, last, generation, cancelled) = engine.read {
                (
                    $0.paging.currentPage, $0.paging.isLastPage, $0.paging.generation,
                    $0.paging.cancellations != cancellations ? $0.paging.lastCancellation : nil
                )
            }
            if let cancelled {
                return .failure(
                    RunwayError(.cancelled, "cancelled: \(cancelled) while the page waited for its turn", stage: stage, neverSent: true))
            }
            if last {
                return .failure(
                    ManagerEngine.unsent(RunwayError(.noContent, "not started: the last page was already loaded", stage: stage)))
            }
            if let error = pagingConfigurationError(strong, stage: stage) { return .failure(ManagerEngine.unsent(error)) }
            let page: Int
            if let current {
                let next = current.addingReportingOverflow(1)
                guard !next.overflow else {
                    return .failure(
                        ManagerEngine.unsent(
                            RunwayError(.noContent, "not started: page \(current) is the largest page number", stage: stage)))
                }
                page = next.partialValue
            } else {
                page = strong.firstPage
            }
            let extra: [String: JSON] = [
                strong.pageParameter: .int(Int64(page)), strong.pageSizeParameter: .int(Int64(strong.pageSize)),
            ]
            submission = engine.submit(
                strong, params: params, awaiting: awaiting, policy: .concurrent, extraParams: extra, cancellations: cancellations,
                checkSuccess: { response throws(RunwayError) in
                    guard let manager = manager.object else { return }
                    _ = try manager.items(in: response.json)
                },
                afterSuccess: { json in
                    guard let manager = manager.object, let engine = weakEngine.object else { return }
                    let isLast = manager.isLastPage(json, page: page)
                    engine.lock.withLock {
                        guard engine.state.paging.generation == generation else { return }
                        engine.state.paging.currentPage = page
                        engine.state.paging.isLastPage = isLast
                    }
                })
        }
        // The strong references above are out of scope here: waiting holds neither the manager
        // nor the engine, so releasing the manager cancels the page load.
        switch submission {
        case .notStarted(let error):
            return .failure(ManagerEngine.unsent(error))
        case .running(let call, let task):
            guard awaiting, let engine = weakEngine.object else { return await task.outcome }
            // An awaiting caller holds the manager (and so the engine) itself.
            return await engine.wait(for: call, task: task)
        }
    }

    /// Settings no page can be asked for with, or `nil`.
    private static func pagingConfigurationError(_ manager: Self, stage: RunwayError.Stage) -> RunwayError? {
        guard manager.pageSize > 0 else {
            // The default isLastPage (fewer than pageSize items) could never end the paging.
            return RunwayError(.configuration, "pageSize is \(manager.pageSize); it must be at least 1", stage: stage, field: "pageSize")
        }
        guard !manager.pageParameter.isEmpty, !manager.pageSizeParameter.isEmpty else {
            let field = manager.pageParameter.isEmpty ? "pageParameter" : "pageSizeParameter"
            return RunwayError(.configuration, "\(field) is empty; it names the parameter the server reads", stage: stage, field: field)
        }
        guard manager.pageParameter != manager.pageSizeParameter else {
            return RunwayError(
                .configuration,
                "pageParameter and pageSizeParameter are both \"\(manager.pageParameter)\"; the page and its size need a parameter each",
                stage: stage, field: "pageSizeParameter")
        }
        return nil
    }
}
