import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The dispatcher's loop thread: a pthread with the system's default stack, named for
/// debuggers and `top -H`. Foundation's `Thread` did the same, but it is not in
/// FoundationEssentials.
///
/// Joinable, so that releasing the dispatcher can wait until the thread has ended entirely
/// (its thread-local destructors included): a process that calls `exit` right after must not
/// have the loop thread tear down OpenSSL's per-thread state while `exit` tears down the rest.
final class LoopThread: @unchecked Sendable {
    // @unchecked Sendable: `handle` is set once at creation and never changes (on Darwin a
    // `pthread_t` is a pointer, which Swift does not see as Sendable); pthread calls on it are
    // thread-safe.
    #if canImport(Darwin)
    private typealias Handle = pthread_t?
    #else
    private typealias Handle = pthread_t
    #endif

    private let handle: Handle

    private init(handle: Handle) {
        self.handle = handle
    }

    /// Runs `body` on a new thread named `name` (at most 15 bytes are kept on Linux).
    /// - Returns: `nil` when the system refused a thread (`pthread_create` failed); `body` is
    ///   then never run.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> LoopThread? {
        let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        guard pthread_create(&thread, nil, runLoopThread, context) == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            return nil
        }
        return LoopThread(handle: thread)
    }

    /// Whether the calling thread is this one.
    var isCurrent: Bool {
        #if canImport(Darwin)
        guard let handle else { return false }
        #endif
        return pthread_equal(pthread_self(), handle) != 0
    }

    /// Waits until the thread has ended; called once. From the thread itself (its last
    /// reference let go there) it only detaches it: a thread cannot wait for itself.
    func join() {
        #if canImport(Darwin)
        guard let handle else { return }
        #endif
        if isCurrent {
            pthread_detach(handle)
        } else {
            pthread_join(handle, nil)
        }
    }

    /// What the new thread runs, handed over retained (the thread releases it).
    final class Context: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

#if canImport(Darwin)
private func runLoopThread(_ raw: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    let context = Unmanaged<LoopThread.Context>.fromOpaque(raw).takeRetainedValue()
    _ = pthread_setname_np(context.name)
    context.body()
    return nil
}
#else
private func runLoopThread(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let context = Unmanaged<LoopThread.Context>.fromOpaque(raw).takeRetainedValue()
    runway_name_this_thread(context.name)
    context.body()
    return nil
}
#endif
