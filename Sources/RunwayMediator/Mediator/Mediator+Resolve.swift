extension Mediator {
    /// Resolves a URL string to an action and its typed parameters, without calling anything.
    ///
    /// - Returns: The match, or `nil` when no route matches.
    /// - Throws: `.malformedURL` for input that is not a mediator URL;
    ///   `.remoteCallForbidden` when only local-only actions match and `origin` is `.remote`.
    public func resolve(_ url: String, origin: CallOrigin = .remote) throws -> RouteMatch? {
        try resolve(bytes: Array(url.utf8), url: url, origin: origin)
    }

    /// Whether a remote call to `url` would reach an action (the fallback does not count).
    public func canOpen(url: String) -> Bool {
        ((try? resolve(url, origin: .remote)) ?? nil) != nil
    }

    private func resolve(bytes: [UInt8], url: String, origin: CallOrigin) throws -> RouteMatch? {
        let options = storage.urlOptions
        let scan: URLScanner.Scan
        do { scan = try URLScanner.scan(bytes, options: options) } catch var error as MediatorError {
            error.url = url
            throw error
        }
        var forbidden = false
        guard let found = storage.trie.resolve(scan, bytes: bytes, origin: origin, forbidden: &forbidden) else {
            if forbidden {
                throw MediatorError(
                    .remoteCallForbidden, "a remote call may not reach a local-only action", url: url,
                    target: scan.segments.first?.value)
            }
            return nil
        }
        let route = found.route
        var parameters = MediatorParameters(reserving: found.captures.count + 2)
        for (name, value) in zip(route.captureNames, found.captures) {
            if let name { parameters.appendUnchecked(name, value) }
        }
        do {
            try parameters.addQueryItems(of: scan, in: bytes, options: options)
        } catch var error as MediatorError {
            error.url = url
            throw error
        }
        let fragment =
            scan.fragmentStart < bytes.count ? URLScanner.decodeLenient(bytes, scan.fragmentStart, bytes.count) : nil
        return RouteMatch(
            target: route.entry.target, action: route.entry.name, parameters: parameters, pattern: route.pattern,
            access: route.entry.access, fragment: fragment, entry: route.entry)
    }
}
