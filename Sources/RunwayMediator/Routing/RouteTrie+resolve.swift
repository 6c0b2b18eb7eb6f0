/// Matching: depth-first over the trie, literal > typed > untyped > catch-all at each segment,
/// backtracking when a branch dead-ends. Each trie node is visited at most once per lookup,
/// so the cost is bounded by the trie, never exponential.
///
/// The hot path reads the frozen node array, the scanned segments and the URL's bytes through
/// bounds-checked array subscripts (no unsafe pointers: the input is untrusted).
extension RouteTrie {
    /// What a lookup found.
    struct Found {
        var route: Route
        /// Captured values, in pattern order.
        var captures: [MediatorParameters.Stored]
    }

    /// Finds the route for `scan`'s segments that `origin` may call. `forbidden` becomes true
    /// when a route matched but its action is local-only and the call is remote.
    func resolve(
        _ scan: URLScanner.Scan, bytes: [UInt8], origin: CallOrigin, forbidden: inout Bool
    ) -> Found? {
        // Apps have one or two schemes: a linear scan beats hashing the scheme.
        guard let root = schemeRoots.first(where: { $0.scheme == scan.scheme })?.node else { return nil }
        var matcher = Matcher(
            nodes: nodes, segments: scan.segments, bytes: bytes, pathEnd: scan.pathEnd, remote: origin == .remote)
        let route = matcher.match(root, 0, routes)
        forbidden = matcher.forbidden
        return route >= 0 ? Found(route: routes[Int(route)], captures: matcher.captures) : nil
    }

    private struct Matcher {
        let nodes: [Node]
        let segments: [URLScanner.Segment]
        let bytes: [UInt8]
        let pathEnd: Int
        let remote: Bool
        var forbidden = false
        var captures: [MediatorParameters.Stored] = []

        init(nodes: [Node], segments: [URLScanner.Segment], bytes: [UInt8], pathEnd: Int, remote: Bool) {
            self.nodes = nodes
            self.segments = segments
            self.bytes = bytes
            self.pathEnd = pathEnd
            self.remote = remote
            captures.reserveCapacity(4)
        }

        private mutating func allowed(_ route: Int32, _ routes: [Route]) -> Bool {
            if !remote || routes[Int(route)].access == .remote { return true }
            forbidden = true
            return false
        }

        mutating func match(_ node: Int32, _ position: Int, _ routes: [Route]) -> Int32 {
            let index = Int(node)
            if position == segments.count {
                let route = nodes[index].route
                if route >= 0, allowed(route, routes) { return route }
                return -1
            }
            let value = segments[position].value
            if let child = nodes[index].literals[value] {
                let found = match(child, position + 1, routes)
                if found >= 0 { return found }
            }
            let typedCount = nodes[index].typed.count
            var edgeIndex = 0
            while edgeIndex < typedCount {
                let edge = nodes[index].typed[edgeIndex]
                edgeIndex += 1
                if edge.converter.isInt {
                    guard let number = RouteConverter.parseInt(value) else { continue }
                    captures.append(.int(number))
                } else {
                    guard let converted = edge.converter.convert(value) else { continue }
                    captures.append(MediatorParameters.Stored(converted))
                }
                let found = match(edge.child, position + 1, routes)
                if found >= 0 { return found }
                captures.removeLast()
            }
            let untyped = nodes[index].untyped
            if untyped >= 0 {
                captures.append(.string(value))
                let found = match(untyped, position + 1, routes)
                if found >= 0 { return found }
                captures.removeLast()
            }
            let catchAll = nodes[index].catchAll
            if catchAll >= 0, allowed(catchAll, routes) {
                var start = segments[position].rawStart
                // Empty segments before it are the value's too (a scheme-relative URL carried in
                // it keeps its `//`): the slashes past the one that ends the segment before.
                if position > 0 { while bytes[start - 2] == UInt8(ascii: "/") { start -= 1 } }
                captures.append(.string(URLScanner.decodeLenient(bytes, start, max(start, pathEnd))))
                return catchAll
            }
            return -1
        }
    }
}
