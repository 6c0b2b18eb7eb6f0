import RunwayMediator

struct InternalTarget: MediatorTarget {
    static let name = "internal"
    static func declareActions(_ actions: inout MediatorActions<InternalTarget>) {}
}

public enum Namespace {
    public struct NestedTarget: MediatorTarget {
        public static let name = "nested"
        public init() {}
        public static func declareActions(_ actions: inout MediatorActions<NestedTarget>) {}
    }

    struct InternalNestedTarget: MediatorTarget {
        static let name = "internal-nested"
        static func declareActions(_ actions: inout MediatorActions<InternalNestedTarget>) {}
    }
}

public struct FineTarget: MediatorTarget {
    public static let name = "fine"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<FineTarget>) {}
}
