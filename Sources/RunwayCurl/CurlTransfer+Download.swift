import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Downloads streamed to a partial file and moved into place.
extension CurlTransfer {

    /// Opens the partial file for a 2xx download response: appended to when it answers the
    /// `Range` sent (a 206 whose `Content-Range` starts at the partial file's size), started
    /// afresh otherwise (a 200: the server ignored the range, or the resource changed since the
    /// validator sent as `If-Range`), with the response's validator kept for a later resume. A
    /// 206 starting elsewhere fails `.responseInvalid`, keeping the partial file: appending it
    /// would corrupt the download. So does a 206 of another version (a server that honours
    /// `Range` but not `If-Range`), removing the partial file: the next attempt starts from zero.
    func startDownload() -> Bool {
        guard let download = request.download else { return true }
        let resuming = status == 206 && resumeOffset > 0
        if resuming {
            let contentRange = headers["Content-Range"]
            guard contentRange.flatMap(DownloadTarget.rangeStart(ofContentRange:)) == resumeOffset else {
                failure = RunwayError(
                    .responseInvalid,
                    "asked to resume at byte \(resumeOffset), the server answered Content-Range \(contentRange ?? "none")")
                return false
            }
        }
        do throws(RunwayError) {
            if resuming { try download.checkResumedVersion(sent: resumeValidator, headers: headers) }
            guard openDownloadFile(download, append: resuming) else { return false }
            // Emptied first, then labelled: a validator never names bytes of another response.
            if !resuming { try download.storeValidator(DownloadTarget.validator(of: headers)) }
        } catch {
            failure = error
            return false
        }
        return true
    }

    private func openDownloadFile(_ download: DownloadTarget, append: Bool) -> Bool {
        let path = download.partialFile.path
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        file = open(path, flags, 0o644)
        guard file >= 0 else {
            failure = RunwayError(.fileIO, "cannot open \(path): \(String(cString: strerror(errno)))")
            return false
        }
        if !append { resumeOffset = 0 }
        bodyGoesToFile = true
        return true
    }

    func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(file, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                failure = RunwayError(.fileIO, "cannot write the download: \(String(cString: strerror(errno)))")
                return false
            }
            remaining -= written
            pointer += written
        }
        return true
    }

    /// Opens the partial file (made if missing) and locks it (`flock`) for the transfer, before
    /// the hand-over: a second download to the same destination, in this process or another,
    /// is refused instead of writing into the same file. Returns the file's size.
    func lockPartialFile(_ download: DownloadTarget) throws(RunwayError) -> Int64 {
        let path = download.partialFile.path
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        // Nothing has been sent yet: whatever fails here says so (`neverSent`).
        guard fd >= 0 else { throw RunwayError(.fileIO, "cannot open \(path): \(String(cString: strerror(errno)))", neverSent: true) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason =
                errno == EWOULDBLOCK
                ? "another download to \(download.file.path) is running: its partial file \(path) is locked"
                : "cannot lock \(path): \(String(cString: strerror(errno)))"
            close(fd)
            throw RunwayError(.fileIO, reason, neverSent: true)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw RunwayError(.fileIO, "cannot read the size of \(path): \(String(cString: strerror(errno)))", neverSent: true)
        }
        partialLock = fd
        return Int64(info.st_size)
    }

    /// Lets go of the partial file; one still at its path and empty goes (nothing to resume).
    func unlockPartialFile(removingIfEmpty: Bool) {
        guard partialLock >= 0 else { return }
        var info = stat()
        var atPath = stat()
        if removingIfEmpty, let download = request.download, fstat(partialLock, &info) == 0, info.st_size == 0,
            stat(download.partialFile.path, &atPath) == 0, atPath.st_ino == info.st_ino, atPath.st_dev == info.st_dev
        {
            // Still this file at the path (not one a later download made after an unlink).
            download.removePartialFiles()
        }
        close(partialLock)
        partialLock = -1
    }

    /// Moves a completed download into place; keeps a failed one's partial file for resuming.
    func settle(_ outcome: Result<Response, RunwayError>) -> Result<Response, RunwayError> {
        let settled = moveIntoPlace(outcome)
        // Unlocked once moved, or given up: a partial file moved into place is no longer at its path.
        let moved = (try? settled.get())?.fileURL != nil
        unlockPartialFile(removingIfEmpty: !moved)
        return settled
    }

    private func moveIntoPlace(_ outcome: Result<Response, RunwayError>) -> Result<Response, RunwayError> {
        if file >= 0 {
            close(file)
            file = -1
        }
        if case .failure = outcome, !inflaters.isEmpty, let download = request.download {
            // Decoded bytes cannot be resumed by a range over the encoded ones: start afresh.
            download.removePartialFiles()
        }
        guard case .success(var response) = outcome, let download = request.download else { return outcome }
        if status == 416, resumeOffset > 0 {
            let length = completeRangeLength(response)
            guard length == resumeOffset else {
                // Longer than the resource (or the resource's length unknown): not a part of it.
                // Kept, every later attempt would ask for the same range and get the same 416.
                download.removePartialFiles()
                return .failure(
                    RunwayError(
                        .responseInvalid,
                        "the partial file held \(resumeOffset) bytes, and the server cannot send from there (416"
                            + (length.map { ", the resource is \($0) bytes" } ?? "") + "): it was removed, and the next attempt "
                            + "starts from zero"))
            }
            // The partial file already holds the whole resource.
            bodyGoesToFile = true
            response.status = 200
            response.body = Data()
        } else if !bodyStarted, (200..<300).contains(status) {
            // An empty body (libcurl never called the write callback): still a file.
            guard startDownload() else { return .failure(failure ?? RunwayError(.fileIO, "cannot start the download")) }
            close(file)
            file = -1
        }
        guard bodyGoesToFile else { return outcome }
        if rename(download.partialFile.path, download.file.path) != 0 {
            return .failure(RunwayError(.fileIO, "cannot move the download to \(download.file.path): \(String(cString: strerror(errno)))"))
        }
        unlink(download.validatorFile.path)
        response.fileURL = download.file
        return .success(response)
    }

    /// The complete length in a `Content-Range: bytes */N` header.
    private func completeRangeLength(_ response: Response) -> Int64? {
        guard let range = response.headers["Content-Range"], let slash = range.lastIndex(of: "/") else { return nil }
        return Int64(range[range.index(after: slash)...])
    }
}
