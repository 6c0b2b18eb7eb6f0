import RunwayCore
import RunwaySync

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

    /// Opens the partial file for a 2xx download response, where
    /// ``DownloadTarget/landing(status:headers:resumeOffset:sentValidator:asksOwnRange:)`` says:
    /// appended to when it is the rest of the partial file's version, started afresh (a 200: the
    /// server ignored the range, or the resource changed since the validator sent as
    /// `If-Range`) with the response's validator kept for a later resume. A response that is
    /// not what was asked fails `.responseInvalid`, the partial file never appended to.
    func startDownload() -> Bool {
        guard let download = request.download else { return true }
        do throws(RunwayError) {
            let asksOwnRange = request.headers["Range"] != nil
            let landing = try download.landing(
                status: status, headers: headers, resumeOffset: resumeOffset, sentValidator: resumeValidator, asksOwnRange: asksOwnRange)
            guard case .file(let append, let expectedSize) = landing else { return true }
            guard openDownloadFile(download, append: append) else { return false }
            expectedDownloadSize = expectedSize
            // Emptied first, then labelled: a validator never names bytes of another response.
            if !append { try download.storeValidator(DownloadTarget.validator(of: headers, asksOwnRange: asksOwnRange)) }
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

    /// Takes the partial file for the transfer, before the hand-over
    /// (``DownloadTarget/lockPartialFile()``). Returns the file's size.
    func lockPartialFile(_ download: DownloadTarget) throws(RunwayError) -> Int64 {
        let (descriptor, size) = try download.lockPartialFile()
        partialLock = descriptor
        return size
    }

    /// Lets go of the partial file; one still at its path and empty goes (nothing to resume).
    func unlockPartialFile(removingIfEmpty: Bool) {
        guard partialLock >= 0 else { return }
        if let download = request.download {
            download.unlockPartialFile(partialLock, removingIfEmpty: removingIfEmpty)
        } else {
            close(partialLock)
        }
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
            do throws(RunwayError) {
                _ = try download.landing(
                    status: status, headers: headers, resumeOffset: resumeOffset, sentValidator: resumeValidator, asksOwnRange: false)
            } catch {
                return .failure(error)
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
        if let expected = expectedDownloadSize {
            var info = stat()
            let size = stat(download.partialFile.path, &info) == 0 ? Int64(info.st_size) : -1
            guard size == expected else {
                // The range's bytes are in, and the file is still not the resource's length.
                download.removePartialFiles()
                return .failure(
                    RunwayError(
                        .responseInvalid,
                        "the resumed download holds \(size) bytes, not the \(expected) its Content-Range gives ("
                            + "\(headers["Content-Range"] ?? "none")): the partial file was removed, and the next attempt starts from zero")
                )
            }
        }
        if rename(download.partialFile.path, download.file.path) != 0 {
            return .failure(RunwayError(.fileIO, "cannot move the download to \(download.file.path): \(String(cString: strerror(errno)))"))
        }
        unlink(download.validatorFile.path)
        response.fileURL = download.file
        return .success(response)
    }
}
