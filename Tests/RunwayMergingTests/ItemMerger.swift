import Foundation
import Runway

/// `GET item?id=N` calls merged into `POST items/batch {"ids":[...]}`.
struct ItemMerger: RequestMerger {
    let batchURL: URL
    var maxMerged = 50

    func combine(_ requests: [Request]) throws -> Request {
        let ids = requests.map { RequestParameters($0).values(for: "id").first ?? "" }
        return Request(
            method: .post, url: batchURL, headers: ["Content-Type": "application/json"],
            body: JSON.object(["ids": .array(ids.map { .string($0) })]).serializedData())
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
