import PropertyBased
import Testing

@testable import RunwayMediator

/// Remote calls can never reach a local-only action, whatever the URL.
@Suite("Remote-call policy (property-based)")
struct RemotePolicyPropertyTests {
    /// Local-only actions on every kind of route (literal, typed, untyped, catch-all, implicit),
    /// next to remote ones, with a fallback and a login gate in the chain; each local-only action
    /// reached is written to `reached`. (A log of each test's own: the control test below reaches
    /// local-only actions on purpose, at the same time as the property runs.)
    static func mediator(reached: Log = Log()) throws -> Mediator {
        var builder = Mediator.Builder()
        for target in ["listing", "account", "admin"] {
            try builder.register(targetNamed: target) { actions in
                let local: MediatorActions<AdHocTarget>.Handler = { _, call in
                    reached.append("\(call.target)/\(call.action)")
                    return "local"
                }
                actions.action("secret", routes: ["app://\(target)/secret/<int:id>", "app://\(target)/s/<path:rest>"], local)
                actions.action("wipe", routes: ["app://\(target)/<name>/wipe"], local)
                actions.action("native", local)
                actions.action("open", access: .remote, routes: ["app://\(target)/<int:id>", "app://\(target)/<name>/view"]) { _, _ in
                    "remote"
                }
                actions.action("gated", access: .remote, tags: [LoginGate.requiresLogin]) { _, _ in "gated" }
                actions.action("notFound", access: .remote) { _, _ in "fallback" }
            }
        }
        try builder.register(targetNamed: "local-everything") { actions in
            actions.action("all", routes: ["app://<path:rest>"]) { _, call in
                reached.append("catch-all")
                return "local"
            }
        }
        builder.setFallback(target: "account", action: "notFound")
        builder.add(.loginGate(loginTarget: "admin", loginAction: "native") { false })
        return try builder.build()
    }

    static let piece = Gen<String?>.element(of: [
        "listing", "account", "admin", "local-everything", "secret", "wipe", "native", "open", "gated", "s", "view",
        "42", "-1", "x", "%2F", "%73ecret", "SECRET", "Native", "..", ".", "%00", "é", "%C3%A9", "*", "**", "<int:id>",
    ]).map { $0 ?? "" }
    static let scheme = Gen<String?>.element(of: ["app", "APP", "App", "other"]).map { $0 ?? "" }
    static let separator = Gen<String?>.element(of: ["/", "/", "/", "//", "/%2F"]).map { $0 ?? "" }
    static let query = Gen<String?>.element(of: ["", "?id=1", "?action=native&target=admin", "?x=app://admin/native", "#native", "/"]).map {
        $0 ?? ""
    }

    @Test func remoteURLsNeverReachLocalOnlyActions() async throws {
        let reached = Log()
        let mediator = try Self.mediator(reached: reached)
        let path = Self.piece.array(of: 1...6)
        let seps = Self.separator.array(of: 6)
        await propertyCheck(count: 2000, input: Self.scheme, path, seps, Self.query) { scheme, pieces, separators, query in
            // (Shrinking may hand over shorter arrays than generated: index defensively.)
            var url = scheme + "://" + (pieces.first ?? "listing")
            for (index, piece) in pieces.dropFirst().enumerated() {
                url += (separators.isEmpty ? "/" : separators[index % separators.count]) + piece
            }
            url += query
            if let match = try? mediator.resolve(url) {
                #expect(match.access == .remote, "\(url) resolved to local-only \(match.target)/\(match.action)")
            }
            if mediator.canOpen(url: url) {
                #expect((try? mediator.resolve(url))??.access == .remote)
            }
            let before = reached.all.count
            _ = try? await mediator.perform(url: url)
            #expect(reached.all.count == before, "\(url) reached a local-only action: \(reached.all.suffix(1))")
        }
    }

    @Test func theSameURLsFromInsideTheAppDoReachLocalOnlyActions() async throws {
        // The control for the property above: the generator does produce URLs that hit local-only actions.
        let mediator = try Self.mediator()
        for url in ["app://admin/secret/42", "app://listing/s/a/b", "app://account/x/wipe", "app://admin/native", "app://zzz/q"] {
            await #expect(throws: MediatorError.self) { try await mediator.perform(url: url, origin: .remote) }
            #expect(try await mediator.perform(url: url, origin: .local, as: String.self) == "local")
        }
    }
}
