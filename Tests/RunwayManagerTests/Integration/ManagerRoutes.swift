import Foundation
import Hummingbird
import NIOCore
import RunwayTestServer

/// What the manager integration endpoints saw.
final class ManagerRouteState: Sendable {
    /// Requests to `/v1/search`.
    let searches = Counter()
    /// Where `/v1/search?hold=1` holds its requests.
    let searchGate = Gate()
    /// Requests to `/auth/refresh`.
    let refreshes = Counter()
    /// 401s sent by `/v1/profile`.
    let unauthorized = Counter()
    /// The `page` parameters `/v1/pages` received, in order.
    let pages = EventLog()
    /// Where `/v1/pages?hold=1` holds its requests.
    let pageGate = Gate()
    /// Whether `/auth/refresh` fails.
    let refreshFails: Bool
    /// How many 401s `/v1/profile` holds back until the last of them has come (0: none), so that
    /// every one of those calls has been sent with the expired token before any learns it is.
    let holdsUnauthorized: Int
    /// Opens when `holdsUnauthorized` requests have been refused.
    let unauthorizedGate = Gate()

    init(refreshFails: Bool = false, holdsUnauthorized: Int = 0) {
        self.refreshFails = refreshFails
        self.holdsUnauthorized = holdsUnauthorized
    }
}

/// The endpoints the manager integration tests add to the ``TestServer``:
/// - `GET /v1/search?q=&ms=&hold=`: waits `ms` (default 300), and with `hold=1` until the
///   state's `searchGate` opens; answers `{"q": q}`;
/// - `GET /v1/profile`: `{"name":"Ann"}` with `Authorization: Bearer fresh`, else 401 (the first
///   `holdsUnauthorized` 401s held until the last of them);
/// - `POST /auth/refresh`: waits 100 ms, answers `{"token":"fresh"}` (or 500 when set to fail);
/// - `GET /v1/pages?page=&pageSize=&hold=`: 45 items in pages, records each page asked for; with
///   `hold=1`, waits until the state's `pageGate` opens.
func managerRoutes(_ state: ManagerRouteState) -> TestServer.Routes {
    { router in
        router.get("/v1/search") { request, _ -> Response in
            state.searches.increment()
            let q = request.uri.queryParameters.get("q") ?? ""
            let milliseconds = request.uri.queryParameters.get("ms", as: Int.self) ?? 300
            try await Task.sleep(for: .milliseconds(milliseconds))
            if request.uri.queryParameters.get("hold") == "1" { await state.searchGate.wait() }
            return json(#"{"q":"\#(q)"}"#)
        }
        router.get("/v1/profile") { request, _ -> Response in
            guard request.headers[.authorization] == "Bearer fresh" else {
                if state.unauthorized.increment() >= state.holdsUnauthorized { state.unauthorizedGate.open() }
                await state.unauthorizedGate.wait()
                return json(#"{"error":"token expired"}"#, status: .unauthorized)
            }
            return json(#"{"name":"Ann"}"#)
        }
        router.post("/auth/refresh") { _, _ -> Response in
            state.refreshes.increment()
            try await Task.sleep(for: .milliseconds(100))
            if state.refreshFails { return json(#"{"error":"refresh token revoked"}"#, status: .internalServerError) }
            return json(#"{"token":"fresh"}"#)
        }
        router.get("/v1/pages") { request, _ -> Response in
            let page = request.uri.queryParameters.get("page", as: Int.self) ?? 0
            let size = request.uri.queryParameters.get("pageSize", as: Int.self) ?? 10
            state.pages.append(String(page))
            try await Task.sleep(for: .milliseconds(20))
            if request.uri.queryParameters.get("hold") == "1" { await state.pageGate.wait() }
            let start = (page - 1) * size
            let ids = start >= 0 && start < 45 ? Array(start..<min(45, start + size)) : []
            return json("{\"items\":[" + ids.map { "{\"id\":\($0)}" }.joined(separator: ",") + "]}")
        }
    }
}

private func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
    Response(
        status: status, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
