import Foundation

/// Checks a HAR file with `Tests/RunwayHARTests/Schema/check_har.py`: valid against the HAR 1.2
/// JSON schema there, and every entry's time the sum of its timings. Runway's HAR tests and the
/// sample app's share it. Needs `python3` with `jsonschema` (`python3-jsonschema`); without it
/// the check fails (exit 3), never passes.
public enum HARCheck {
    /// The folder with the schema and the script.
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "RunwayHARTests/Schema")

    /// Runs `python3 check_har.py file` to its end: status 0 passed, 1 invalid, 3 `jsonschema` missing.
    public static func run(_ file: URL) async throws -> ProcessOutcome {
        try await runPython(directory.appending(path: "check_har.py"), [file.path])
    }

    /// A fresh file name in the temporary directory.
    public static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appending(path: "runway-har-\(UUID().uuidString).har")
    }
}
