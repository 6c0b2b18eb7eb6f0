import RunwaySync

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

// The lock that keeps one download at a time writing into a destination's partial file, for
// every dispatcher that downloads to a file.
extension DownloadTarget {
    /// Makes the destination's folder, and those above it, if missing.
    /// - Throws: `.fileIO` with `neverSent`, naming the file in the way when a place on the path
    ///   is a file (the system says only "File exists").
    package func makeFolder() throws(RunwayError) {
        let folder = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            let why = Self.fileInTheWay(of: folder.path).map { "\($0) is a file, not a folder" } ?? RunwayError.text(describing: error)
            throw RunwayError(.fileIO, "cannot make the folder of \(file.path): \(why)", underlying: error, neverSent: true)
        }
    }

    /// The nearest of `path` and the places above it that exists, when it is no folder.
    private static func fileInTheWay(of path: String) -> String? {
        var place = path
        while !place.isEmpty {
            var info = stat()
            if stat(place, &info) == 0 { return info.st_mode & S_IFMT == S_IFDIR ? nil : place }
            guard let slash = place.lastIndex(of: "/"), slash != place.startIndex else { return nil }
            place = String(place[..<slash])
        }
        return nil
    }

    /// Makes the partial file if missing, opens it and locks it (`flock`) for a transfer, before
    /// the request goes: a second download to the same destination, in this process or another,
    /// is refused instead of writing into the same file. A lock held for a moment only is waited
    /// for (`lockExclusively`, RunwaySync). Keep the descriptor open until the download ends,
    /// then give it to ``unlockPartialFile(_:removingIfEmpty:)``.
    /// - Returns: The open, locked descriptor and the partial file's size.
    /// - Throws: `.fileIO` with `neverSent`: nothing has been sent yet.
    package func lockPartialFile() throws(RunwayError) -> (descriptor: Int32, size: Int64) {
        let path = partialFile.path
        // The download that held the lock may end while this one waits for it, and rename its
        // partial file to the destination or remove it: the lock is then on a file that is no
        // longer the partial file, so it is let go and the one now at the path is opened.
        for _ in 0..<8 {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw RunwayError(.fileIO, "cannot open \(path): \(String(cString: strerror(errno)))", neverSent: true)
            }
            guard lockExclusively(descriptor) else {
                let reason =
                    errno == EWOULDBLOCK
                    ? "another download to \(file.path) is running: its partial file \(path) is locked"
                    : "cannot lock \(path): \(String(cString: strerror(errno)))"
                close(descriptor)
                throw RunwayError(.fileIO, reason, neverSent: true)
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw RunwayError(.fileIO, "cannot read the size of \(path): \(reason)", neverSent: true)
            }
            var atPath = stat()
            if stat(path, &atPath) == 0, atPath.st_ino == info.st_ino, atPath.st_dev == info.st_dev {
                return (descriptor, Int64(info.st_size))
            }
            close(descriptor)
        }
        throw RunwayError(
            .fileIO,
            "the partial file \(path) was replaced or removed each time it was locked: other downloads to \(file.path) keep running",
            neverSent: true)
    }

    /// Lets go of the partial file ``lockPartialFile()`` opened; one still at its path and empty
    /// goes (nothing to resume).
    package func unlockPartialFile(_ descriptor: Int32, removingIfEmpty: Bool) {
        var info = stat()
        var atPath = stat()
        if removingIfEmpty, fstat(descriptor, &info) == 0, info.st_size == 0, stat(partialFile.path, &atPath) == 0,
            atPath.st_ino == info.st_ino, atPath.st_dev == info.st_dev
        {
            // Still this file at the path (not one a later download made after an unlink).
            removePartialFiles()
        }
        close(descriptor)
    }
}
