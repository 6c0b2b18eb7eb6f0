import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayTestServer

/// Login, token refresh and the favourites behind a login.
///
/// - `POST /api/account/login` `{"user", "password"}` → `{"access_token", "refresh_token", "expires_in", "user"}`,
///   or 401 with code 1002 (wrong user name or password);
/// - `POST /api/account/token/refresh` `{"refresh_token"}` → `{"access_token", "expires_in"}`, or 401 code 1003;
/// - `POST /api/account/logout` `{"refresh_token"}` → `{"ok": true}`;
/// - `GET /api/account/favourites` with `Authorization: Bearer <access token>` →
///   `{"user", "favourites": [...]}`, or 401 with code 1001 (expired: refresh) or 1004 (unknown: log in).
enum AccountAPI {
    static func add(to router: RouterGroup<TestRequestContext>, store: AccountStore) {
        let lifetime = Int64(store.tokenLifetime.seconds.rounded(.up))
        router.post("/api/account/login") { request, _ in
            var request = request
            let body = try await Reply.body(&request)
            guard let user = body?["user"]?.string, let password = body?["password"]?.string else {
                return Reply.error(.badRequest, code: 400, "user and password are required", for: request)
            }
            guard let tokens = store.login(user: user, password: password) else {
                return Reply.error(.unauthorized, code: 1002, "wrong user name or password", for: request)
            }
            return Reply.json(
                [
                    "access_token": .string(tokens.access), "refresh_token": .string(tokens.refresh), "expires_in": .int(lifetime),
                    "user": .string(user),
                ], for: request)
        }
        router.post("/api/account/token/refresh") { request, _ in
            var request = request
            let body = try await Reply.body(&request)
            guard let refreshToken = body?["refresh_token"]?.string, let access = store.refresh(refreshToken) else {
                return Reply.error(.unauthorized, code: 1003, "the refresh token is not valid: log in again", for: request)
            }
            return Reply.json(["access_token": .string(access), "expires_in": .int(lifetime)], for: request)
        }
        router.post("/api/account/logout") { request, _ in
            var request = request
            if let refreshToken = try await Reply.body(&request)?["refresh_token"]?.string { store.logout(refreshToken) }
            return Reply.json(["ok": true], for: request)
        }
        router.get("/api/account/favourites") { request, _ in
            let header = request.headers[.authorization] ?? ""
            let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
            switch store.check(token) {
            case .unknown:
                return Reply.error(.unauthorized, code: 1004, "not logged in", for: request)
            case .expired:
                return Reply.error(.unauthorized, code: 1001, "the access token has expired", for: request)
            case .valid(let user):
                let favourites: [JSON] = store.favourites(of: user).compactMap(Catalogue.listing(id:)).map { listing in
                    [
                        "id": .int(Int64(listing.id)), "kind": .string(listing.kind), "title": .string(listing.title),
                        "price": .int(Int64(listing.price)), "city": .string(listing.cityName),
                    ]
                }
                return Reply.json(["user": .string(user), "favourites": .array(favourites)], for: request)
            }
        }
    }
}
