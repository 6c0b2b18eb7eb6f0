/// The dispatcher's loop thread as a Swift task executor (``CurlDispatcher/loopExecutor``).
///
/// A job is queued for the loop's next turn, which runs the queued jobs before it starts the
/// transfers they sent; a job that comes while the loop waits for sockets wakes it. Once the
/// dispatcher is released, jobs go to Swift's global executor instead.
final class LoopExecutor: TaskExecutor {
    private let multi: CurlMulti

    init(multi: CurlMulti) {
        self.multi = multi
    }

    func enqueue(_ job: consuming ExecutorJob) {
        multi.enqueue(UnownedJob(job), on: asUnownedTaskExecutor())
    }
}
