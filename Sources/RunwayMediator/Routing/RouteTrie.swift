/// The frozen route table: a trie per scheme, keyed by literal segments, with typed, untyped
/// and catch-all edges tried in a fixed order. Built once by ``Mediator/Builder``; immutable.
struct RouteTrie: Sendable {
    struct Node: Sendable {
        var literals: [String: Int32] = [:]
        /// Typed edges in precedence order (``RouteConverter/precedes(_:_:)``).
        var typed: [TypedEdge] = []
        var untyped: Int32 = -1
        /// A catch-all route ending here (index into `routes`).
        var catchAll: Int32 = -1
        /// The route ending exactly here (index into `routes`).
        var route: Int32 = -1
    }

    struct TypedEdge: Sendable {
        let converter: RouteConverter
        let child: Int32
    }

    /// One route: a pattern leading to an action. A class, so the hot path moves one reference.
    final class Route: Sendable {
        let pattern: RoutePattern
        let entry: ActionEntry
        let access: ActionAccess
        /// The parameter name of each capture in order (`nil` for wildcards).
        let captureNames: [String?]
        let source: String

        init(pattern: RoutePattern, entry: ActionEntry, captureNames: [String?], source: String) {
            self.pattern = pattern
            self.entry = entry
            self.access = entry.access
            self.captureNames = captureNames
            self.source = source
        }
    }

    private(set) var roots: [String: Int32] = [:]
    private(set) var nodes: [Node] = []
    private(set) var routes: [Route] = []

    /// Adds a route. The caller has already checked for conflicts and converter names.
    mutating func insert(_ pattern: RoutePattern, entry: ActionEntry, source: String, converters: [String: RouteConverter]) {
        var node: Int32
        if let root = roots[pattern.scheme] {
            node = root
        } else {
            node = newNode()
            roots[pattern.scheme] = node
        }
        var captureNames: [String?] = []
        let routeIndex = Int32(routes.count)
        for segment in pattern.segments {
            switch segment {
            case .literal(let text):
                if let child = nodes[Int(node)].literals[text] {
                    node = child
                } else {
                    let child = newNode()
                    nodes[Int(node)].literals[text] = child
                    node = child
                }
            case .typed(let converterName, let name):
                captureNames.append(name)
                if let edge = nodes[Int(node)].typed.first(where: { $0.converter.name == converterName }) {
                    node = edge.child
                } else if let converter = converters[converterName] {
                    let child = newNode()
                    nodes[Int(node)].typed.append(TypedEdge(converter: converter, child: child))
                    nodes[Int(node)].typed.sort { RouteConverter.precedes($0.converter, $1.converter) }
                    node = child
                }
            case .untyped(let name):
                captureNames.append(name)
                if nodes[Int(node)].untyped >= 0 {
                    node = nodes[Int(node)].untyped
                } else {
                    let child = newNode()
                    nodes[Int(node)].untyped = child
                    node = child
                }
            case .catchAll(let name):
                captureNames.append(name)
                nodes[Int(node)].catchAll = routeIndex
            }
        }
        if case .catchAll = pattern.segments.last {} else { nodes[Int(node)].route = routeIndex }
        routes.append(Route(pattern: pattern, entry: entry, captureNames: captureNames, source: source))
    }

    private mutating func newNode() -> Int32 {
        nodes.append(Node())
        return Int32(nodes.count - 1)
    }
}
