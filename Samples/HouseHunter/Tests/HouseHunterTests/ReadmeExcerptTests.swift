import Foundation
import Testing

/// The README and the guides quote code in blocks that start with `// From <path>`; each quoted
/// line must be in that file, in order (a `// ...` line skips ahead). So the docs show code that
/// every build compiles, not a copy that drifts.
@Suite("README excerpts")
struct ReadmeExcerptTests {
    /// The repository's root (this file is in `Samples/HouseHunter/Tests/HouseHunterTests/`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Excerpt {
        let path: String
        let lines: [String]
    }

    /// Every ```swift block of `markdown` whose first line is `// From <path>`.
    static func excerpts(in markdown: String) -> [Excerpt] {
        var result: [Excerpt] = []
        var block: [String]?
        for line in markdown.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if block == nil, trimmed == "```swift" {
                block = []
            } else if let lines = block, trimmed == "```" {
                if let first = lines.first?.trimmingCharacters(in: .whitespaces), first.hasPrefix("// From ") {
                    result.append(Excerpt(path: String(first.dropFirst("// From ".count)), lines: Array(lines.dropFirst())))
                }
                block = nil
            } else if block != nil {
                block?.append(line)
            }
        }
        return result
    }

    /// The first quoted line not found in order in `source`, or `nil` when all are.
    static func missingLine(of excerpt: Excerpt, in source: String) -> String? {
        let file = source.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var position = 0
        var segments: [[String]] = [[]]
        for line in excerpt.lines.map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "// ..." { segments.append([]) } else { segments[segments.count - 1].append(line) }
        }
        for segment in segments where !segment.isEmpty {
            guard
                let start = (position...max(position, file.count - segment.count)).first(where: { start in
                    start + segment.count <= file.count && Array(file[start..<start + segment.count]) == segment
                })
            else { return segment.first { !file[position...].contains($0) } ?? segment[0] }
            position = start + segment.count
        }
        return nil
    }

    /// The README, the sample's and the benchmarks' READMEs, and every DocC article.
    static func documents() throws -> [URL] {
        var documents = ["README.md", "Samples/HouseHunter/README.md", "Benchmarks/README.md"].map { root.appendingPathComponent($0) }
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("\(module).docc")
            guard let articles = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            documents += articles.filter { $0.hasSuffix(".md") }.sorted().map { catalog.appendingPathComponent($0) }
        }
        return documents
    }

    @Test func everyQuotedLineIsInItsFile() throws {
        var quoted = 0
        for document in try Self.documents() {
            let markdown = try String(contentsOf: document, encoding: .utf8)
            for excerpt in Self.excerpts(in: markdown) {
                quoted += 1
                let source = try String(contentsOf: Self.root.appendingPathComponent(excerpt.path), encoding: .utf8)
                let missing = Self.missingLine(of: excerpt, in: source)
                #expect(
                    missing == nil,
                    "\(document.lastPathComponent) quotes \(excerpt.path) but this is not in it (in order): \(missing ?? "")")
            }
        }
        #expect(quoted >= 10)
    }

    @Test func aChangedLineIsNoticed() {
        let source = "let a = 1\nlet b = 2\nlet c = 3\n"
        #expect(Self.missingLine(of: Excerpt(path: "x", lines: ["let a = 1", "let b = 2"]), in: source) == nil)
        #expect(Self.missingLine(of: Excerpt(path: "x", lines: ["let a = 1", "// ...", "let c = 3"]), in: source) == nil)
        #expect(Self.missingLine(of: Excerpt(path: "x", lines: ["let a = 1", "let c = 3"]), in: source) != nil)
        #expect(Self.missingLine(of: Excerpt(path: "x", lines: ["let c = 3", "// ...", "let a = 1"]), in: source) == "let a = 1")
    }
}
