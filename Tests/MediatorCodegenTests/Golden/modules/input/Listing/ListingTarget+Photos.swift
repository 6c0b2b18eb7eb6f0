import RunwayMediator

public enum PhotoViewer: RunwayMediator.MediatorTarget, Sendable {
    public static var name: String { "photos" }
    public init() { self = .main }
    case main
    public static func declareActions(_ actions: inout MediatorActions<PhotoViewer>) {
        actions.action(
            "gallery",
            access: .remote,
            routes: ["app://photos/<path:rest>"]
        ) { _, _ in [String]() }
    }
}
