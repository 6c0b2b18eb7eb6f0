import Account
import Detail
import Foundation
import Listing
import Runway

/// What the app and its sample server agree on: the secret, the services and their hosts.
enum SampleSetup {
    /// The signing secret of the sample (a real app gets its own from its server team).
    static let secret = "househunter-sample-secret"

    /// The embedded sample server's user (the login screen shows it too): what the tour types
    /// into the login form.
    static let sampleUser = (name: "demo", password: "househunter")

    /// The environment the app runs in.
    static let environment = ServiceEnvironment.release

    /// Every service the business modules call, plus the action-log service.
    static var services: [any Service] {
        Listing.services + [DetailService()] + Account.services + [ActionLogService()]
    }

    /// The host names of every service in ``environment``, sorted: what the DNS bypass serves
    /// and the sample server's IP list hands out.
    static var hostNames: [String] {
        Set(services.compactMap { URL(string: $0.baseURLs[environment])?.host }).sorted()
    }
}

extension ServiceID {
    /// Where user actions are uploaded (`actions/batch`).
    static let actions: ServiceID = "actions"
}

/// The API that takes the user-action log: `POST actions/batch` (see the README's wire format).
struct ActionLogService: Service {
    let id: ServiceID = .actions
    let baseURLs = BaseURLs(
        develop: "http://api.dev.househunter.test/api", releaseCandidate: "http://api.rc.househunter.test/api",
        release: "http://api.househunter.test/api")
}
