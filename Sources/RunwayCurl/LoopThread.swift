import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts the dispatcher's loop thread: a detached pthread with the system's default stack,
/// named for debuggers and `top -H`. Foundation's `Thread` did the same, but it is not in
/// FoundationEssentials.
enum LoopThread {
    /// Runs `body` on a new thread named `name` (at most 15 bytes are kept on Linux).
    /// - Returns: `false` when the system refused a thread (`pthread_create` failed); `body` is
    ///   then never run.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        guard pthread_create(&thread, nil, runLoopThread, context) == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            return false
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return true
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
