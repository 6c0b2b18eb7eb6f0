import RunwayMediator

public struct ShopTarget: MediatorTarget {
    public static let name = "shop"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<ShopTarget>) {
        actions.action("item", access: .remote, routes: ["app://shop/<int:id>"]) { _, _ in 1 }
        actions.action("item") { _, _ in 2 }
        actions.action("cart", routes: ["app://shop/cart"]) { _, _ in 3 }
        actions.action("byName", access: .remote, routes: ["app://shop/<name>"]) { _, _ in 4 }
    }
}
