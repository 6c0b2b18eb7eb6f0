import RunwayMediator

/// Not a target: `struct InComment: MediatorTarget {}` lives in a comment.
/* struct InBlock: MediatorTarget { static let name = "block" } */
let decoy = "public struct InString: MediatorTarget { }"

public struct ListingTarget: MediatorTarget {
    public static let name = "listing"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<ListingTarget>) {
        actions.action("detail", access: .remote, routes: ["app://listing/<int:id>", "app://l/<int:id>"]) { _, call in
            try call.parameters.int("id")
        }
        // actions.action("commented", access: .remote) { _, _ in 0 }
        actions.action("purge") { _, _ in "{ braces } in a string" }
    }
}

struct Helper {}
