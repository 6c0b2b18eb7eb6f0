import RunwayMediator

public struct CartTarget: MediatorTarget {
    public static let name = "cart"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<CartTarget>) {
        actions.action("show", access: .remote, routes: ["APP://Shop/<int:itemID>/"]) { _, _ in 1 }
    }
}

public struct SecondShop: MediatorTarget {
    public static let name = "Shop"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<SecondShop>) {}
}
