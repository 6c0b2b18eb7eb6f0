import ArgumentParser
import Foundation
import HouseHunterOpenAPI
import OpenAPIRuntime
import Runway
import RunwayOpenAPI
import Synchronization

/// `house-hunter platform`: the platform API through the client swift-openapi-generator made
/// from `OpenAPI/openapi.yaml`, on the app's chain (signed, validated, cached, routed by the DNS
/// bypass), with the operations' outcomes and how many calls reached the network.
struct PlatformCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "platform",
        abstract: "Call the platform API through its generated OpenAPI client, on the app's chain.")

    @OptionGroup var options: AppOptions

    @Option(help: "The listing to show (twice: the second answer comes from the cache).")
    var id: Int = 13

    func run() async throws {
        let actions = UserActions()
        let mediator = try AppMediator.make(actions: actions)
        let app = try await Startup.run { try await HouseHunterApp.start(options: options, mediator: mediator, actions: actions) }
        // The app's chain, and a counter after its last interceptor: what reaches the dispatcher.
        let sent = NetworkCalls()
        let platform = PlatformAPI(pipeline: app.network.pipeline.appending([sent]))
        var failed = false
        do {
            for _ in 0..<2 {
                if let listing = try await platform.listing(id: id) {
                    Console.out("getListingDetail \(id): \(listing.title), \(listing.cityName), \(listing.price) (\(listing.priceUnit))")
                } else {
                    Console.out("getListingDetail \(id): not found")
                }
            }
            let user = SampleSetup.sampleUser
            let tokens = try await platform.logIn(user: user.name, password: user.password)
            Console.out("login \(user.name): token for \(tokens.user), expires in \(tokens.expiresIn) s")
            do {
                _ = try await platform.logIn(user: user.name, password: "wrong")
                Console.out("login \(user.name) with a wrong password: accepted")
                failed = true
            } catch let refusal as PlatformAPI.Refusal {
                Console.out("login \(user.name) with a wrong password: refused (code \(refusal.code))")
            }
        } catch let error as ClientError {
            Console.out("\(error.operationID) failed: \(error.runwayError.map { "\($0)" } ?? "\(error.underlyingError)")")
            failed = true
        } catch let refusal as PlatformAPI.Refusal {
            Console.out("refused: \(refusal.status) \(refusal.code) \(refusal.message)")
            failed = true
        }
        Console.out("4 operations, \(sent.count) sent to the network (the second detail came from the cache)")
        try await app.shutdown()
        if failed { throw ExitCode.failure }
    }
}

/// Counts the calls that pass it: placed after the chain's last interceptor, the calls that
/// reach the dispatcher.
final class NetworkCalls: Interceptor {
    private let calls = Atomic(0)

    var count: Int { calls.load(ordering: .relaxed) }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        calls.add(1, ordering: .relaxed)
        return try await next(request, context)
    }
}
