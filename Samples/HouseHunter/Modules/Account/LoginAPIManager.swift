import Runway

/// Logs in with a user name and password; answers with an access and a refresh token.
final class LoginAPIManager: APIManager {
    let engine = ManagerEngine()
    let apiName = "login"
    let serviceID: ServiceID = .accountAuth
    var method: HTTPMethod { .post }

    func validate(params: [String: JSON]) throws(RunwayError) {
        for field in ["user", "password"] where (params[field]?.string ?? "").isEmpty {
            throw .paramsInvalid(field: field, "enter a \(field == "user" ? "user name" : "password")")
        }
    }

    func validate(response: APIResponse) throws(RunwayError) {
        guard response.json["access_token"]?.string != nil, response.json["refresh_token"]?.string != nil else {
            throw .responseInvalid("the login answered without tokens", response: response)
        }
    }
}
