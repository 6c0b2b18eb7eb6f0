#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Dispatch
import Runway
import RunwaySync

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The single thread that writes queued actions to the outbox file, so `record` never does I/O.
///
/// It sleeps on the core's condition until `record` wakes it, takes **everything** queued in one
/// go and writes it in one transaction (a group commit: under load, one fsync covers many
/// actions). The window in which an action exists only in memory is therefore one wake-up plus
/// one transaction — typically well under a millisecond, a few milliseconds when the disk is
/// slow. A failed write keeps the actions queued and retries with a growing pause (10 ms to 1 s);
/// at shutdown it gives up after a few attempts and counts the actions as lost.
final class OutboxWriter: Sendable {
    private let core: ActionLogCore
    private let outbox: Outbox
    private let wakeUploader: @Sendable () -> Void
    private let done = DoneSignal()

    init(core: ActionLogCore, outbox: Outbox, wakeUploader: @escaping @Sendable () -> Void) {
        self.core = core
        self.outbox = outbox
        self.wakeUploader = wakeUploader
    }

    /// Starts the thread; it ends after ``ActionLogCore/stopWriter()`` once the queue is written.
    ///
    /// The loop runs on a serial queue of its own, which libdispatch gives a thread of its own
    /// (the queue's work item never returns while the logger runs): never one of the
    /// cooperative pool's.
    func start() {
        DispatchQueue(label: "runway.action-log").async { [self] in
            run()
            done.signal()
        }
    }

    /// Waits until the thread has ended.
    func waitUntilDone() async {
        await done.wait()
    }

    private func run() {
        let settings = core.settings
        var failures = 0
        while let work = core.takeWork() {
            core.reportRefusals(work.refusals)
            guard !work.actions.isEmpty else { continue }
            do {
                let insertion = try outbox.insert(work.actions, maxRecords: settings.maxRecords, policy: settings.whenFull)
                failures = 0
                core.written(work, insertion)
                if insertion.unassigned >= settings.batchSize { wakeUploader() }
            } catch {
                failures += 1
                if core.isWriterStopping, failures >= 3 {
                    core.gaveUp(work, error: error)
                    continue
                }
                let pause = min(1_000_000, 10_000 << min(failures, 7))
                core.writeFailed(work, error: error, retryDelay: .microseconds(pause))
                usleep(useconds_t(pause))
            }
        }
    }
}

/// A one-shot signal a task can wait for (the writer thread's end).
final class DoneSignal: Sendable {
    private struct State {
        var isDone = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func signal() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.isDone = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.isDone { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

#endif
