import Foundation
import ListingInterface

/// The listing module's managers, kept between calls (the target is kept by the mediator):
/// one pager per kind and city, so `more` continues where `list` stopped, and one filter
/// manager per kind, so a newer filter cancels the one in flight.
final class ListingState: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var pagers: [String: ListingPagesAPIManager] = [:]
    // Only read or written under `lock`.
    nonisolated(unsafe) private var filters: [ListingKind: ListingFilterAPIManager] = [:]

    /// The pager of `kind` listings in `city`, made on first use.
    func pager(_ kind: ListingKind, city: String) -> ListingPagesAPIManager {
        lock.withLock {
            let key = "\(kind.rawValue)/\(city)"
            if let existing = pagers[key] { return existing }
            let created = ListingPagesAPIManager(source: .of(kind))
            pagers[key] = created
            return created
        }
    }

    /// The filter manager of `kind`, made on first use.
    func filter(_ kind: ListingKind) -> ListingFilterAPIManager {
        lock.withLock {
            if let existing = filters[kind] { return existing }
            let created = ListingFilterAPIManager(source: .of(kind))
            filters[kind] = created
            return created
        }
    }
}
