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
        try lookUp(url, origin: origin).match
    }

    /// Whether a remote call to `url` would reach an action (the fallback does not count).
    ///
    /// `false` whenever ``resolve(_:origin:)`` returns `nil` or throws: for a URL that matches no
    /// route (whatever its query holds), a malformed URL, a matched URL whose query cannot be
    /// read, and a local-only action.
    public func canOpen(url: String) -> Bool {
        ((try? resolve(url, origin: .remote)) ?? nil) != nil
    }

    /// A URL looked up: its bytes and scan (what an unmatched request is made of) and the match.
    struct Lookup {
        let bytes: [UInt8]
        let scan: URLScanner.Scan
        let match: RouteMatch?

        /// The query items of a URL that matched nothing, or none when its query cannot be read
        /// (it took no part in matching, so it does not make the URL malformed).
        func unmatchedQuery(options: MediatorURLOptions) -> MediatorParameters {
            var query = MediatorParameters()
            do { try query.addQueryItems(of: scan, in: bytes, options: options) } catch { return MediatorParameters() }
            return query
        }
    }

    /// Scans `url` and matches it; the query is read only when a route matches.
    func lookUp(_ url: String, origin: CallOrigin) throws -> Lookup {
        let bytes = Array(url.utf8)
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
            return Lookup(bytes: bytes, scan: scan, match: nil)
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
        let match = RouteMatch(
            target: route.entry.target, action: route.entry.name, parameters: parameters, pattern: route.pattern,
            access: route.entry.access, fragment: fragment, entry: route.entry)
        return Lookup(bytes: bytes, scan: scan, match: match)
    }
}
