import RunwayMediator

@MainActor
public final class ChatTarget {
    public nonisolated init() {}
}

extension ChatTarget: MediatorTarget {
    public static let name = "chat"
    public static func declareActions(_ actions: inout MediatorActions<ChatTarget>) {
        actions.action("open", access: .remote) { _, _ in "chat" }
    }
}
