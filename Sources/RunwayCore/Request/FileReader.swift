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

/// A file opened for reading with the POSIX calls (`open`, `read`, `lseek`, `close`): what a
/// streamed request body or a multipart form reads its files with. Foundation's `FileHandle`
/// would do the same, but it is not in FoundationEssentials.
///
/// Reads, rewinds and the close are serialised by a lock, so a close never races a read into a
/// reused descriptor. Releasing the reader closes the file.
package final class FileReader: Sendable {
    /// The file's path, as opened (for messages).
    package let path: String
    /// The descriptor, `-1` once closed.
    private let descriptor: Locked<Int32>

    /// Opens `path` for reading.
    /// - Throws: `POSIXError` with `open`'s `errno` (`.ENOENT`, `.EACCES`, `.EISDIR`…).
    package init(path: String) throws(POSIXError) {
        self.path = path
        let fd = try Self.retrying { open(path, O_RDONLY | O_CLOEXEC) }
        descriptor = Locked(fd)
    }

    deinit {
        close()
    }

    /// The next bytes, at most `count` (more than zero); empty at the end of the file.
    /// - Throws: `POSIXError` with `read`'s `errno`, or `.EBADF` once closed.
    package func read(upTo count: Int) throws(POSIXError) -> Data {
        try descriptor.withLock { (fd) throws(POSIXError) -> Data in
            guard fd >= 0 else { throw POSIXError(.EBADF) }
            var data = Data(count: Swift.max(0, count))
            let got = data.withUnsafeMutableBytes { buffer in
                Result { () throws(POSIXError) -> Int in try Self.retrying { posixRead(fd, buffer.baseAddress, buffer.count) } }
            }
            data.count = try got.get()
            return data
        }
    }

    /// Starts the file over (for a body sent again).
    /// - Throws: `POSIXError` with `lseek`'s `errno`, or `.EBADF` once closed.
    package func rewind() throws(POSIXError) {
        try descriptor.withLock { (fd) throws(POSIXError) in
            guard fd >= 0 else { throw POSIXError(.EBADF) }
            _ = try Self.retrying { lseek(fd, 0, SEEK_SET) }
        }
    }

    /// Closes the file; later reads throw `.EBADF`. Closing twice does nothing.
    package func close() {
        let fd = descriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        // Not retried on EINTR: on Linux the descriptor is released whatever `close` returns.
        if fd >= 0 { _ = posixClose(fd) }
    }

    /// What `stat` says of `path`, following symbolic links as opening it does: whether it is a
    /// regular file, and its size in bytes.
    /// - Throws: `POSIXError` with `stat`'s `errno` (`ENOENT` for a link that points nowhere).
    package static func attributes(ofPath path: String) throws(POSIXError) -> (isRegularFile: Bool, size: Int) {
        var info = stat()
        _ = try retrying { stat(path, &info) }
        return ((info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size))
    }

    /// Calls `body` again while it fails with `EINTR`; a result below zero is `errno`'s error.
    private static func retrying<Result: BinaryInteger>(_ body: () -> Result) throws(POSIXError) -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code != EINTR { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
        }
    }
}

extension POSIXError {
    /// The C library's text for the error, as `strerror` gives it ("No such file or directory").
    package var message: String {
        String(cString: strerror(code.rawValue))
    }
}

// The C calls under names that do not collide with the reader's own `read` and `close`.
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

private func posixClose(_ fd: Int32) -> Int32 {
    close(fd)
}
