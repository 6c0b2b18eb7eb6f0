/// Matching: depth-first over the trie, literal > typed > untyped > catch-all at each segment,
/// backtracking when a branch dead-ends. Each trie node is visited at most once per lookup,
/// so the cost is bounded by the trie, never exponential.
extension RouteTrie {
    /// What a lookup found.
    struct Found {
        var route: Int32
        /// Captured values, in pattern order.
        var captures: [any Sendable]
    }

    /// Finds the route for `scan`'s segments that `origin` may call. `forbidden` becomes true
    /// when a route matched but its action is local-only and the call is remote.
    func resolve(
        _ scan: URLScanner.Scan, bytes: UnsafeBufferPointer<UInt8>, origin: CallOrigin, forbidden: inout Bool
    ) -> Found? {
        guard let root = roots[scan.scheme] else { return nil }
        var captures: [any Sendable] = []
        captures.reserveCapacity(4)
        var state = MatchState(scan: scan, bytes: bytes, origin: origin, forbidden: false)
        let route = match(root, 0, &captures, &state)
        forbidden = state.forbidden
        return route >= 0 ? Found(route: route, captures: captures) : nil
    }

    private struct MatchState {
        let scan: URLScanner.Scan
        let bytes: UnsafeBufferPointer<UInt8>
        let origin: CallOrigin
        var forbidden: Bool
    }

    private func allowed(_ route: Int32, _ state: inout MatchState) -> Bool {
        if routes[Int(route)].entry.access.allows(state.origin) { return true }
        state.forbidden = true
        return false
    }

    private func match(_ nodeIndex: Int32, _ position: Int, _ captures: inout [any Sendable], _ state: inout MatchState) -> Int32 {
        let node = nodes[Int(nodeIndex)]
        let segments = state.scan.segments
        if position == segments.count {
            if node.route >= 0, allowed(node.route, &state) { return node.route }
            return -1
        }
        let value = segments[position].value
        if let child = node.literals[value] {
            let found = match(child, position + 1, &captures, &state)
            if found >= 0 { return found }
        }
        for edge in node.typed {
            guard let converted = edge.converter.convert(value) else { continue }
            captures.append(converted)
            let found = match(edge.child, position + 1, &captures, &state)
            if found >= 0 { return found }
            captures.removeLast()
        }
        if node.untyped >= 0 {
            captures.append(value)
            let found = match(node.untyped, position + 1, &captures, &state)
            if found >= 0 { return found }
            captures.removeLast()
        }
        if node.catchAll >= 0, allowed(node.catchAll, &state) {
            let start = segments[position].rawStart
            let end = max(start, state.scan.pathEnd)
            captures.append(URLScanner.decodeLenient(state.bytes, start, end))
            return node.catchAll
        }
        return -1
    }
}
