import RunwayCore

/// A weak reference that can travel into a task without keeping its object alive.
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?

    init(_ object: Object?) {
        self.object = object
    }
}

/// A weak reference to a manager as an existential. The call path is not generic over the
/// concrete manager: a generic type or async frame per manager type would make the runtime
/// look its metadata up on every call (about a tenth of a call's instructions).
struct WeakManager: Sendable {
    weak var object: (any APIManager)?

    init(_ object: any APIManager) {
        self.object = object
    }
}

/// Everything the task of one call needs, kept in its ``ManagerCall`` (the task captures that one
/// reference). It holds the manager and the engine weakly, so a call never extends their lifetime.
struct CallPlan: Sendable {
    /// The call's context, as the manager configured it (``APIManager/configure(_:params:)``).
    let context: RequestContext
    let weakManager: WeakManager
    let weakEngine: WeakReference<ManagerEngine>
    let entry: ServiceEntry
    let request: Request
    let params: [String: JSON]
    let apiName: String
    let monitor: ReachabilityMonitor?
    /// A check after the manager's own response validator (paging: the page has a list).
    let checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)?
    let afterSuccess: (@Sendable (JSON) -> Void)?

    init(
        context: RequestContext, manager: WeakManager, engine: WeakReference<ManagerEngine>,
        entry: ServiceEntry, request: Request, params: [String: JSON], apiName: String, monitor: ReachabilityMonitor?,
        checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)?, afterSuccess: (@Sendable (JSON) -> Void)?
    ) {
        self.context = context
        self.weakManager = manager
        self.weakEngine = engine
        self.entry = entry
        self.request = request
        self.params = params
        self.apiName = apiName
        self.monitor = monitor
        self.checkSuccess = checkSuccess
        self.afterSuccess = afterSuccess
    }

    var manager: (any APIManager)? { weakManager.object }
    var engine: ManagerEngine? { weakEngine.object }
}
