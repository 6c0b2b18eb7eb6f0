import Foundation
import MediatorCodegen

// mediator-codegen generate --output FILE [--module NAME FILE...]...
// mediator-codegen routes [--scheme SCHEME | --no-implicit] [--module NAME FILE...]...
//
// File paths after --module are read and reported relative to the longest common directory of
// that module's files. `generate` writes its diagnostics to standard error as
// `/absolute/File.swift:line: warning: message` (or `error:`), the form SwiftPM and Xcode show
// against the file; it fails on an error only, so a warning (a non-public target, skipped)
// leaves the build going.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: mediator-codegen generate|routes ...") }
arguments.removeFirst()

var output: String?
var scheme: String? = "app"
var modules: [(name: String, files: [String])] = []
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    switch argument {
    case "--output":
        guard index + 1 < arguments.count else { fail("--output needs a path") }
        output = arguments[index + 1]
        index += 2
    case "--scheme":
        guard index + 1 < arguments.count else { fail("--scheme needs a value") }
        scheme = arguments[index + 1]
        index += 2
    case "--no-implicit":
        scheme = nil
        index += 1
    case "--module":
        guard index + 1 < arguments.count else { fail("--module needs a name") }
        modules.append((arguments[index + 1], []))
        index += 2
    default:
        guard !modules.isEmpty else { fail("unexpected argument \(argument)") }
        modules[modules.count - 1].files.append(argument)
        index += 1
    }
}

var targets: [TargetDeclaration] = []
var diagnostics: [CodegenDiagnostic] = []
var moduleDirectories: [String: String] = [:]
for module in modules {
    let base = commonDirectory(module.files)
    moduleDirectories[module.name] = base
    var files: [(path: String, contents: String)] = []
    for path in module.files.sorted() {
        guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
        guard let contents = String(validating: data, as: UTF8.self) else {
            fail(
                "\(path):\(firstInvalidUTF8Line(data)): error: not UTF-8 text, so the mediator scan of module \(module.name) "
                    + "cannot read it; Swift source must be UTF-8: save the file as UTF-8")
        }
        files.append((String(path.dropFirst(base.count)), contents))
    }
    let result = TargetScanner.scan(module: module.name, files: files)
    targets += result.targets
    diagnostics += result.diagnostics
}

switch command {
case "generate":
    guard let output else { fail("generate needs --output") }
    let located = diagnostics.map { "\(moduleDirectories[$0.module] ?? "")\($0.file):\($0.line): \($0.severity.rawValue): \($0.message)" }
    if !located.isEmpty { FileHandle.standardError.write(Data((located.joined(separator: "\n") + "\n").utf8)) }
    if diagnostics.contains(where: { $0.severity == .error }) { exit(1) }
    let text = RegistrationGenerator.generate(targets)
    if (try? String(contentsOfFile: output, encoding: .utf8)) != text {
        do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("cannot write \(output): \(error)") }
    }
case "routes":
    let listing = RouteListing(targets: targets, implicitScheme: scheme)
    print(listing.table, terminator: "")
    let warnings = diagnostics.filter { $0.severity == .warning }.map(\.description) + listing.warnings
    if !warnings.isEmpty { FileHandle.standardError.write(Data((warnings.joined(separator: "\n") + "\n").utf8)) }
    let problems = diagnostics.filter { $0.severity == .error }.map(\.description) + listing.problems
    if !problems.isEmpty { fail(problems.map { "error: \($0)" }.joined(separator: "\n")) }
default:
    fail("unknown command \(command)")
}

func commonDirectory(_ paths: [String]) -> String {
    guard var prefix = paths.first.map({ ($0 as NSString).deletingLastPathComponent + "/" }) else { return "" }
    for path in paths.dropFirst() {
        while !path.hasPrefix(prefix), prefix.count > 1 {
            prefix = (String(prefix.dropLast()) as NSString).deletingLastPathComponent + "/"
        }
    }
    return prefix == "/" ? "" : prefix
}

/// The 1-based line of the first byte sequence in `data` that is not UTF-8.
func firstInvalidUTF8Line(_ data: Data) -> Int {
    var bytes = data.makeIterator()
    var decoder = UTF8()
    var line = 1
    while case .scalarValue(let scalar) = decoder.decode(&bytes) {
        if scalar == "\n" { line += 1 }
    }
    return line
}
