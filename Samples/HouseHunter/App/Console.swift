import ArgumentParser
import Foundation
import HouseHunterScreen
import RunwayMediator

/// Terminal output: screens on stdout, progress and problems on stderr.
enum Console {
    /// Prints what was opened and the screen.
    static func show(_ url: String, _ screen: Screen) {
        out("> \(url)\n")
        out(screen.rendered())
    }

    /// Writes `text` and `terminator` to stdout at once, unbuffered, so output appears as it is
    /// written in a terminal and in a pipe alike (`print` buffers in a pipe, and flushing the C
    /// stream would mean naming `stdout`, which is not concurrency-safe).
    static func out(_ text: String = "", terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Writes a line to stderr.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Progress lines on stderr: `  ... rental list loaded (2/3)`.
    static let progress: ScreenProgress.Reporter = { step, done, total in
        error("  ... \(step) (\(done)/\(total))")
    }

    /// Prints a one-line message and exits with status 2 when `url` is not a URL at all;
    /// anything else (an unknown route, say) is left for the screen to show.
    static func checkURL(_ url: String, with mediator: Mediator) throws {
        do {
            _ = try mediator.resolve(url)
        } catch let error as MediatorError where error.code == .malformedURL {
            Console.error("house-hunter: malformed URL '\(url)': \(error.message)")
            throw ExitCode(2)
        } catch {
            // Shown by the screen when the URL is opened.
        }
    }
}

extension Screen.Kind {
    /// Whether the screen reports a failure (an error, nothing found).
    var isFailure: Bool { self == .error || self == .notFound }
}
