import Testing

@testable import RunwayMediator

@Suite("Registration")
struct MediatorBuilderTests {
    struct OtherListing: MediatorTarget {
        static let name = "LISTING"
        static func declareActions(_ actions: inout MediatorActions<OtherListing>) {}
    }

    struct TwiceDeclared: MediatorTarget {
        static let name = "twice"
        static func declareActions(_ actions: inout MediatorActions<TwiceDeclared>) {
            actions.action("a") { _, _ in 1 }
            actions.action("a") { _, _ in 2 }
        }
    }

    struct BadPattern: MediatorTarget {
        static let name = "bad"
        static func declareActions(_ actions: inout MediatorActions<BadPattern>) {
            actions.action("a", routes: ["app://bad/<path:rest>/more"]) { _, _ in 1 }
        }
    }

    @Test func duplicateTargetNamesBothSources() throws {
        var builder = Mediator.Builder()
        try builder.register(ListingTarget.self, source: "Listing/ListingTarget.swift:3")
        do {
            try builder.register(OtherListing.self, source: "Other/OtherListing.swift:9")
            Issue.record("expected an error")
        } catch let error as MediatorError {
            #expect(error.code == .duplicateTarget)
            #expect(error.sources == ["Listing/ListingTarget.swift:3", "Other/OtherListing.swift:9"])
            #expect(error.description.contains("Listing/ListingTarget.swift:3 and Other/OtherListing.swift:9"))
        }
    }

    @Test func duplicateActionNamesBothDeclarations() throws {
        var builder = Mediator.Builder()
        do {
            try builder.register(TwiceDeclared.self)
            Issue.record("expected an error")
        } catch let error as MediatorError {
            #expect(error.code == .duplicateAction)
            #expect(error.sources.count == 2)
            #expect(error.sources.allSatisfy { $0.hasPrefix("RunwayMediatorTests/MediatorBuilderTests.swift:") })
            #expect(error.sources[0] != error.sources[1])
        }
    }

    @Test(arguments: [0, -1])
    func aMaximumURLLengthBelowOneIsRefusedAtBuild(_ maxLength: Int) {
        let builder = Mediator.Builder(urlOptions: MediatorURLOptions(maxLength: maxLength))
        #expect { try builder.build() } throws: {
            ($0 as? MediatorError)?.code == .invalidRegistration && ($0 as? MediatorError)?.field == "maxLength"
        }
    }

    @Test func malformedPatternIsReportedAtRegistration() {
        var builder = Mediator.Builder()
        #expect { try builder.register(BadPattern.self) } throws: { ($0 as? MediatorError)?.code == .malformedPattern }
    }

    @Test func conflictingRoutesAcrossTargetsNameBothSources() throws {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "a", source: "A/Routes.swift:1") { actions in
            actions.action("x", access: .remote, routes: ["app://user/<int:id>"]) { _, _ in 1 }
        }
        try builder.register(targetNamed: "b", source: "B/Routes.swift:1") { actions in
            actions.action("y", access: .remote, routes: ["APP://User/<int:userID>/"]) { _, _ in 2 }
        }
        do {
            _ = try builder.build()
            Issue.record("expected an error")
        } catch let error as MediatorError {
            #expect(error.code == .conflictingRoute)
            #expect(error.sources.count == 2)
            #expect(error.message.contains("a/x") && error.message.contains("b/y"))
        }
    }

    @Test func explicitPatternConflictsWithImplicitRoute() throws {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "shop") { actions in
            actions.action("cart", access: .remote) { _, _ in 1 }
            actions.action("other", access: .remote, routes: ["app://shop/cart"]) { _, _ in 2 }
        }
        #expect { try builder.build() } throws: {
            let error = $0 as? MediatorError
            return error?.code == .conflictingRoute && error?.sources.contains { $0.hasSuffix("(implicit route)") } == true
        }
    }

    @Test func differentPlaceholderKindsDoNotConflict() throws {
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "u") { actions in
            actions.action("a", routes: ["app://u/<int:id>"]) { _, _ in 1 }
            actions.action("b", routes: ["app://u/<name>"]) { _, _ in 1 }
            actions.action("c", routes: ["app://u/<path:rest>"]) { _, _ in 1 }
            actions.action("d", routes: ["app://u/me"]) { _, _ in 1 }
        }
        #expect(try builder.build().routes.count == 4)
    }

    @Test func wildcardAndNamedPlaceholderConflict() throws {
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "u") { actions in
            actions.action("a", routes: ["app://u/*"]) { _, _ in 1 }
            actions.action("b", routes: ["app://u/<string:name>"]) { _, _ in 1 }
        }
        #expect { try builder.build() } throws: { ($0 as? MediatorError)?.code == .conflictingRoute }
    }

    @Test func unknownConverterAndBadNamesAreRejected() throws {
        var unknown = Mediator.Builder()
        try unknown.register(targetNamed: "u") { actions in
            actions.action("a", routes: ["app://u/<slug:s>"]) { _, _ in 1 }
        }
        #expect { try unknown.build() } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }

        var names = Mediator.Builder()
        #expect { try names.register(targetNamed: "has space") { _ in } } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }
        #expect { try names.register(targetNamed: "ok") { $0.action("bad/name") { _, _ in 1 } } } throws: {
            ($0 as? MediatorError)?.code == .invalidRegistration
        }
        // `.` and `..` are what URL normalizers remove from a path, with the segment before.
        for dots in [".", ".."] {
            #expect { try names.register(targetNamed: "dots-\(dots.count)") { $0.action(dots) { _, _ in 1 } } } throws: {
                ($0 as? MediatorError)?.code == .invalidRegistration && "\($0)".contains("not only dots")
            }
            #expect { try names.register(targetNamed: dots) { _ in } } throws: { ($0 as? MediatorError)?.code == .invalidRegistration }
        }
        #expect(throws: Never.self) { try names.register(targetNamed: "a.b") { $0.action("...x") { _, _ in 1 } } }
        #expect { try names.register(converter: RouteConverter(name: "int") { $0 }) } throws: {
            ($0 as? MediatorError)?.code == .invalidRegistration
        }
    }

    @Test func routeTableListsEveryRouteSorted() throws {
        let mediator = try standardBuilder().build()
        let rows = mediator.routes.map { "\($0.pattern) \($0.target)/\($0.action) \($0.access)" }
        #expect(rows.contains("app://listing/<int:id> listing/detail remote"))
        #expect(rows.contains("app://listing/purge listing/purge local"))
        #expect(rows == rows.sorted())
        #expect(mediator.targetNames == ["account", "listing"])
    }
}
