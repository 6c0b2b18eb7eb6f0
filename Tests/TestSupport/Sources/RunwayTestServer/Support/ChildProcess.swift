import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run, started with `posix_spawn` rather than Foundation's `Process`.
///
/// On Linux, `Process.run()` (swift-corelibs-foundation up to 6.3) finds the highest open
/// descriptor by copying a fixed 256 bytes of each `/proc/self/fd` entry's name, past the end of
/// short records: when the last record lies at the end of a mapped page, the whole test process
/// dies with "Bad pointer dereference" at `Process.run() + 6428` (swift-corelibs-foundation
/// issue 5472; seen twice in a dozen parallel runs, each with hundreds of descriptors open). The
/// child here gets no descriptor but its standard streams (`closefrom` 3), and is reaped by
/// polling `waitpid` for its own process ID.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This process's own stream.
        case inherit
        /// A new pipe: ``standardInput``, ``standardOutput`` or ``standardError`` is this
        /// process's end of it.
        case pipe
        /// An open file (or pipe) of this process's.
        case file(FileHandle)
        /// For standard error only: wherever standard output goes.
        case output
    }

    /// How the child ended.
    public enum Exit: Sendable, Equatable, CustomStringConvertible {
        /// It returned or called `exit` with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's process ID.
    public let processIdentifier: pid_t
    /// This process's end of the child's standard input, for ``Stream/pipe``.
    public let standardInput: FileHandle?
    /// This process's end of the child's standard output, for ``Stream/pipe``.
    public let standardOutput: FileHandle?
    /// This process's end of the child's standard error, for ``Stream/pipe``.
    public let standardError: FileHandle?

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`: how the child ended, once reaped.
    nonisolated(unsafe) private var reaped: Exit?

    /// Starts `executable` (a path; found on `PATH` when it has no slash) with `arguments`.
    /// - Parameters:
    ///   - environment: The child's environment; this process's when `nil`.
    ///   - currentDirectory: The child's working directory; this process's when `nil`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: String? = nil,
        standardInput input: Stream = .null, standardOutput output: Stream = .inherit, standardError error: Stream = .inherit
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Descriptors of this process to close once the child has started (the child's ends of
        // the pipes), and this process's ends.
        var childEnds: [Int32] = []
        var ours: [Int32?] = [nil, nil, nil]
        func pipePair() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit:
                break
            case .pipe:
                let (read, write) = try pipePair()
                let (theirs, mine) = target == 0 ? (read, write) : (write, read)
                posix_spawn_file_actions_adddup2(&actions, theirs, target)
                childEnds.append(theirs)
                ours[Int(target)] = mine
            case .file(let handle):
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            case .output:
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            }
        }
        if let currentDirectory {
            // glibc 2.29's file action, which Swift's Glibc module does not show.
            typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
                throw POSIXError(.ENOSYS)
            }
            _ = currentDirectory.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(&actions, $0) }
        }
        Self.closeTheRest(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No signal blocked in the child, whatever this thread blocks, and the default action for
        // those a test process ignores (SIGPIPE, SIGINT, SIGQUIT), so the child can be stopped.
        var none = sigset_t()
        sigemptyset(&none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid = pid_t()
        let status =
            executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        for fd in childEnds { close(fd) }
        guard status == 0 else {
            for fd in ours.compactMap({ $0 }) { close(fd) }
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .ENOENT)
        }
        processIdentifier = pid
        standardInput = ours[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = ours[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = ours[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    /// How the child ended, or `nil` while it runs (reaps it once it has ended).
    public var exit: Exit? {
        lock.withLock {
            if let reaped { return reaped }
            var status: Int32 = 0
            guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return nil }
            reaped = Self.exit(status)
            return reaped
        }
    }

    /// Whether the child still runs.
    public var isRunning: Bool { exit == nil }

    /// Sends `signal` (`SIGTERM` by default) to the child, unless it has been reaped.
    public func signal(_ signal: Int32 = SIGTERM) {
        lock.withLock {
            guard reaped == nil else { return }
            _ = kill(processIdentifier, signal)
        }
    }

    /// Waits for the child's end, polling every 5 ms: for tasks, whose threads must not block.
    public func waitForExit() async -> Exit {
        while true {
            if let exit { return exit }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the child's end, blocking the calling thread: only on a thread of its own.
    /// The wait leaves the child unreaped (`WNOWAIT`) and holds no lock, so ``signal(_:)`` and
    /// ``exit`` from other threads go on meanwhile (and never reach a reused process ID).
    public func waitForExitBlocking() -> Exit {
        while true {
            if let exit { return exit }
            var info = siginfo_t()
            while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        }
    }

    private static func exit(_ status: Int32) -> Exit {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Closes every descriptor above standard error in the child, so that it holds no end of
    /// another child's pipe (whose reader would then never see its end): `closefrom` where glibc
    /// has the file action (2.34; Swift's Glibc module does not show it), else each descriptor
    /// open now.
    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            // The name read as a C string in place: the record is only as long as its name.
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
            }
            if let fd = Int32(name), fd > 2, fd != own { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }
}
