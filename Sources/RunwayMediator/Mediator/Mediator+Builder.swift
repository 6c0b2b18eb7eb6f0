extension Mediator {
    /// Collects targets, converters, interceptors and modules at start-up; ``build()`` validates
    /// everything and freezes it into a ``Mediator``.
    ///
    /// Duplicates and conflicts are errors naming both declarations: a target name registered
    /// twice (at ``register(_:source:fileID:line:)``), an action declared twice, two routes with
    /// the same ``RoutePattern/shape`` (at ``build()``).
    public struct Builder: Sendable {
        /// The scheme of implicit routes (`scheme://target/action`).
        public var defaultScheme: String
        /// Whether every action also gets the implicit route `defaultScheme://target/action`.
        public var implicitRoutes: Bool
        /// How URLs are read.
        public var urlOptions: MediatorURLOptions

        var targets: [String: TargetRecord] = [:]
        var converters: [String: RouteConverter] = RouteConverter.builtIns
        var converterSources: [String: String] = [:]
        var interceptors: [any RouteInterceptor] = []
        var fallback: (target: String, action: String)?
        var unmatchedHandler: (@Sendable (UnmatchedRequest) async throws -> (any Sendable)?)?
        var modules: [any MediatorModule] = []

        /// Creates an empty builder.
        public init(defaultScheme: String = "app", implicitRoutes: Bool = true, urlOptions: MediatorURLOptions = MediatorURLOptions()) {
            self.defaultScheme = defaultScheme.lowercased()
            self.implicitRoutes = implicitRoutes
            self.urlOptions = urlOptions
        }

        /// Registers a target type and the actions it declares.
        /// - Parameters:
        ///   - type: The target type.
        ///   - source: Where the registration comes from, for error messages; defaults to the
        ///     caller's file and line (generated code passes the declaring file).
        ///   - fileID: The caller's file, for `source`'s default.
        ///   - line: The caller's line, for `source`'s default.
        /// - Throws: `.duplicateTarget`, `.duplicateAction`, `.malformedPattern`, `.invalidRegistration`.
        public mutating func register<T: MediatorTarget>(
            _ type: T.Type, source: String? = nil, fileID: String = #fileID, line: Int = #line
        ) throws {
            var declared = MediatorActions<T>(targetName: T.name)
            T.declareActions(&declared)
            try add(
                name: T.name, typeName: String(reflecting: T.self), source: source ?? "\(fileID):\(line)", keeps: T.caching.keeps,
                make: { T() }, entries: declared.entries, errors: declared.errors)
        }

        /// Registers a target without a type of its own (tests, generated tables, closures):
        /// its actions receive an ``AdHocTarget``.
        public mutating func register(
            targetNamed name: String, source: String? = nil, fileID: String = #fileID, line: Int = #line,
            _ declare: (inout MediatorActions<AdHocTarget>) -> Void
        ) throws {
            var declared = MediatorActions<AdHocTarget>(targetName: name)
            declare(&declared)
            try add(
                name: name, typeName: "AdHocTarget(\(name))", source: source ?? "\(fileID):\(line)", keeps: false,
                make: { AdHocTarget() }, entries: declared.entries, errors: declared.errors)
        }

        private mutating func add(
            name rawName: String, typeName: String, source: String, keeps: Bool, make: @escaping @Sendable () -> any MediatorTarget,
            entries: [ActionEntry], errors: [MediatorError]
        ) throws {
            let name = rawName.lowercased()
            guard Self.isName(name) else {
                throw MediatorError(
                    .invalidRegistration, "target name '\(rawName)' \(Self.nameRule)", target: rawName,
                    sources: [source])
            }
            if let existing = targets[name] {
                throw MediatorError(
                    .duplicateTarget, "target '\(name)' is registered twice (\(existing.typeName) and \(typeName))", target: name,
                    sources: [existing.source, source])
            }
            if let error = errors.first { throw error }
            var actions: [String: ActionEntry] = [:]
            for entry in entries {
                guard Self.isName(entry.name) else {
                    throw MediatorError(
                        .invalidRegistration, "action name '\(entry.name)' \(Self.nameRule)", target: name,
                        action: entry.name, sources: [entry.source])
                }
                if let first = actions[entry.name] {
                    throw MediatorError(
                        .duplicateAction, "action '\(entry.name)' is declared twice in target '\(name)'", target: name,
                        action: entry.name, sources: [first.source, entry.source])
                }
                actions[entry.name] = entry
            }
            targets[name] = TargetRecord(name: name, typeName: typeName, source: source, keeps: keeps, make: make, actions: actions)
        }

        /// Registers a custom converter for `<name:placeholder>`; built-in names are reserved.
        public mutating func register(converter: RouteConverter, fileID: String = #fileID, line: Int = #line) throws {
            let source = "\(fileID):\(line)"
            guard RoutePattern.isIdentifier(converter.name), !RouteConverter.reservedNames.contains(converter.name) else {
                throw MediatorError(
                    .invalidRegistration, "converter name '\(converter.name)' is reserved or not an identifier", sources: [source])
            }
            if let existing = converterSources[converter.name] {
                throw MediatorError(.invalidRegistration, "converter '\(converter.name)' is registered twice", sources: [existing, source])
            }
            converters[converter.name] = converter
            converterSources[converter.name] = source
        }

        /// Appends a route interceptor; calls pass interceptors in the order they were added.
        public mutating func add(_ interceptor: any RouteInterceptor) {
            interceptors.append(interceptor)
        }

        /// Sets the action that handles calls nothing else matched; it must be remote-callable
        /// (remote URLs can end there) and gets the original request in ``MediatorCall/unmatched``.
        public mutating func setFallback(target: String, action: String) {
            fallback = (target.lowercased(), action)
        }

        /// Sets the handler for URLs that match no route; it runs before the fallback and ends
        /// the call when it returns a value (e.g. hands an `https` URL to a web view).
        public mutating func onUnmatchedURL(_ handler: @escaping @Sendable (UnmatchedRequest) async throws -> (any Sendable)?) {
            unmatchedHandler = handler
        }

        /// Adds a module: it registers its targets during ``build()`` and gets lifecycle events
        /// (``Mediator/start(configuration:)``) in dependency order.
        ///
        /// Add every module before ``build()``: the order is fixed before any module registers, so
        /// a module that adds another in its ``MediatorModule/register(into:)`` makes ``build()``
        /// throw `.invalidRegistration` rather than leave the other out.
        public mutating func add(module: any MediatorModule) {
            modules.append(module)
        }

        /// Validates everything and freezes it.
        /// - Throws: `.conflictingRoute` naming both routes, `.invalidRegistration` for unknown
        ///   converters, a missing or local-only fallback, module cycles and unknown dependencies,
        ///   and a module added by another module's ``MediatorModule/register(into:)``.
        public func build() throws -> Mediator {
            var builder = self
            let orderedModules = try ModuleOrder.sorted(modules)
            for module in orderedModules {
                try module.register(into: &builder)
                if builder.modules.count > modules.count {
                    let added = builder.modules[modules.count...].map { "'\($0.name)'" }.joined(separator: ", ")
                    throw MediatorError(
                        .invalidRegistration,
                        "module '\(module.name)' added module \(added) in register(into:), after the module order was fixed; "
                            + "add every module to the builder before build()")
                }
            }
            return try builder.freeze(modules: orderedModules)
        }

        private func freeze(modules: [any MediatorModule]) throws -> Mediator {
            guard urlOptions.maxLength > 0 else {
                throw MediatorError(
                    .invalidRegistration,
                    "urlOptions.maxLength is \(urlOptions.maxLength): no URL would be accepted; it must be at least 1",
                    field: "maxLength")
            }
            var trie = RouteTrie()
            var shapes: [String: (pattern: RoutePattern, source: String, entry: ActionEntry)] = [:]
            for targetName in targets.keys.sorted() {
                guard let record = targets[targetName] else { continue }
                for actionName in record.actions.keys.sorted() {
                    guard let entry = record.actions[actionName] else { continue }
                    var routes = entry.patterns.map { ($0, entry.source) }
                    if implicitRoutes {
                        routes.append(
                            (try RoutePattern("\(defaultScheme)://\(targetName)/\(actionName)"), entry.source + " (implicit route)"))
                    }
                    for (pattern, source) in routes {
                        for converter in pattern.converterNames where converters[converter] == nil {
                            throw MediatorError(
                                .invalidRegistration, "route '\(pattern)' uses unknown converter '\(converter)'", target: targetName,
                                action: actionName, sources: [source])
                        }
                        if let other = shapes[pattern.shape], other.entry === entry { continue }  // the same action twice
                        if let other = shapes[pattern.shape] {
                            throw MediatorError(
                                .conflictingRoute,
                                "routes '\(other.pattern)' (\(other.entry.target)/\(other.entry.name)) and '\(pattern)' "
                                    + "(\(targetName)/\(actionName)) match the same URLs",
                                target: targetName, action: actionName, sources: [other.source, source])
                        }
                        shapes[pattern.shape] = (pattern, source, entry)
                        trie.insert(pattern, entry: entry, source: source, converters: converters)
                    }
                }
            }
            if let fallback {
                guard let entry = targets[fallback.target]?.actions[fallback.action] else {
                    throw MediatorError(
                        .invalidRegistration, "the fallback \(fallback.target)/\(fallback.action) is not registered",
                        target: fallback.target, action: fallback.action)
                }
                guard entry.access == .remote else {
                    throw MediatorError(
                        .invalidRegistration,
                        "the fallback \(fallback.target)/\(fallback.action) must be remote-callable (remote URLs can end there)",
                        target: fallback.target, action: fallback.action, sources: [entry.source])
                }
            }
            let cache = TargetCache()
            let targets = self.targets
            var chain: Next = { call in try await Mediator.invoke(call, targets: targets, cache: cache) }
            for interceptor in interceptors.reversed() {
                let next = chain
                // An interceptor's own errors go to the caller as they are, like an action's.
                chain = { call in try await interceptor.intercept(call, next: next) }
            }
            return Mediator(
                storage: Storage(
                    targets: targets, trie: trie, converters: converters, chain: chain, interceptorNames: interceptors.map(\.name),
                    fallback: fallback,
                    unmatchedHandler: unmatchedHandler, urlOptions: urlOptions, defaultScheme: defaultScheme,
                    implicitRoutes: implicitRoutes, modules: modules, cache: cache))
        }

        /// What ``isName(_:)`` asks, as messages say it.
        package static let nameRule = "must be ASCII letters, digits, '-', '_' or '.', and not only dots"

        /// Whether `name` can name a target or an action (a URL's host or path segment, as written).
        package static func isName(_ name: String) -> Bool {
            // `.` and `..` as a URL's segment are what normalizers remove, with the one before.
            !name.isEmpty && !name.utf8.allSatisfy({ $0 == UInt8(ascii: ".") })
                && name.utf8.allSatisfy {
                    URLScanner.isLetter($0) || URLScanner.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                        || $0 == UInt8(ascii: ".")
                }
        }
    }
}
