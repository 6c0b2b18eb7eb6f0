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
    /// afresh otherwise (a 200: the server ignored the range). A 206 starting elsewhere fails
    /// `.responseInvalid`, keeping the partial file: appending it would corrupt the download.
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
        return openDownloadFile(download, append: resuming)
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

    /// Moves a completed download into place; keeps a failed one's partial file for resuming.
    func settle(_ outcome: Result<Response, RunwayError>) -> Result<Response, RunwayError> {
        if file >= 0 {
            close(file)
            file = -1
        }
        if case .failure = outcome, !inflaters.isEmpty, let download = request.download {
            // Decoded bytes cannot be resumed by a range over the encoded ones: start afresh.
            unlink(download.partialFile.path)
        }
        guard case .success(var response) = outcome, let download = request.download else { return outcome }
        if status == 416, resumeOffset > 0, completeRangeLength(response) == resumeOffset {
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
        response.fileURL = download.file
        return .success(response)
    }

    /// The complete length in a `Content-Range: bytes */N` header.
    private func completeRangeLength(_ response: Response) -> Int64? {
        guard let range = response.headers["Content-Range"], let slash = range.lastIndex(of: "/") else { return nil }
        return Int64(range[range.index(after: slash)...])
    }
}
