import Foundation
import RunwayTestServer
import Testing

/// HouseHunter end to end: the built `house-hunter` opens URLs through its mediator against the
/// embedded sample server (or a dead or slow one), and the tests read the screens it prints.
/// Timings vary from run to run, so the tests check structure, never numbers.
@Suite("HouseHunter end to end")
struct HouseHunterEndToEndTests {
    func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test func aListRouteShowsRowsFromTheFastestAddress() async throws {
        let run = try await HouseHunterProcess.run(["app://listing/list?kind=rent&city=sh"])
        #expect(run.status == 0, "\(run.stderr)")
        let out = run.stdout
        #expect(out.contains("> app://listing/list?kind=rent&city=sh"))
        #expect(out.contains("== Rental homes in Shanghai =="))
        let rows = lines(out).filter { $0.range(of: #"^  \d+ +rent +"#, options: .regularExpression) != nil }
        #expect(rows.count == 5)
        #expect(out.contains("rental: page 1, 5 shown, more pages"))
        #expect(out.contains("REQUEST  ORIGIN"))
        #expect(lines(out).contains { $0.hasPrefix("  rental") && $0.contains("network") && $0.contains("(fastest of 3)") })
        #expect(out.contains("-> next rental page"))
        #expect(out.contains("app://listing/more?city=sh&kind=rent"))
        // Progress of the long work went to stderr, not into the screen.
        #expect(run.stderr.contains("rental list loaded (1/1)"))
    }

    @Test func allKindsLoadTogetherAndPagingContinues() async throws {
        let run = try await HouseHunterProcess.run([
            "app://listing/list?kind=all&city=bj", "app://listing/more?kind=sale&city=bj", "app://listing/more?kind=sale&city=bj",
            "app://listing/more?kind=sale&city=bj",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let out = run.stdout
        for kind in ["sale", "rent", "new"] {
            #expect(lines(out).filter { $0.range(of: #"^  \d+ +\#(kind) +"#, options: .regularExpression) != nil }.count >= 5)
        }
        #expect(out.contains("second-hand: page 1, 5 shown, more pages"))
        #expect(out.contains("second-hand: page 2, 5 shown, more pages"))
        #expect(out.contains("second-hand: page 3, 2 shown, last page"))
        #expect(out.contains("That was the last page (page 3)."))
        #expect(run.stderr.contains("(3/3)"))
    }

    @Test func aDetailOpenedTwiceComesFromTheCacheTheSecondTime() async throws {
        let url = "app://detail/show?id=42"
        let run = try await HouseHunterProcess.run([url, "app://detail/42"])
        #expect(run.status == 0, "\(run.stderr)")
        let facts = lines(run.stdout).filter { $0.hasPrefix("  detail #42") }
        #expect(facts.count == 2)
        #expect(facts.first?.contains("network") == true)
        #expect(facts.last?.contains("memory-cache") == true)
        #expect(run.stdout.contains("Address:"))
        #expect(run.stdout.contains("-> more like this"))
    }

    @Test func theLoginGateSendsToLoginWhichComesBack() async throws {
        let run = try await HouseHunterProcess.run(["--login", "demo:househunter", "app://account/favourites", "app://account/logout"])
        #expect(run.status == 0, "\(run.stderr)")
        let screens = ("\n" + run.stdout).components(separatedBy: "\n> ")
        #expect(screens.count == 4)
        #expect(screens[1].hasPrefix("app://account/favourites"))
        #expect(screens[1].contains("== Log in =="))
        #expect(screens[1].contains("Log in to open app://account/favourites."))
        #expect(screens[2].hasPrefix("login demo ***********"))
        #expect(screens[2].contains("Logged in as demo."))
        #expect(screens[2].contains("== Favourites =="))
        #expect(screens[2].contains("token refreshes: 0"))
        // The server heard of the logout: no "was not told" line.
        #expect(screens[3].hasPrefix("app://account/logout"))
        #expect(screens[3].contains("== Logged out =="))
        #expect(!screens[3].contains("was not told"))
        #expect(!run.stdout.contains("password="))
    }

    @Test func aLinkNeverLogsInAndItsPasswordNeverReachesTheActionLog() async throws {
        let outbox = HouseHunterProcess.freshActionLog()
        defer { HouseHunterProcess.removeActionLog(outbox) }
        let link = "app://account/login?user=demo&password=s3cret-in-a-link&redirectURL=app%3A%2F%2Faccount%2Ffavourites"
        let run = try await HouseHunterProcess.run([link, "app://account/favourites"], actionLog: outbox)
        #expect(run.status == 0, "\(run.stderr)")
        let screens = ("\n" + run.stdout).components(separatedBy: "\n> ")
        #expect(screens.count == 3)
        #expect(screens[1].contains("A link never logs anybody in"))
        #expect(!screens[1].contains("Logged in"))
        #expect(screens[2].contains("== Log in =="))  // still nobody logged in
        // The action log recorded both screens, with the password redacted.
        let files = [outbox, URL(fileURLWithPath: outbox.path + "-wal")]
        let stored = files.compactMap { try? Data(contentsOf: $0) }
        #expect(!stored.isEmpty)
        #expect(stored.allSatisfy { $0.range(of: Data("s3cret-in-a-link".utf8)) == nil })
        #expect(stored.contains { $0.range(of: Data("password=%3Credacted%3E".utf8)) != nil })
    }

    @Test func anUnknownRouteShowsTheNotFoundScreen() async throws {
        let run = try await HouseHunterProcess.run(["app://nowhere/at/all"])
        #expect(run.status == 1)
        #expect(run.stdout.contains("== Not found =="))
        #expect(run.stdout.contains("Nothing in HouseHunter answers app://nowhere/at/all."))
    }

    @Test func aMalformedURLIsOneLineAndAnExitStatus() async throws {
        let run = try await HouseHunterProcess.run(["app://listing/list?city=%zz"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        let errors = lines(run.stderr).filter { !$0.isEmpty }
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("house-hunter: malformed URL 'app://listing/list?city=%zz':") == true)
    }

    @Test func badParametersAndLocalOnlyActionsAreTypedErrorScreens() async throws {
        let run = try await HouseHunterProcess.run([
            "app://listing/list?kind=rent&city=", "app://listing/list?kind=castle&city=sh", "app://account/status",
        ])
        #expect(run.status == 1)
        let screens = run.stdout.components(separatedBy: "> app://")
        #expect(screens.count == 4)
        #expect(screens[1].contains("== Error ==") && screens[1].contains("RunwayError.paramsInvalid") && screens[1].contains("field:"))
        #expect(screens[2].contains("MediatorError.parameterInvalid") && screens[2].contains("kind must be one of"))
        #expect(screens[3].contains("MediatorError.remoteCallForbidden"))
    }

    @Test func aDeadServerIsAnErrorScreenNotACrash() async throws {
        let run = try await HouseHunterProcess.run(["--server", "http://127.0.0.1:1", "--timeout", "2", "app://detail/show?id=42"])
        #expect(run.status == 1)
        #expect(run.stdout.contains("== Error =="))
        #expect(run.stdout.contains("RunwayError.cannotConnect"))
        #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("Stack dump"))
    }

    @Test func aSlowServerIsATimeoutScreen() async throws {
        try await withTestServer(responseDelay: .seconds(20)) { slow in
            let run = try await HouseHunterProcess.run([
                "--server", slow.baseURL.absoluteString, "--timeout", "0.5", "app://detail/show?id=42",
            ])
            #expect(run.status == 1)
            #expect(run.stdout.contains("== Error =="))
            #expect(run.stdout.contains("RunwayError.timeout"))
            #expect(!run.stderr.contains("Fatal error"))
        }
    }

    @Test func aRunningServerCanBeUsedWithServer() async throws {
        let serve = try ChildProcess(
            try HouseHunterProcess.binary.path, ["serve", "--port", "0"], standardOutput: .pipe, standardError: .null)
        let collected = Collector(serve.standardOutput!)
        defer { serve.signal() }
        // Read the URL it prints; it stays up until interrupted.
        let url = try await firstServerURL(printedBy: collected, process: serve)
        let run = try await HouseHunterProcess.run(["--server", url, "app://detail/show?id=7"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("== #7 "))
        #expect(run.stdout.contains("(fastest of 3)"))
        serve.signal(SIGINT)
        #expect(await HouseHunterProcess.wait(for: serve, timeout: .seconds(30)))
        #expect(serve.exit == .exited(0))
        #expect(collected.text().contains("stopping"))
    }

    /// The `--server` URL `house-hunter serve` prints.
    func firstServerURL(printedBy output: Collector, process: ChildProcess) async throws -> String {
        let marker = "try: house-hunter --server "
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, process.isRunning {
            if let line = lines(output.snapshot()).first(where: { $0.contains(marker) }),
                let url = line.components(separatedBy: marker).last?.split(separator: " ").first
            {
                return String(url)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessFailure("house-hunter serve printed no URL")
    }

    @Test func theTourWalksEveryStep() async throws {
        let run = try await HouseHunterProcess.run(["tour"])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let out = run.stdout
        for step in 1...7 { #expect(out.contains("[\(step)/7]")) }
        #expect(out.contains("IP list fetched and probed, fastest first:"))
        #expect(out.contains("request-defaults -> logging -> validation -> cache -> retry -> compression -> signing -> dns-bypass"))
        #expect(out.contains("cancelled, never shown"))
        #expect(out.components(separatedBy: "-> landed").count == 2)
        #expect(out.contains("memory-cache"))
        #expect(out.contains("== Log in =="))
        #expect(out.contains("token refreshes: 1"))
        // The action log: 9 screens opened by URL (logging in is typed into a form, and the screen it
        // resumes is a local call) and 3 filters changed, uploaded in one batch, received once.
        #expect(out.contains("recorded this run: 12 actions (3 filter.changed, 9 screen.opened)"))
        #expect(out.contains("uploaded: 12 actions in 1 batch"))
        #expect(out.contains("the server received: 12 records in 1 batch (3 filter.changed, 9 screen.opened)"))
        #expect(out.contains("e.g. filter.changed: city=sh kind=rent maxPrice=6000"))
        #expect(out.contains("Tour finished: 7 steps."))
        #expect(!out.contains("UNEXPECTED"))
    }

    @Test func whatARunLeavesInTheOutboxTheNextRunUploadsFirst() async throws {
        let outbox = HouseHunterProcess.freshActionLog()
        defer { HouseHunterProcess.removeActionLog(outbox) }
        // One screen opened; fewer than 30 actions are not uploaded, they wait in the outbox.
        let first = try await HouseHunterProcess.run(["app://detail/show?id=3"], actionLog: outbox)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await HouseHunterProcess.run(["tour"], actionLog: outbox)
        #expect(second.status == 0, "\(second.stdout)\n\(second.stderr)")
        #expect(second.stdout.contains("left by the last run: 1 action, uploaded first"))
        #expect(second.stdout.contains("uploaded: 13 actions in 2 batches"))
        #expect(second.stdout.contains("the server received: 13 records in 2 batches (3 filter.changed, 10 screen.opened)"))
    }
}
