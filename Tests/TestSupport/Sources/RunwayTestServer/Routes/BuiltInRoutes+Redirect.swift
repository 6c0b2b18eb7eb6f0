import Foundation
import Hummingbird

extension BuiltInRoutes {
    /// `/redirect/{n}`: 302 to `/redirect/{n-1}` until n is 0, which answers 200 with
    /// `{"redirects":"done"}`.
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
    }
}
