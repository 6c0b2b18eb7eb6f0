import Runway

/// Ends the session on the server.
final class LogoutAPIManager: APIManager {
    let engine = ManagerEngine()
    let apiName = "logout"
    let serviceID: ServiceID = .accountAuth
    var method: HTTPMethod { .post }
}
