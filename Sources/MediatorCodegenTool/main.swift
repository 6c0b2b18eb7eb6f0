import Foundation
import MediatorCodegen

// mediator-codegen generate --output FILE [--module NAME FILE...]...
// mediator-codegen routes [--scheme SCHEME | --no-implicit] [--module NAME FILE...]...
//
// File paths after --module are read and reported relative to the longest common directory of
// that module's files.

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
for module in modules {
    let base = commonDirectory(module.files)
    var files: [(path: String, contents: String)] = []
    for path in module.files.sorted() {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
        files.append((String(path.dropFirst(base.count)), contents))
    }
    let result = TargetScanner.scan(module: module.name, files: files)
    targets += result.targets
    diagnostics += result.diagnostics
}

switch command {
case "generate":
    guard let output else { fail("generate needs --output") }
    if !diagnostics.isEmpty { fail(diagnostics.map(\.description).joined(separator: "\n")) }
    let text = RegistrationGenerator.generate(targets)
    if (try? String(contentsOfFile: output, encoding: .utf8)) != text {
        do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("cannot write \(output): \(error)") }
    }
case "routes":
    let listing = RouteListing(targets: targets, implicitScheme: scheme)
    print(listing.table, terminator: "")
    let problems = diagnostics.map(\.description) + listing.problems
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
