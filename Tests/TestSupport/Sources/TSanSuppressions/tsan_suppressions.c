#include "TSanSuppressions.h"

// One known false positive of the Swift concurrency runtime, and nothing else.
//
// When a continuation is resumed from another thread (libcurl's loop thread finishing a
// transfer) before the awaiting task has suspended, `swift_continuation_await` sees the status
// already "resumed" and runs the task on at once, after an acquire load that carries no
// thread-sanitizer annotation (the runtime is not instrumented; only its enqueue path calls
// `_swift_tsan_acquire`). The resuming thread's read of the continuation context (in
// `UnsafeContinuation.resume(returning:)`) and the task's next write to the same slab of its
// allocator (the next `withUnsafeContinuation` initialising its context in the same frame) then
// look unordered. Reproduced without Runway: a thread resuming continuations handed to it under
// a lock, while the task lingers before it suspends, gives exactly this report (write in
// `withUnsafeContinuation(isolation:_:)` TY0_, previous read in `UnsafeContinuation.resume`,
// the task allocator's slab), seen in ResendTests.bodiesArriveWhole and the DNS-bypass failover
// test. The outcome itself is handed over with a release/acquire pair the sanitizer does see
// (`CurlTransfer.takeOutcome`).
//
// `race_top` matches only the frame that made the access: the stdlib's own code in that
// partial function. A plain `race` entry would match any frame of either stack, and the closure
// given to `withUnsafeContinuation` runs on top of this very function: a real race there (a
// field of the transfer written after the hand-over) would be hidden too; with `race_top` the
// reproduction still reports one. No leading `$`: in a suppression pattern it anchors the end of
// the name, so the mangled name written with it (as before) matched nothing.
const char *__tsan_default_suppressions(void) {
    return "race_top:ss22withUnsafeContinuation9isolation_xScA_pSgYi_ySccyxs5NeverOGXEtYalFTY0_\n";
}
