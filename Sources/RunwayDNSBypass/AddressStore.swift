import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The IP list as last fetched, persisted to one JSON file so a restart does not refetch it.
///
/// ```json
/// {"version": 1, "fetchedAt": 1795000000.0, "hosts": {"api.example.com": ["203.0.113.7", "198.51.100.9:8443"]}}
/// ```
/// A file that cannot be read or parsed is ignored with a ``DNSBypassError/corruptStore(_:)``
/// reason and rewritten after the next fetch.
struct AddressStore: Sendable {
    struct Snapshot: Sendable, Equatable {
        var fetchedAt: Date
        var hosts: [String: [Endpoint]]
    }

    private struct File: Codable {
        var version: Int
        var fetchedAt: Double
        var hosts: [String: [String]]
    }

    let url: URL

    /// The stored snapshot; `nil` when there is no file yet.
    func load() -> Result<Snapshot?, DNSBypassError> {
        guard FileManager.default.fileExists(atPath: url.path) else { return .success(nil) }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            return .failure(.corruptStore("cannot read \(url.path): \(RunwayError.text(describing: error))"))
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            return .failure(.corruptStore("\(url.lastPathComponent) is not a valid address file (\(data.count) bytes)"))
        }
        guard file.version == 1 else { return .failure(.corruptStore("unknown version \(file.version)")) }
        guard file.fetchedAt.isFinite, file.fetchedAt >= 0 else { return .failure(.corruptStore("invalid fetch time")) }
        do {
            let hosts = try DNSBypass.Configuration.parse(file.hosts)
            return .success(Snapshot(fetchedAt: Date(timeIntervalSince1970: file.fetchedAt), hosts: hosts))
        } catch {
            return .failure(.corruptStore(error.message))
        }
    }

    /// Writes the snapshot atomically (a crash leaves the old file or the new one, never half).
    func save(_ snapshot: Snapshot) -> DNSBypassError? {
        let file = File(
            version: 1, fetchedAt: snapshot.fetchedAt.timeIntervalSince1970, hosts: snapshot.hosts.mapValues { $0.map(\.description) })
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(file).write(to: url, options: .atomic)
            return nil
        } catch {
            return .storeWriteFailed("\(url.path): \(RunwayError.text(describing: error))")
        }
    }
}
