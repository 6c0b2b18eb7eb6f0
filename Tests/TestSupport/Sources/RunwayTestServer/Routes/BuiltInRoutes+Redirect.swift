import Foundation
import HTTPTypes
import Hummingbird

extension BuiltInRoutes {
    /// `/redirect/{n}`: 302 to `/redirect/{n-1}` until n is 0, which answers 200 with
    /// `{"redirects":"done"}`. `/redirect-to?url=U&status=S`: a redirect to `U`.
    static func addRedirect(to router: Router<TestRequestContext>) {
        router.get("/redirect/:n") { _, context in
            guard let remaining = context.parameters.get("n", as: Int.self), remaining >= 0 else {
                return badRequest("n must be a non-negative number")
            }
            if remaining == 0 {
                return json(Data(#"{"redirects":"done"}"#.utf8))
            }
            return Response(status: .found, headers: [.location: "/redirect/\(remaining - 1)"])
        }
        // `/redirect-to?url=U&status=S` (GET, POST, PUT, PATCH, DELETE): a redirect to `U` with
        // status `S` (302 by default), so a test can name a target on another origin or scheme.
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("/redirect-to", method: method) { request, _ in
                let target = request.uri.queryParameters["url"].map(String.init) ?? "/"
                let status = request.uri.queryParameters["status"].flatMap { Int(String($0)) } ?? 302
                return Response(status: .init(code: status), headers: [.location: target])
            }
        }
    }
}
