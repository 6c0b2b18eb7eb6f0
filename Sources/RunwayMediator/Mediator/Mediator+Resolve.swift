extension Mediator {
    /// Resolves a URL string to an action and its typed parameters, without calling anything.
    ///
    /// Only the scheme, host and path take part in matching; the query is read once a route
    /// matches. So a URL whose scheme, host or path cannot be read throws `.malformedURL`; a URL
    /// that matches no route gives `nil` whatever its query holds (`app://nowhere/x?q=%ZZ`); a
    /// URL that matches a route but whose query cannot be read throws `.malformedURL`.
    /// ``canOpen(url:)`` and ``perform(url:origin:)`` follow the same rule.
    ///
    /// - Returns: The match, or `nil` when no route matches.
    /// - Throws: `.malformedURL` for input that is not a mediator URL (or a matched URL whose query
    ///   cannot be read); `.remoteCallForbidden` when only local-only actions match and `origin`
    ///   is `.remote`.
    public func resolve(_ url: String, origin: CallOrigin = .remote) throws -> RouteMatch? {
        try resolve(bytes: Array(url.utf8), url: url, origin: origin)
    }

    /// Whether a remote call to `url` would reach an action (the fallback does not count).
    ///
    /// `false` whenever ``resolve(_:origin:)`` returns `nil` or throws: for a URL that matches no
    /// route (whatever its query holds), a malformed URL, a matched URL whose query cannot be
    /// read, and a local-only action.
    public func canOpen(url: String) -> Bool {
        ((try? resolve(url, origin: .remote)) ?? nil) != nil
    }

    /// What the unmatched handler and the fallback get for a URL that ``resolve(_:origin:)``
    /// found no route for: its host, and its query items, or none when the query cannot be read
    /// (it took no part in matching, so it does not make the URL malformed).
    func unmatchedRequest(url: String, origin: CallOrigin) throws -> UnmatchedRequest {
        let bytes = Array(url.utf8)
        let scan = try URLScanner.scan(bytes, options: storage.urlOptions)
        return unmatchedRequest(url: url, bytes: bytes, scan: scan, origin: origin)
    }

    /// The unmatched request of a URL that is well formed but not a mediator URL: it holds user
    /// info, a port or an IP literal (`https://example.com:8443/x`), so no route can match it;
    /// `nil` for any other URL. Its target is the host without them.
    func foreignUnmatchedRequest(url: String, origin: CallOrigin) -> UnmatchedRequest? {
        let bytes = Array(url.utf8)
        guard let scan = try? URLScanner.scan(bytes, options: storage.urlOptions, foreignAuthority: true), scan.hasForeignAuthority
        else { return nil }
        return unmatchedRequest(url: url, bytes: bytes, scan: scan, origin: origin)
    }

    private func unmatchedRequest(url: String, bytes: [UInt8], scan: URLScanner.Scan, origin: CallOrigin) -> UnmatchedRequest {
        let options = storage.urlOptions
        var query = MediatorParameters()
        do { try query.addQueryItems(of: scan, in: bytes, options: options) } catch { query = MediatorParameters() }
        return UnmatchedRequest(url: url, target: scan.segments.first?.value, action: nil, parameters: query, origin: origin)
    }

    /// Scans `url` and matches it; the query is read only when a route matches.
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
