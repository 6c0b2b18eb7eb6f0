import Foundation
import RunwayHAR
import RunwayTestServer
import Testing

/// `--har FILE`: the built `house-hunter` records every call of a run and writes them as HAR 1.2,
/// checked with Runway's HAR 1.2 schema (`HARCheck`, the same check as Runway's own HAR tests).
@Suite("HAR export")
struct HARExportTests {
    @Test func aRunWritesEveryCallAsValidHAR12() async throws {
        let file = HARCheck.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let (user, password) = ("demo", "househunter")
        let run = try await HouseHunterProcess.run([
            "--har", file.path, "--login", "\(user):\(password)", "app://account/favourites", "app://detail/show?id=42", "app://detail/42",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let entries = try #require(run.stderr.firstMatch(of: /(\d+) calls written to (.+) \(HAR 1\.2\)/))
        #expect(String(entries.2) == file.path)

        let check = try await HARCheck.run(file)
        #expect(check.status == 0, "\(check)")
        #expect(check.output.contains("ok: \(entries.1) entries"), "\(check)")
        let har = try JSONDecoder().decode(HAR.self, from: Data(contentsOf: file))

        // The detail twice: from the network, then from the memory cache, marked as Chrome marks it.
        let details = har.log.entries.filter { $0.apiName == "detail" }
        #expect(details.map(\.fromCache) == [nil, "memory"])
        #expect(details.allSatisfy { $0.response.status == 200 })
        #expect(details.first?.timings.wait ?? -1 >= 0 && details.first?.serverIPAddress?.hasPrefix("127.0.0.") == true)
        // The login gate, then the login: the password and the tokens hidden.
        let login = try #require(har.log.entries.first { $0.apiName == "login" })
        let body = try #require(login.request.postData?.text)
        #expect(body.contains("user=demo") || body.contains(#""user":"demo""#), "\(body)")
        #expect(!body.contains(password) && body.contains("<redacted>"), "\(body)")
        #expect(login.response.content.text?.contains(#""access_token":"<redacted>""#) == true)
        // (Access tokens are added by the services' token refresh, after the recorder: never seen.)
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains(password + "\""))
        #expect(har.log.entries.allSatisfy { $0.error == nil })
    }

    @Test func aFileThatCannotBeWrittenFailsTheRun() async throws {
        let file = "/nonexistent-\(UUID().uuidString)/calls.har"
        let run = try await HouseHunterProcess.run(["--har", file, "app://detail/show?id=7"])
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("app://detail/show?id=7"))
        #expect(run.stderr.contains("HAR: cannot write \(file)"), "\(run.stderr)")
    }
}
