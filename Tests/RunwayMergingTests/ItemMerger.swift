import Foundation
import Runway

/// `GET item?id=N` calls merged into `POST items/batch {"ids":[...]}`.
struct ItemMerger: RequestMerger {
    let batchURL: URL
    var maxMerged = 50
    /// Whether the combined request carries the first request's headers (its `Authorization`),
    /// as a merger for an API that needs credentials does.
    var keepsHeaders = false

    func combine(_ requests: [Request]) throws -> Request {
        let ids = requests.map { RequestParameters($0).values(for: "id").first ?? "" }
        var headers: HTTPHeaders = keepsHeaders ? requests[0].headers : [:]
        headers["Content-Type"] = "application/json"
        return Request(
            method: .post, url: batchURL, headers: headers, body: JSON.object(["ids": .array(ids.map { .string($0) })]).serializedData())
    }

    func split(_ response: Response, count: Int) throws -> [Result<Response, RunwayError>] {
        let items = try JSON(parsing: response.body)["items"]?.array ?? []
        return items.map { item in
            .success(
                Response(
                    status: 200, headers: response.headers, body: item.serializedData(), metrics: response.metrics, origin: response.origin)
            )
        }
    }
}
