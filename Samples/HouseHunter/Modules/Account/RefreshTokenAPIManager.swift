import Runway

/// Trades the refresh token for a new access token.
final class RefreshTokenAPIManager: APIManager {
    let engine = ManagerEngine()
    let apiName = "token/refresh"
    let serviceID: ServiceID = .accountAuth
    var method: HTTPMethod { .post }
}
