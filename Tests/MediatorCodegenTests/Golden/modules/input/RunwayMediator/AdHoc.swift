public struct AdHocTarget: MediatorTarget {
    public static var name: String { "ad-hoc" }
}
