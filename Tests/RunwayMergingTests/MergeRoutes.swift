import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayTestServer

/// What the merge endpoints saw, and how they answer.
final class MergeRouteState: Sendable {
    /// Holds `/m/item?hold=1` until opened.
    let itemGate = Gate()
    /// Holds `/m/items/batch` until opened (open by default).
    let batchGate: Gate
    /// How `/m/items/batch` answers.
    enum BatchAnswer: Sendable {
        case items
        case status(Int)
        /// The status to the first batch request, the items to the ones after it.
        case statusOnce(Int)
        case oneItemShort, reset
    }
    let answer: BatchAnswer
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var singleIDs: [String] = []
    nonisolated(unsafe) private var batchIDs: [[String]] = []

    init(answer: BatchAnswer = .items, holdBatches: Bool = false) {
        self.answer = answer
        batchGate = Gate()
        if !holdBatches { batchGate.open() }
    }

    /// The `id` of every single request, in arrival order.
    var singles: [String] { lock.withLock { singleIDs } }
    /// The ids of every batch request, in arrival order.
    var batches: [[String]] { lock.withLock { batchIDs } }

    func recordSingle(_ id: String) { lock.withLock { singleIDs.append(id) } }
    func recordBatch(_ ids: [String]) { lock.withLock { batchIDs.append(ids) } }
}

/// `GET /m/item?id=N[&hold=1]` answers `{"id":"N"}`, with `"user"` set to the request's
/// `Authorization` when it has one (held at the item gate with `hold=1`);
/// `POST /m/items/batch` with `{"ids":[...]}` answers `{"items":[{"id":...},...]}` in order
/// (each item with the batch request's `"user"`), or
/// as ``MergeRouteState/answer`` says.
func mergeRoutes(_ state: MergeRouteState) -> TestServer.Routes {
    { router in
        router.get("/m/item") { request, _ -> Response in
            let id = request.uri.queryParameters.get("id") ?? ""
            state.recordSingle(id)
            if request.uri.queryParameters.get("hold") == "1" { await state.itemGate.wait() }
            return json(item(id, user: request.headers[.authorization]))
        }
        router.post("/m/items/batch") { request, context -> Response in
            var request = request
            let body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
            let ids = (try JSON(parsing: body)["ids"]?.array ?? []).compactMap(\.string)
            state.recordBatch(ids)
            await state.batchGate.wait()
            switch state.answer {
            case .items:
                return json(JSON.object(["items": .array(ids.map { item($0, user: request.headers[.authorization]) })]))
            case .oneItemShort:
                return json(JSON.object(["items": .array(ids.dropLast().map { JSON.object(["id": .string($0)]) })]))
            case .status(let code):
                return Response(status: HTTPResponse.Status(code: code))
            case .statusOnce(let code):
                if state.batches.count == 1 { return Response(status: HTTPResponse.Status(code: code)) }
                return json(JSON.object(["items": .array(ids.map { item($0, user: request.headers[.authorization]) })]))
            case .reset:
                await context.abortConnection()
                throw HTTPError(.internalServerError)
            }
        }
    }
}

/// `{"id": id}`, with `"user"`: the request's `Authorization` when it had one.
private func item(_ id: String, user: String?) -> JSON {
    JSON.object(user.map { ["id": .string(id), "user": .string($0)] } ?? ["id": .string(id)])
}

private func json(_ value: JSON) -> Response {
    Response(
        status: .ok, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedData())))
}
