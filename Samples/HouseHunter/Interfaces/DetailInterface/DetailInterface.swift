import RunwayMediator

/// The detail module's interface: its names and typed helpers. Other modules import this small
/// target, never `Detail` itself.
public enum DetailRoutes {
    /// The target's name: the host of `app://detail/...`.
    public static let target = "detail"
    /// One listing: `app://detail/show?id=42` (or `app://detail/42`).
    public static let show = "show"
}

extension Mediator {
    /// The deep link to listing `id`'s detail screen.
    public func detailURL(id: Int) throws -> String {
        try url(target: DetailRoutes.target, action: DetailRoutes.show, parameters: ["id": String(id)])
    }
}
