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
    /// `<file>.part.validator`, one line, the strong `ETag` (or, without one, the strong
    /// `Last-Modified`) of the response they came from. Removed with the partial file.
    public var validatorFile: URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".part.validator")
    }

    /// The longest validator kept; a longer one is not kept (those bytes are not resumed).
    static let longestValidator = 512

    /// The `If-Range` value that identifies the body of a response with `headers`: its strong
    /// `ETag`, else its `Last-Modified` if strong; `nil` for neither (or only weak ones, which
    /// `If-Range` does not take), in which case its bytes are never resumed. `nil` too for an
    /// encoded body (`Content-Encoding`): the partial file holds it decoded, and a range counts
    /// the encoded bytes.
    package static func validator(of headers: HTTPHeaders) -> String? {
        if let coding = headers["Content-Encoding"]?.trimmingBlanks(), !coding.isEmpty, !coding.caseInsensitiveEquals("identity") {
            return nil
        }
        if let tag = headers["ETag"]?.trimmingBlanks(), isStrongEntityTag(tag) { return tag }
        // A date only when strong (RFC 9110 §8.8.2.2): a second or more before the response's
        // `Date`, so a file rewritten within the second it was last changed cannot keep it.
        if let date = headers["Last-Modified"]?.trimmingBlanks(), let modified = HTTPDate.parse(date),
            let sent = headers["Date"].flatMap({ HTTPDate.parse($0.trimmingBlanks()) }),
            modified.timeIntervalSince1970 <= sent.timeIntervalSince1970 - 1
        {
            return date
        }
        return nil
    }

    /// Whether a download of `request` may resume the bytes in the partial file: with ``resume``
    /// on, unless the request asks for a range of its own (`Range`). Those bytes are of that
    /// range, not the resource's first ones, and a resume's `Range` would go beside the caller's.
    package func resumes(_ request: Request) -> Bool {
        resume && request.headers["Range"] == nil
    }

    /// The validator to keep for the bytes of a response that empties the partial file: its own
    /// (``validator(of:)``), or none for one to a request that asks for a range of its own, whose
    /// bytes a later resume would take for the resource's first ones.
    package static func validator(of headers: HTTPHeaders, asksOwnRange: Bool) -> String? {
        asksOwnRange ? nil : validator(of: headers)
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
        return Self.isStrongEntityTag(text) || HTTPDate.parse(text) != nil ? text : nil
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

    /// Where a download's response goes, decided from its final head (see
    /// ``landing(status:headers:resumeOffset:sentValidator:asksOwnRange:)``).
    package enum Landing: Equatable, Sendable {
        /// Into the partial file: emptied first, or (`append`) after the bytes it holds, which
        /// must then number `expectedSize` once the body is in (the range's complete length,
        /// or its end when the server gave the complete length as `*`).
        case file(append: Bool, expectedSize: Int64?)
        /// Nowhere: the partial file already holds the whole resource (a 416 for a range that
        /// starts at the resource's end, of the same version).
        case complete
        /// To memory, as any response: not a body of the resource (not 2xx); the partial file is
        /// kept as it is.
        case memory
    }

    /// Decides where the body of a download's response goes, so that the final file is only
    /// ever the whole of one version of the resource.
    /// - Parameters:
    ///   - resumeOffset: The partial file's size when a `Range` from there was sent, else 0.
    ///   - sentValidator: The validator sent with it as `If-Range`.
    ///   - asksOwnRange: Whether the request carries a `Range` of the caller's.
    /// - Throws: `.responseInvalid` for a response that is not what was asked: a 206 nobody asked
    ///   for; a range that does not start at the partial file's end, or ends before the
    ///   resource does (the partial file kept, untouched); a 206 of another version than the
    ///   partial file's or naming none, a 416 naming another (a server that ignores
    ///   `If-Range`), or a 416 saying the resource is not the partial file's size (the partial
    ///   files removed: the next attempt starts from zero).
    package func landing(
        status: Int, headers: HTTPHeaders, resumeOffset: Int64, sentValidator: String?, asksOwnRange: Bool
    ) throws(RunwayError) -> Landing {
        let contentRange = headers["Content-Range"]
        switch status {
        case 206 where resumeOffset == 0:
            if asksOwnRange { return .file(append: false, expectedSize: nil) }
            throw RunwayError(
                .responseInvalid,
                "the server answered 206 (Content-Range \(contentRange ?? "none")) to a download that asked for no range: "
                    + "not the whole resource")
        case 206:
            guard let range = contentRange.flatMap(Self.byteRange), range.first == resumeOffset else {
                throw RunwayError(
                    .responseInvalid,
                    "asked to resume at byte \(resumeOffset), the server answered Content-Range \(contentRange ?? "none")")
            }
            if let complete = range.complete, range.last != complete - 1 {
                throw RunwayError(
                    .responseInvalid,
                    "asked for the rest of the resource from byte \(resumeOffset), the server answered Content-Range "
                        + "\(contentRange ?? "none"), which ends before the resource does")
            }
            try checkVersion(sentValidator, headers, status: status, required: true)
            // Its complete length; unknown (`*`), at least the range's end: never a range cut short.
            return .file(append: true, expectedSize: range.complete ?? range.last + 1)
        case 416 where resumeOffset > 0:
            let complete = contentRange.flatMap(Self.completeLength)
            guard complete == resumeOffset else {
                // Longer than the resource (or the resource's length unknown): not a part of it.
                // Kept, every later attempt would ask for the same range and get the same 416.
                removePartialFiles()
                throw RunwayError(
                    .responseInvalid,
                    "the partial file held \(resumeOffset) bytes, and the server cannot send from there (416"
                        + (complete.map { ", the resource is \($0) bytes" } ?? "") + "): it was removed, and the next attempt "
                        + "starts from zero")
            }
            // nginx sends no validator with a 416: one that honours `If-Range` answers 200 to
            // another version, so only a 416 naming another one is refused.
            try checkVersion(sentValidator, headers, status: status, required: false)
            return .complete
        case 200..<300:
            return .file(append: false, expectedSize: nil)
        default:
            return .memory
        }
    }

    /// Checks that a response to a resume names the version `sent` (its `If-Range`) identifies:
    /// the same `ETag`, or for a date the same `Last-Modified`. A response that names another is
    /// of another version, sent by a server that ignores `If-Range`; so is one that names none of
    /// that kind when it is `required` (RFC 9110 has a 206 carry the `ETag` a 200 would).
    /// - Throws: `.responseInvalid`, the partial files removed: the next attempt starts from zero.
    private func checkVersion(_ sent: String?, _ headers: HTTPHeaders, status: Int, required: Bool) throws(RunwayError) {
        guard let sent else { return }
        let name = sent.hasPrefix("\"") ? "ETag" : "Last-Modified"
        let current = headers[name]?.trimmingBlanks()
        guard current != sent, current != nil || required else { return }
        removePartialFiles()
        throw RunwayError(
            .responseInvalid,
            "asked to resume bytes of \(sent), the server answered \(status) with \(current.map { "bytes of \($0)" } ?? "no \(name)"): "
                + "the partial file was removed, and the next attempt starts from zero")
    }

    /// The numbers of a `Content-Range: bytes first-last/complete` header (`complete` `nil`
    /// for `*`), `nil` for any other form or a range that makes no sense. (`package`: the HAR
    /// recorder sizes a resumed download by it.)
    package static func byteRange(_ value: String) -> (first: Int64, last: Int64, complete: Int64?)? {
        let value = value.trimmingBlanks()
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst("bytes ".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = digits(bounds[0]), let last = digits(bounds[1]), first <= last else { return nil }
        if parts[1] == "*" { return (first, last, nil) }
        guard let complete = digits(parts[1]), last < complete else { return nil }
        return (first, last, complete)
    }

    /// The `complete` of a `Content-Range: bytes */complete` header (a 416's).
    static func completeLength(_ value: String) -> Int64? {
        let value = value.trimmingBlanks()
        guard value.hasPrefix("bytes */") else { return nil }
        return digits(value.dropFirst("bytes */".count))
    }

    /// A run of ASCII digits as a number; `nil` for anything else (a sign, a space, overflow).
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }

    /// Checks, before anything is sent, that the destination and the validator's place are free
    /// or files (a link is followed). A folder standing at either would fail the download after
    /// its request went; a device, a pipe or a socket at the destination would be replaced by
    /// the downloaded file (the final rename), `/dev/null` included for a process that may.
    /// - Throws: `.fileIO` with `neverSent`.
    package func checkPlaces() throws(RunwayError) {
        if let attributes = try? FileReader.attributes(ofPath: file.path), !attributes.isRegularFile {
            throw RunwayError(
                .fileIO,
                "\(file.path), the download's destination, is not a file (a folder, a device or a pipe), which the download "
                    + "would replace: choose a file's path",
                neverSent: true)
        }
        guard let attributes = try? FileReader.attributes(ofPath: validatorFile.path), !attributes.isRegularFile else { return }
        throw RunwayError(
            .fileIO, "\(validatorFile.path), where the download keeps its validator, is not a file (a folder?): move it away",
            neverSent: true)
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
}
