import Foundation
import RunwayTestServer
import Testing

/// Every library product that can do without Foundation imports FoundationEssentials only, so a
/// client that links them loads neither libFoundation.so nor ICU (about 6.6 MB of RSS in every
/// process, and ICU's 30 MB in a static binary). `FoundationFreeClient` links them all; this
/// suite reads what its binary loads and runs it.
@Suite("Foundation-free client")
struct FoundationFreeTests {
    /// The client binary: built next to the test bundle (this target depends on it).
    static var client: URL { builtProduct("FoundationFreeClient") }

    /// What `executable` prints to standard output; a non-zero exit fails. Read and waited for
    /// on a thread of its own: a blocked thread of the cooperative pool (two on a two-core
    /// machine) would stall every other test's tasks, the test servers' among them, for as long
    /// as the child runs.
    static func output(of executable: String, _ arguments: [String]) async throws -> String {
        let (data, exit) = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        // The test support's posix_spawn child, as in every other suite: safe in parallel runs.
                        let child = try ChildProcess(executable, arguments, standardOutput: .pipe)
                        let data = child.standardOutput.map(readToEnd) ?? Data()
                        return (data, child.waitForExitBlocking())
                    })
            }
        }
        #expect(exit == .exited(0), "\(executable) \(arguments)")
        return String(decoding: data, as: UTF8.self)
    }

    /// The libraries a process of the client loads (`ldd`: its own and theirs, by file name).
    static func loadedLibraries() async throws -> Set<String> {
        let lines = try await output(of: "/usr/bin/ldd", [client.path]).split(separator: "\n")
        return Set(lines.compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) })
    }

    @Test("the client loads FoundationEssentials, and neither Foundation, ICU nor FoundationNetworking")
    func linksNoFoundation() async throws {
        #if os(Linux)
        let loaded = try await Self.loadedLibraries()
        #expect(loaded.contains("libFoundationEssentials.so"), "\(loaded.sorted())")
        let foundation = loaded.intersection([
            "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "libFoundationNetworking.so",
            "libFoundationXML.so",
        ])
        #expect(foundation.isEmpty, "the client loads \(foundation.sorted()): a module it links imports Foundation")
        // What the binary itself asks for, for the record.
        let needed = try await Self.output(of: "/usr/bin/readelf", ["-d", Self.client.path]).split(separator: "\n")
            .filter { $0.contains("(NEEDED)") }.compactMap { $0.split(separator: "[").last?.dropLast() }
        print("FoundationFreeClient needs: \(needed.joined(separator: " "))")
        #endif
    }

    @Test("the client sends through a bare pipeline and the standard chain, and reports its peak RSS")
    func runs() async throws {
        #if os(Linux)
        try await withTestServer { server in
            for mode in ["bare", "chain"] {
                let line = try await Self.output(of: Self.client.path, [mode, server.url("/json").absoluteString, "200"])
                let report = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(report?["requests"] as? Int == 200, "\(line)")
                let kilobytes = try #require(report?["peak_rss_kb"] as? Int)
                #expect(kilobytes > 0)
                print("FoundationFreeClient \(mode): 200 requests, peak RSS \(kilobytes / 1024) MB (debug build)")
            }
        }
        #endif
    }
}
