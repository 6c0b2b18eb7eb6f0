import Foundation
import Hummingbird
import Runway
import RunwayTestServer

/// What the DNS bypass talks to: `GET /ping` (its latency probe; answers with the `Host` it was
/// sent, which the bypass keeps while connecting to an IP) and `GET /ip-list` (every address
/// the service hosts can be reached at, in the format `IPListSource` reads).
enum InfrastructureAPI {
    static func add(to router: RouterGroup<TestRequestContext>, ipList: @escaping @Sendable () -> [String: [String]]) {
        router.get("/ping") { request, _ in
            Reply.json(["pong": true, "host": .string(request.head.authority ?? "")], for: request)
        }
        router.get("/ip-list") { request, _ in
            let hosts = ipList().mapValues { addresses in JSON.array(addresses.map(JSON.string)) }
            return Reply.json(["hosts": .object(hosts)], for: request)
        }
    }
}
