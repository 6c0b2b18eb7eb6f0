import Foundation
import Glibc
import RunwayTestServer
import Testing

/// The interactive mode in a real terminal: `house-hunter interactive` runs in a detached tmux
/// session; the test types a URL with `send-keys` and reads the screen with `capture-pane`.
@Suite("HouseHunter in a terminal")
struct InteractiveTerminalTests {
    static let tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (scripts/install-deps.sh installs it)"))
    func typingAURLShowsItsScreen() async throws {
        let tmux = try Tmux(path: try #require(Self.tmuxPath))
        defer { tmux.killServer() }
        let outboxFile = HouseHunterProcess.freshActionLog()
        defer { HouseHunterProcess.removeActionLog(outboxFile) }
        let outbox = outboxFile.path
        try tmux.startSession(command: "HOUSEHUNTER_ACTION_LOG=\(outbox) \(try HouseHunterProcess.binary.path) interactive")
        #expect(await tmux.waitForPane { $0.hasSuffix("househunter>") }, "no prompt:\n\(tmux.pane())")

        try tmux.run(["send-keys", "-t", "hh", "app://listing/list?kind=rent&city=sh", "Enter"])
        let listed = await tmux.waitForPane {
            $0.contains("== Rental homes in Shanghai ==") && $0.contains("more pages") && $0.hasSuffix("househunter>")
        }
        #expect(listed, "no list screen:\n\(tmux.pane())")
        let screen = tmux.pane()
        #expect(screen.contains("ID  KIND  TITLE"))
        #expect(screen.contains("(fastest of 3)"))

        try tmux.run(["send-keys", "-t", "hh", "app://nowhere", "Enter"])
        #expect(await tmux.waitForPane { $0.contains("== Not found ==") }, "no not-found screen:\n\(tmux.pane())")

        try tmux.run(["send-keys", "-t", "hh", "quit", "Enter"])
        // The session ends with the app: its last screen may be gone before a capture sees "bye".
        #expect(await tmux.waitForPane { $0.contains("bye") || !tmux.hasSession() }, "did not quit:\n\(tmux.pane())")
    }
}

/// A private tmux server (its own socket), so the test never touches the user's sessions.
struct Tmux {
    let path: String
    let socket = "househunter-test-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"

    init(path: String) throws { self.path = path }

    /// Starts the session `hh` running `command` in a 220×60 pane.
    ///
    /// Spawned directly rather than through `Process`: the tmux server this starts lives on,
    /// and `Process.waitUntilExit()` on Linux waits until every process that inherited the
    /// child's descriptors has exited, which would be never.
    func startSession(command: String) throws {
        let arguments = [path, "-L", socket, "new-session", "-d", "-s", "hh", "-x", "220", "-y", "60", command]
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment["LANG"] = "C.UTF-8"
        environment.removeValue(forKey: "TMUX")
        let status = try Spawn.run(arguments, environment: environment.map { "\($0.key)=\($0.value)" })
        guard status == 0 else { throw ProcessFailure("tmux new-session failed with status \(status)") }
    }

    /// Runs a tmux command that talks to the running server; `capture` returns what it printed.
    @discardableResult
    func run(_ arguments: [String], capture: Bool = false) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment["LANG"] = "C.UTF-8"
        environment.removeValue(forKey: "TMUX")
        let process = try ChildProcess(
            path, ["-L", socket] + arguments, environment: environment, standardOutput: capture ? .pipe : .null, standardError: .null)
        let collected = process.standardOutput.map(Collector.init)
        let exit = process.waitForExitBlocking()
        let text = collected?.text() ?? ""
        guard exit == .exited(0) else {
            throw ProcessFailure("tmux \(arguments) failed with \(exit)")
        }
        return text
    }

    /// The pane's text, scrollback included, trailing blank lines dropped.
    func pane() -> String {
        let text = (try? run(["capture-pane", "-p", "-J", "-t", "hh", "-S", "-"], capture: true)) ?? ""
        return String(text.reversed().drop { $0 == "\n" || $0 == " " }.reversed())
    }

    func hasSession() -> Bool { (try? run(["has-session", "-t", "hh"])) != nil }

    /// Polls the pane until `condition` holds (generous: the machine may be busy).
    func waitForPane(timeout: Duration = .seconds(90), _ condition: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(pane()) { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return condition(pane())
    }

    func killServer() { _ = try? run(["kill-server"]) }
}

/// `posix_spawn` and `waitpid`, with stdin, stdout and stderr on /dev/null and no other
/// descriptor inherited.
enum Spawn {
    static func run(_ arguments: [String], environment: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 && fcntl(descriptor, F_GETFD) >= 0 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw ProcessFailure("posix_spawn \(arguments[0]) failed: \(result)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (status >> 8) & 0xff
    }
}
