import Foundation
import Hummingbird

extension BuiltInRoutes {
    /// `/upload` (POST or PUT): reads the body as it streams in without keeping it, and answers
    /// `{"received": count}`.
    static func addUpload(to router: Router<TestRequestContext>) {
        for method in [HTTPRequest.Method.post, .put] {
            router.on("/upload", method: method) { request, _ in
                var received = 0
                for try await buffer in request.body {
                    received += buffer.readableBytes
                }
                return try json(["received": received])
            }
        }
    }
}
