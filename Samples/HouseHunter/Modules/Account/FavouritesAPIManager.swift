import Runway

/// The user's favourite listings; needs the access token.
final class FavouritesAPIManager: APIManager {
    let engine = ManagerEngine()
    let apiName = "favourites"
    let serviceID: ServiceID = .account

    func validate(response: APIResponse) throws(RunwayError) {
        guard response.json["favourites"]?.array != nil else {
            throw .responseInvalid("the favourites answered without a list", response: response)
        }
    }
}
