#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// What makes a resumed download safe: the validator of the bytes in the partial file, kept
// beside it and sent back as `If-Range`, so a resource that changed comes back whole (200)
// instead of as the rest of another version (206).
extension DownloadTarget {
    /// Where the validator of the partial file's bytes is kept while a download is incomplete:
    /// `<file>.part.validator`, one line, the strong `ETag` (or, without one, the
    /// `Last-Modified`) of the response they came from. Removed with the partial file.
    public var validatorFile: URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".part.validator")
    }

    /// The longest validator kept; a longer one is not kept (those bytes are not resumed).
    static let longestValidator = 512

    /// The `If-Range` value that identifies the body of a response with `headers`: its strong
    /// `ETag`, else its `Last-Modified`; `nil` for neither (or only a weak `ETag`, which
    /// `If-Range` does not take), in which case its bytes are never resumed. `nil` too for an
    /// encoded body (`Content-Encoding`): the partial file holds it decoded, and a range counts
    /// the encoded bytes.
    package static func validator(of headers: HTTPHeaders) -> String? {
        if let coding = headers["Content-Encoding"]?.trimmingBlanks(), !coding.isEmpty, !coding.caseInsensitiveEquals("identity") {
            return nil
        }
        if let tag = headers["ETag"]?.trimmingBlanks(), isStrongEntityTag(tag) { return tag }
        if let date = headers["Last-Modified"]?.trimmingBlanks(), isPlainValue(date) { return date }
        return nil
    }

    /// The validator kept for the partial file, or `nil`: none kept, the file unreadable, or what
    /// it holds not a validator (cut or corrupt), in which case the partial file is not resumed.
    package func storedValidator() -> String? {
        guard let reader = try? FileReader(path: validatorFile.path),
            let data = try? reader.read(upTo: Self.longestValidator + 2)
        else { return nil }
        var bytes = [UInt8](data)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard bytes.count <= Self.longestValidator, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return Self.isStrongEntityTag(text) || Self.isPlainValue(text) ? text : nil
    }

    /// Keeps `validator` for the partial file's bytes, replacing the file whole; `nil` removes
    /// the one kept. Called after the partial file is emptied and before the first byte of the
    /// response is written to it, so a validator never labels bytes of another response. One that
    /// cannot be written (a name too long for the file system, a full disk) is not kept: the
    /// download goes on, and is not resumed should it be cut.
    /// - Throws: `.fileIO` when a validator kept before cannot be removed (it would label these
    ///   bytes).
    package func storeValidator(_ validator: String?) throws(RunwayError) {
        if let validator, validator.utf8.count <= Self.longestValidator,
            (try? Data((validator + "\n").utf8).write(to: validatorFile, options: .atomic)) != nil
        {
            return
        }
        let path = validatorFile.path
        guard unlink(path) == 0 || errno == ENOENT || errno == ENAMETOOLONG else {
            throw RunwayError(.fileIO, "cannot remove \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Checks that a 206 answering a resume with `sent` as `If-Range` is of that version: a
    /// server that honours `Range` but not `If-Range` sends the rest of its current version.
    /// - Throws: `.responseInvalid` when the response names another validator of the same kind
    ///   (removing the partial files: the next attempt starts from zero).
    package func checkResumedVersion(sent: String?, headers: HTTPHeaders) throws(RunwayError) {
        guard let sent, let current = Self.validator(of: headers), sent.hasPrefix("\"") == current.hasPrefix("\""), sent != current
        else { return }
        removePartialFiles()
        throw RunwayError(
            .responseInvalid,
            "asked to resume bytes of \(sent), the server answered with bytes of \(current): the partial file was removed, and the "
                + "next attempt starts from zero")
    }

    /// Removes the partial file and its validator, whatever is left of either.
    package func removePartialFiles() {
        unlink(partialFile.path)
        unlink(validatorFile.path)
    }

    /// `"…"` of visible ASCII, without `W/`: an entity tag `If-Range` can carry.
    private static func isStrongEntityTag(_ value: String) -> Bool {
        let bytes = value.utf8
        guard bytes.count >= 2, bytes.count <= longestValidator, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"")
        else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) }
    }

    /// Visible ASCII and spaces, not starting with a quote or `W/`: an HTTP date as sent.
    private static func isPlainValue(_ value: String) -> Bool {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= longestValidator, bytes.first != UInt8(ascii: "\""), !value.hasPrefix("W/") else {
            return false
        }
        return bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
