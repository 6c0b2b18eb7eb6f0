import Foundation
import RoutingKit
import RunwayMediator

/// The same route set registered in the mediator and in RoutingKit's `TrieRouter`.
///
/// `count` routes in `count / 10` targets of 10 actions each, shaped like an app's deep links:
/// `app://module<t>/item<a>/<int:id>/detail`. The URL looked up hits the last route registered,
/// with a query (`ref`, a repeated `tag`), so both sides parse, match, convert `id` to `Int` and
/// collect query values.
// @unchecked Sendable: `TrieRouter` is a class that is only read (`route(path:parameters:)`)
// after `init` has registered every route; the mediator is Sendable.
struct RouteFixture: @unchecked Sendable {
    let count: Int
    let mediator: Mediator
    let router: TrieRouter<Int>
    let url: String

    init(count: Int) throws {
        self.count = count
        let targets = max(1, count / 10)
        var builder = Mediator.Builder(implicitRoutes: false)
        let router = TrieRouter(Int.self)
        for target in 0..<targets {
            try builder.register(targetNamed: "module\(target)") { actions in
                for action in 0..<10 {
                    actions.action(
                        "item\(action)", access: .remote, routes: ["app://module\(target)/item\(action)/<int:id>/detail"]
                    ) { _, _ in action }
                }
            }
            for action in 0..<10 {
                router.register(
                    target * 10 + action,
                    at: [.constant("module\(target)"), .constant("item\(action)"), .parameter("id"), .constant("detail")])
            }
        }
        self.mediator = try builder.build()
        self.router = router
        self.url = "app://module\(targets - 1)/item9/4242/detail?ref=push&tag=a&tag=b"
    }

    /// Mediator: hand-written UTF-8 parsing + trie + typed `id` + query values.
    func resolveWithMediator() -> Int {
        guard let match = try? mediator.resolve(url), let id = try? match.parameters.int("id") else { return -1 }
        return id &+ match.parameters.strings("tag").count
    }

    /// RoutingKit: `URLComponents` parsing + `TrieRouter` + `Int` conversion + query values.
    func resolveWithRoutingKit() -> Int {
        guard let components = URLComponents(string: url), let host = components.host else { return -1 }
        var path = [host]
        path += components.path.split(separator: "/").map(String.init)
        var parameters = Parameters()
        guard router.route(path: path, parameters: &parameters) != nil, let id = parameters.get("id", as: Int.self) else {
            return -1
        }
        let tags = components.queryItems?.filter { $0.name == "tag" }.compactMap(\.value) ?? []
        return id &+ tags.count
    }
}
