import ArgumentParser
import Foundation
import RunwayMediator

/// `house-hunter interactive`: type URLs, see screens.
struct InteractiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "interactive",
        abstract: "Type URLs and see their screens; 'login USER PASSWORD' logs in, 'routes' lists them, 'quit' ends.")

    @OptionGroup var options: AppOptions

    static let prompt = "househunter> "

    func run() async throws {
        let actions = UserActions()
        let mediator = try AppMediator.make(actions: actions)
        let app = try await Startup.run { try await HouseHunterApp.start(options: options, mediator: mediator, actions: actions) }
        Console.out("HouseHunter: type a URL and press return; 'routes' lists them, 'help' shows examples, 'quit' ends.")
        Self.showPrompt()
        // What the last login screen would open once the user has logged in.
        var resumeURL: String?
        reading: for await line in StandardInput.lines() {
            let text = line.trimmingCharacters(in: .whitespaces)
            let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if words.first == "login" {
                if words.count == 3 {
                    let screen = await app.logIn(user: words[1], password: words[2], resumeURL: resumeURL, progress: Console.progress)
                    Console.show("login \(words[1]) \(String(repeating: "*", count: words[2].count))", screen)
                    resumeURL = screen.kind == .login ? screen.resumeURL : nil
                } else {
                    Console.out("  usage: login USER PASSWORD   (typed here, never in a URL)")
                }
                Self.showPrompt()
                continue
            }
            switch text {
            case "":
                break
            case "quit", "exit":
                break reading
            case "help":
                Console.out("  app://listing/list?kind=all&city=sh    lists from the three teams")
                Console.out("  app://listing/more?kind=rent&city=sh   the next page")
                Console.out("  app://listing/filter?kind=rent&city=sh&maxPrice=6000")
                Console.out("  app://detail/show?id=42                 one listing (cached for 3 minutes)")
                Console.out("  app://account/favourites                behind the login gate")
                Console.out("  login demo househunter                  log in (then what the gate stopped opens)")
            case "routes":
                for route in mediator.routes { Console.out("  \(route)") }
            default:
                do {
                    try Console.checkURL(text, with: mediator)
                    let screen = await app.open(text, progress: Console.progress)
                    Console.show(text, screen)
                    if screen.kind == .login {
                        resumeURL = screen.resumeURL
                        Console.out("  type: login USER PASSWORD\n")
                    }
                } catch {
                    // checkURL printed the problem; the session goes on.
                }
            }
            Self.showPrompt()
        }
        Console.out("bye")
        try await app.shutdown()
    }

    static func showPrompt() {
        Console.out(prompt, terminator: "")
    }
}

/// Lines typed on stdin, read on a thread of their own so no task blocks on the terminal.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }
}
