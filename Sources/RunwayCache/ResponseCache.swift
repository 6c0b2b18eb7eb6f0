#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Cache  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif

/// The response store behind ``CacheInterceptor``: per-API policies, a memory LRU and an
/// optional SQLite file, and invalidation.
///
/// Create one at start-up, register its interceptor, and keep it to invalidate entries:
/// ```swift
/// let cache = try ResponseCache(
///     environment: "production",
///     policies: ["listing.detail": .memoryAndDisk(), "account.balance": .never],
///     diskFile: cachesDirectory.appending(path: "runway-cache.sqlite"))
/// let pipeline = Pipeline(dispatcher: CurlDispatcher()) {
///     cache.interceptor
/// }
/// await cache.invalidate(api: "listing.detail")
/// ```
/// Lookups go memory → disk → network. Only 2xx responses received in memory (not downloads)
/// are stored, and not a `206 Partial Content` (a range of the resource, not the resource: the
/// key has no `Range`), nor when they say `Cache-Control: no-store` or `Vary: *`, set a
/// cookie (`Set-Cookie`: a session's, never replayed to another call), or are an error by their
/// service's reading (`Service.error(for:json:)`: a business error sent with status 200; the
/// service is the one the call's `RequestContext.service` names, set for every call through a
/// `ServiceRegistry`). A response whose `Vary` names request header fields answers only a
/// request that sends the same values for them as the one it answered did. Other
/// `Cache-Control` directives are not consulted: the policy of the API decides (a stale
/// entry's `ETag` or `Last-Modified` is used to ask the server whether it is still current, see
/// ``CacheInterceptor``). Safe to share between tasks.
///
/// ## Whose response
/// Entries are kept apart per caller: a request's credential headers (when set before the
/// cache: `Authorization`, `Proxy-Authorization`, `Cookie`, and any header whose name says key,
/// token, secret, session, credential or auth, such as `X-Api-Key`), the request's client
/// certificate (`TLSOptions.clientCertificate`) and the call's
/// `RequestContext.credentialScope` (set from a service's
/// `TokenAuthenticator`, whose token is added after the cache) are part of the key, so one
/// user's cached data never answers another's call. Call ``invalidateAll()`` at logout to drop
/// a user's entries at once (entries of other scopes are otherwise only unreachable).
public final class ResponseCache: Sendable {
    /// Bounds on what the cache holds.
    public struct Limits: Sendable {
        /// The most entries held in memory.
        public var memoryEntries: Int
        /// The most bytes held in memory (bodies, headers and bookkeeping).
        public var memoryBytes: Int
        /// The most bytes held on disk.
        public var diskBytes: Int

        /// Creates limits; the defaults are 512 entries and 8 MiB in memory, 64 MiB on disk.
        public init(memoryEntries: Int = 512, memoryBytes: Int = 8 << 20, diskBytes: Int = 64 << 20) {
            self.memoryEntries = memoryEntries
            self.memoryBytes = memoryBytes
            self.diskBytes = diskBytes
        }
    }

    /// Part of every key, so staging and production never share entries.
    public let environment: String
    /// The policy per API name.
    public let policies: [String: CachePolicy]
    /// The policy of APIs not listed in ``policies``.
    public let defaultPolicy: CachePolicy
    /// The limits.
    public let limits: Limits

    let memory: MemoryCache
    let disk: DiskCache?
    let clock: @Sendable () -> Double
    /// Keys whose background refresh is running, with the calls answered from the cache
    /// meanwhile that wait for its outcome.
    private let refreshing = Locked<[CacheKey: [RefreshWaiter]]>([:])
    /// How many invalidations have begun, and how many are still removing entries: a response
    /// fetched before one is not stored after it (``store(_:for:key:api:policy:service:fetchedAt:)``),
    /// nor a disk entry read before or during one copied to memory (``lookup(_:policy:)``), so an
    /// invalidation is never undone by a call that was in flight.
    private let invalidations = Locked<(begun: UInt64, running: Int)>((0, 0))

    /// Creates the cache, opening (or rebuilding) the disk file if one is given.
    /// - Parameters:
    ///   - environment: Staging, production...; part of every key.
    ///   - policies: The policy per API name; APIs not listed get `defaultPolicy`.
    ///   - defaultPolicy: `.never` unless you want every API cached (its `GET` and `HEAD` calls:
    ///     a `POST` is cached only under a policy named for its API).
    ///   - diskFile: The SQLite file; required when a policy uses the disk.
    ///   - limits: Memory and disk bounds.
    /// - Throws: `RunwayError` `.configuration` for a non-positive TTL or limit, an empty API
    ///   name, a disk policy without a `diskFile`, or a file that cannot be opened or created.
    public convenience init(
        environment: String = "production", policies: [String: CachePolicy], defaultPolicy: CachePolicy = .never,
        diskFile: URL? = nil, limits: Limits = Limits()
    ) throws(RunwayError) {
        try self.init(
            environment: environment, policies: policies, defaultPolicy: defaultPolicy, diskFile: diskFile, limits: limits,
            clock: { Date().timeIntervalSince1970 })
    }

    /// Creates the cache with a clock (seconds since 1970), for tests.
    init(
        environment: String, policies: [String: CachePolicy], defaultPolicy: CachePolicy, diskFile: URL?, limits: Limits,
        clock: @escaping @Sendable () -> Double
    ) throws(RunwayError) {
        if policies.keys.contains(where: \.isEmpty) {
            throw RunwayError(.configuration, "a cache policy is registered for an empty API name")
        }
        for (api, policy) in policies { try policy.check(api) }
        try defaultPolicy.check("default")
        guard limits.memoryEntries > 0, limits.memoryBytes > 0, limits.diskBytes > 0 else {
            throw RunwayError(.configuration, "cache limits must be positive")
        }
        let usesDisk = ([defaultPolicy] + policies.values).contains { $0.storage.contains(.disk) }
        if usesDisk && diskFile == nil {
            throw RunwayError(.configuration, "a cache policy uses the disk but no diskFile was given")
        }
        self.environment = environment
        self.policies = policies
        self.defaultPolicy = defaultPolicy
        self.limits = limits
        self.clock = clock
        memory = MemoryCache(maxEntries: limits.memoryEntries, maxBytes: limits.memoryBytes)
        disk = try diskFile.map { url throws(RunwayError) in try DiskCache(file: url, maxBytes: limits.diskBytes) }
    }

    /// The interceptor that answers from and fills this cache.
    public var interceptor: CacheInterceptor { CacheInterceptor(cache: self) }

    /// The policy for a call: the context's ``CachePolicy/Key`` if set, else the API's.
    public func policy(for context: RequestContext) -> CachePolicy {
        context[CachePolicy.Key.self] ?? context.apiName.flatMap { policies[$0] } ?? defaultPolicy
    }

    /// Whether a call of `method` may be answered from the cache and stored at all: a `GET` or a
    /// `HEAD` under any policy; a `POST` (an API that reads through a POST, a search form) only
    /// under a policy named for its API in ``policies`` or set for the call, never under
    /// ``defaultPolicy`` alone; any other method (`PUT`, `PATCH`, `DELETE`, ...) never: it
    /// changes what the server holds, and must reach the server every time.
    func caches(_ method: HTTPMethod, context: RequestContext) -> Bool {
        switch method {
        case .get, .head: true
        case .post: context[CachePolicy.Key.self] != nil || context.apiName.map { policies[$0] != nil } == true
        default: false
        }
    }

    /// The key `request` is cached under: its service, API, method, URL, canonical parameters
    /// and body, and whose it is (see "Whose response").
    public func key(for request: Request, context: RequestContext) -> CacheKey {
        var credentials: [String] = []
        for field in request.headers where Self.isCredential(field.name) {
            credentials.append(field.name.lowercased() + ":" + field.value)
        }
        if let certificate = request.options.tls.clientCertificate {
            credentials.append("tls-client-certificate:" + Self.identity(of: certificate))
        }
        guard !credentials.isEmpty else {
            return CacheKey(request, context: context, environment: environment, credentials: context.credentialScope)
        }
        credentials.sort()
        credentials.insert(context.credentialScope ?? "", at: 0)
        return CacheKey(request, context: context, environment: environment, credentials: credentials.joined(separator: "\u{1}"))
    }

    /// A header that says who calls: `Authorization`, `Proxy-Authorization`, `Cookie`, or a name
    /// that says key, token, secret, session, credential or auth (`X-Api-Key`,
    /// `X-Goog-Api-Key`, `Ocp-Apim-Subscription-Key`). `Idempotency-Key` says which call, not
    /// whose.
    static func isCredential(_ name: String) -> Bool {
        // Without lower-casing copies: this runs for every header of every cached call.
        guard !name.caseInsensitiveEquals("idempotency-key") else { return false }
        return name.caseInsensitiveEquals("cookie") || credentialFragments.contains { name.containsIgnoringCase(lowercased: $0) }
    }

    /// What tells one client certificate from another in a key, the same in every process:
    /// its files' paths, or the SHA-256 of its bytes.
    static func identity(of certificate: ClientCertificate) -> String {
        if let data = certificate.certificateData { return Data(SHA256.hash(data: data)).base64EncodedString() }
        return certificate.filePaths.joined(separator: "\u{0}")
    }

    private static let credentialFragments = ["auth", "key", "token", "secret", "session", "credential"]

    /// Claims the background refresh of `key` for a call answered from the cache: `false` when
    /// one is already running (a burst of hits on a stale entry starts one refresh, not one per
    /// hit), and then `waiter`, if any, is told of that refresh's outcome.
    func beginRefresh(_ key: CacheKey, for waiter: RefreshWaiter?) -> Bool {
        refreshing.withLock { refreshing in
            if refreshing[key] != nil {
                if let waiter { refreshing[key]?.append(waiter) }
                return false
            }
            refreshing[key] = waiter.map { [$0] } ?? []
            return true
        }
    }

    /// The background refresh of `key` ended: the calls waiting for its outcome.
    func endRefresh(_ key: CacheKey) -> [RefreshWaiter] {
        refreshing.withLock { $0.removeValue(forKey: key) ?? [] }
    }

    /// The error `response` stands for by the reading of the service that sent it (the call's
    /// `RequestContext.service`, whose mapping catches a business error that came with status
    /// 200), or without a service by its status: 401 is `.needsLogin`, 400 or more
    /// `.serverError`, another status that is no 2xx `.responseInvalid`. `nil` for a success.
    static func error(in response: Response, service: (any Service)?) -> RunwayError? {
        if let service {
            let json = response.body.isEmpty ? nil : try? JSON(parsing: response.body)
            return service.error(for: response, json: json).map { RunwayError.attributing($0, to: .service(service.id)) }
        }
        switch response.status {
        case 200..<300: return nil
        case 401: return RunwayError(.needsLogin, "HTTP 401", response: response)
        case 400...: return RunwayError(.serverError, "HTTP \(response.status)", response: response)
        default: return RunwayError(.responseInvalid, "HTTP \(response.status), not a success", response: response)
        }
    }

    /// The cached entry for `key` where `policy` keeps entries: memory first, then disk (a disk
    /// hit is copied to memory when the policy uses memory).
    ///
    /// An invalidation empties memory before the disk: a disk hit read while one runs, or copied
    /// to memory after one began, is not left in memory, where it would outlive the removal.
    func lookup(_ key: CacheKey, policy: CachePolicy) -> (CacheEntry, ResponseOrigin)? {
        if policy.storage.contains(.memory), let entry = memory.get(key) {
            return (entry, .memoryCache)
        }
        let before = invalidations.withLock { $0 }
        if policy.storage.contains(.disk), let disk, let entry = disk.get(key) {
            if policy.storage.contains(.memory), before.running == 0 {
                memory.set(key, entry)
                if invalidationMark != before.begun { memory.remove(key) }
            }
            return (entry, .diskCache)
        }
        return nil
    }

    /// Whether any `Cache-Control` field of `response` says `no-store`: a field may be repeated,
    /// and its lines mean what one line of them joined by commas would (RFC 9110 §5.3).
    static func saysNoStore(_ response: Response) -> Bool {
        response.headers.contains { field in
            field.name.caseInsensitiveEquals("Cache-Control") && field.value.lowercased().contains("no-store")
        }
    }

    /// Where the invalidations stand as a request goes out: give it to
    /// ``store(_:for:key:api:policy:service:fetchedAt:)`` with the response.
    var invalidationMark: UInt64 { invalidations.withLock { $0.begun } }

    /// Stores a network response under `key` if it may be cached, unless an invalidation came
    /// after `mark` (``invalidationMark`` as the request went out): its data may be what was
    /// invalidated. Any invalidation counts, of any API: a response not stored is only a miss.
    func store(
        _ response: Response, for request: Request, key: CacheKey, api: String, policy: CachePolicy, service: (any Service)?,
        fetchedAt mark: UInt64
    ) async {
        // A 206 holds part of the resource; a later call without (or with another) `Range` has the same key.
        guard response.isSuccess, response.status != 206, response.fileURL == nil, !Self.saysNoStore(response),
            response.headers["Set-Cookie"] == nil, !CacheVary.isUnmatchable(response.headers),
            Self.error(in: response, service: service) == nil, invalidationMark == mark
        else { return }
        let now = clock()
        let entry = CacheEntry(
            api: api, resource: Self.resource(of: request.url), status: response.status, headers: response.headers,
            body: response.body, storedAt: now,
            expiresAt: now + Double(policy.ttl.components.seconds) + Double(policy.ttl.components.attoseconds) / 1e18,
            selecting: CacheVary.selecting(request, responseHeaders: response.headers))
        if policy.storage.contains(.memory) { memory.set(key, entry) }
        if policy.storage.contains(.disk), let disk { await disk.set(key, entry, now: now) }
        // An invalidation that began while this was being stored may have run before it: undone.
        if invalidationMark != mark {
            memory.remove(key)
            await disk?.remove(key)
        }
    }

    /// Removes the entry for one key, from memory and disk (when the disk cannot, see ``invalidateAll()``).
    public func invalidate(_ key: CacheKey) async {
        await invalidating {
            memory.remove(key)
            await disk?.remove(key)
        }
    }

    /// Removes every entry of one API, and keeps out responses to its calls in flight (when the
    /// disk cannot remove them, see ``invalidateAll()``).
    public func invalidate(api: String) async {
        await invalidating {
            memory.removeAll(api: api)
            await disk?.removeAll(api: api)
        }
    }

    /// Removes every entry of the resource `url` names, whatever API, method or caller it
    /// answered, and keeps out responses to calls in flight (when the disk cannot remove them,
    /// see ``invalidateAll()``).
    ///
    /// The ``CacheInterceptor`` does this for every write that passes it (RFC 9111 §4.4). Call it
    /// for a write the pipeline does not see. A URL names the same resource as another when they
    /// differ only in the case of the scheme and host, a fragment, or the order of different
    /// query parameters.
    public func invalidate(url: URL) async {
        await invalidate(resources: [Self.resource(of: url)])
    }

    func invalidate(resources: Set<String>) async {
        await invalidating {
            memory.removeAll(resources: resources)
            await disk?.removeAll(resources: resources)
        }
    }

    /// Runs `removal` as an invalidation: counted as begun before it, and as running until it ends.
    private func invalidating(_ removal: () async -> Void) async {
        invalidations.withLock {
            $0.begun &+= 1
            $0.running += 1
        }
        await removal()
        invalidations.withLock { $0.running -= 1 }
    }

    /// What identifies the resource `url` names among entries: the URL without its fragment,
    /// its scheme and authority in lower case, and its query in canonical order
    /// (`RequestParameters.canonicalForm`).
    static func resource(of url: URL) -> String {
        var text = Substring(url.absoluteString)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        var query: Substring = ""
        if let mark = text.firstIndex(of: "?") {
            query = text[text.index(after: mark)...]
            text = text[..<mark]
        }
        // The scheme and authority: up to the first "/" after "://".
        var origin = text.endIndex
        if let separator = text.firstRange(of: "://") {
            origin = text[separator.upperBound...].firstIndex(of: "/") ?? text.endIndex
        }
        var resource = text[..<origin].lowercased() + text[origin...]
        if !query.isEmpty {
            resource += "?"
            resource += RequestParameters.canonicalForm(percentEncodedQuery: query)
        }
        return resource
    }

    /// The resources a write that `response` answered may have changed: its URL's, and those its
    /// `Location` and `Content-Location` name on the same origin (RFC 9111 §4.4; another
    /// origin's are not, so a server cannot empty another's entries).
    static func resources(writtenBy request: Request, response: Response?) -> Set<String> {
        var resources: Set<String> = [resource(of: request.url)]
        for name in ["Location", "Content-Location"] {
            guard let value = response?.headers[name], let named = URL(string: value, relativeTo: request.url)?.absoluteURL,
                isSameOrigin(named, request.url)
            else { continue }
            resources.insert(resource(of: named))
        }
        return resources
    }

    private static func isSameOrigin(_ one: URL, _ other: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int?)? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
            return (scheme, host, port)
        }
        guard let one = origin(one), let other = origin(other) else { return false }
        return one == other
    }

    /// Removes every entry, and keeps out responses to calls in flight.
    ///
    /// An invalidation never leaves what it removes answering. When another process holds the
    /// file's lock past 5 seconds, disk lookups miss until the removal, tried again in the
    /// background, is carried out (after about a minute, as below). When the disk cannot delete
    /// the entries otherwise (the disk full, a file the process may not write), the whole file
    /// is replaced by an empty one (counted in ``Statistics/diskRebuilds``); when not even that
    /// can be done (a directory it may not write), the disk layer is off until the cache is
    /// made again.
    public func invalidateAll() async {
        await invalidating {
            memory.removeAll()
            await disk?.removeAll()
        }
    }

    /// What the cache holds now.
    public var statistics: Statistics {
        let usage = disk?.usage() ?? (entries: 0, bytes: 0)
        return Statistics(
            memoryEntries: memory.count, memoryBytes: memory.bytes, diskEntries: usage.entries, diskBytes: usage.bytes,
            diskRebuilds: disk?.rebuildCount ?? 0)
    }

    /// A call answered from the cache under cache-then-network: its observer, and the response
    /// it was given (a refresh is `.unchanged` when it brings the same).
    struct RefreshWaiter: Sendable {
        let observer: CacheRefreshObserver
        let served: Response
    }

    /// A snapshot of the cache's size.
    public struct Statistics: Sendable, Equatable {
        /// Entries in memory.
        public var memoryEntries: Int
        /// Bytes in memory.
        public var memoryBytes: Int
        /// Entries on disk.
        public var diskEntries: Int
        /// Bytes on disk (as counted against the limit).
        public var diskBytes: Int
        /// How many times the database file was rebuilt empty: found corrupt (moved aside), or
        /// replaced because an invalidation could not remove entries from it.
        public var diskRebuilds: Int
    }
}

#endif
