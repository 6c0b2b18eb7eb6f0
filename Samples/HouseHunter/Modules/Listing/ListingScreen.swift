import DetailInterface
import HouseHunterScreen
import ListingInterface
import Runway
import RunwayMediator

/// One kind's part of a list screen: its rows, or why there are none.
struct ListingSection: Sendable {
    let kind: ListingKind
    let rows: [ReformedRecord]
    let page: Int?
    let isLastPage: Bool
    let facts: ResponseFacts?
    let error: RunwayError?

    /// Loads the next page of `pager` for `city`.
    static func load(_ pager: ListingPagesAPIManager, city: String) async -> ListingSection {
        let kind = pager.source.kind
        do {
            try await pager.loadNextPage(params: [pager.source.cityParameter: .string(city)])
            let rows = try pager.fetchData(with: ListingRowReformer())
            let facts = pager.lastResponse.map { ResponseFacts(source: kind.label, response: $0) }
            return ListingSection(kind: kind, rows: rows, page: pager.currentPage, isLastPage: pager.isLastPage, facts: facts, error: nil)
        } catch {
            return ListingSection(kind: kind, rows: [], page: nil, isLastPage: true, facts: nil, error: error)
        }
    }
}

/// Builds list screens: one table for every kind's rows, what each list is at, how each request
/// was answered, and where to go next.
enum ListingScreen {
    static func make(title: String, sections: [ListingSection], city: String, mediator: Mediator?) -> Screen {
        let rows = sections.flatMap(\.rows).map { row -> [String] in
            [
                row[ListingRowKey.id].map(String.init) ?? "?", row[ListingRowKey.kind] ?? "", row[ListingRowKey.title] ?? "",
                row[ListingRowKey.price] ?? "", row[ListingRowKey.area].map { "\($0)m2" } ?? "", row[ListingRowKey.district] ?? "",
            ]
        }
        var status: [Field] = []
        var links: [Link] = []
        for section in sections {
            if let error = section.error {
                status.append(Field(section.kind.label, "failed: \(error.code): \(error.message)"))
                continue
            }
            let page = section.page.map { "page \($0), " } ?? ""
            let more = section.isLastPage ? "last page" : "more pages"
            status.append(Field(section.kind.label, "\(page)\(section.rows.count) shown, \(more)"))
            if !section.isLastPage, let url = try? mediator?.listingMoreURL(kind: section.kind.rawValue, city: city) {
                links.append(Link("next \(section.kind.label) page", url: url))
            }
        }
        if let first = sections.flatMap(\.rows).first?[ListingRowKey.id], let url = try? mediator?.detailURL(id: first) {
            links.insert(Link("details of #\(first)", url: url), at: 0)
        }
        var blocks: [Screen.Block] = [
            .table(Table(columns: ["ID", "KIND", "TITLE", "PRICE", "AREA", "DISTRICT"], rows: rows)),
            .fields(status),
        ]
        let facts = sections.compactMap(\.facts)
        if !facts.isEmpty { blocks.append(.network(facts)) }
        if !links.isEmpty { blocks.append(.links(links)) }
        return Screen(title: title, blocks: blocks)
    }
}
