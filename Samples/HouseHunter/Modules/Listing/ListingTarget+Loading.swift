import HouseHunterScreen
import ListingInterface
import Runway
import RunwayMediator

extension ListingTarget {
    /// The first page of every kind in `kinds`, loaded at once; progress is reported per list.
    func list(kinds: [ListingKind], city: String, mediator: Mediator?) async throws -> Screen {
        ScreenProgress.report("loading \(kinds.count) list\(kinds.count == 1 ? "" : "s")", done: 0, of: kinds.count)
        var sections: [ListingSection] = []
        await withTaskGroup(of: ListingSection.self) { group in
            for kind in kinds {
                group.addTask {
                    let pager = state.pager(kind, city: city)
                    pager.resetPages()
                    return await ListingSection.load(pager, city: city)
                }
            }
            for await section in group {
                sections.append(section)
                let outcome = section.error == nil ? "loaded" : "failed"
                ScreenProgress.report("\(section.kind.label) list \(outcome)", done: sections.count, of: kinds.count)
            }
        }
        sections.sort { kinds.firstIndex(of: $0.kind) ?? 0 < kinds.firstIndex(of: $1.kind) ?? 0 }
        if let error = sections.first?.error, sections.allSatisfy({ $0.error != nil }) { throw error }
        let what = kinds.count == 1 ? "\(kinds[0].label.capitalized) homes" : "Homes"
        return ListingScreen.make(title: "\(what) in \(ListingCity.name(city))", sections: sections, city: city, mediator: mediator)
    }

    /// The next page of the `kind` list in `city`.
    func more(_ kind: ListingKind, city: String, mediator: Mediator?) async throws -> Screen {
        let pager = state.pager(kind, city: city)
        let title = "\(kind.label.capitalized) homes in \(ListingCity.name(city))"
        if pager.isLastPage {
            return Screen(title: title, blocks: [.text("That was the last page (page \(pager.currentPage ?? 0)).")])
        }
        let section = await ListingSection.load(pager, city: city)
        if let error = section.error { throw error }
        return ListingScreen.make(title: title, sections: [section], city: city, mediator: mediator)
    }

    /// The `kind` list in `city` up to `maxPrice`; cancelled when a newer filter comes.
    func filter(_ kind: ListingKind, city: String, maxPrice: Int, mediator: Mediator?) async throws -> Screen {
        let manager = state.filter(kind)
        let source = manager.source
        let title = "\(kind.label.capitalized) homes in \(ListingCity.name(city)) up to \(Money.cny(maxPrice))"
        do {
            try await manager.load(params: [
                source.cityParameter: .string(city), source.maxPriceParameter: .int(Int64(maxPrice)),
                source.pageParameter: 1, source.pageSizeParameter: 10,
            ])
        } catch {
            guard error.code == .cancelled else { throw error }
            return Screen(kind: .cancelled, title: title, blocks: [.text("Not shown: \(error.message).")])
        }
        let rows = try manager.fetchData(with: ListingRowReformer())
        let facts = manager.lastResponse.map { ResponseFacts(source: kind.label, response: $0) }
        let section = ListingSection(kind: kind, rows: rows, page: nil, isLastPage: true, facts: facts, error: nil)
        return ListingScreen.make(title: title, sections: [section], city: city, mediator: mediator)
    }
}

/// City codes the sample knows by name.
enum ListingCity {
    static func name(_ code: String) -> String {
        ["sh": "Shanghai", "bj": "Beijing", "gz": "Guangzhou"][code] ?? code
    }
}
