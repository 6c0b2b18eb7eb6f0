#include "TSanSuppressions.h"

// One known false positive of the Swift concurrency runtime, and nothing else.
//
// When a continuation is resumed from another thread (libcurl's loop thread finishing a
// transfer, a SwiftNIO event loop completing a future) before the awaiting task has suspended,
// `swift_continuation_await` sees the status already "resumed" and runs the task on at once,
// after an acquire load that carries no thread-sanitizer annotation (the runtime is not
// instrumented; only its enqueue path calls `_swift_tsan_acquire`). The resuming thread's read of
// the continuation context, in `UnsafeContinuation.resume(returning:)`, and the task's next write
// to that memory of its allocator's slab then look unordered. The write is wherever the task goes
// next: its next continuation (`withUnsafeContinuation` TY0_: ResendTests.bodiesArriveWhole, the
// DNS-bypass failover test) or any async function it calls (Hummingbird's HTTP2Channel.handle,
// in the test server). Reproduced without Runway: a thread resuming continuations handed to it
// under a lock, while the task lingers before it suspends, gives both forms of the report.
// Runway's own hand-over of the outcome is a release/acquire pair the sanitizer does see
// (`CurlTransfer.takeOutcome`); it resumes with `Void`.
//
// `race_top` matches only the access made by that function itself: the continuation context
// and the value being passed, which no racing code of ours touches. A plain `race` entry would
// match any frame of either stack (and a `race_top` on the write side misses the second form);
// with this entry the reproduction still reports a field written by the awaiting task after the
// hand-over. No leading `$`: in a suppression pattern it anchors the end of the name, so a mangled
// name written with it (as the entry before this one was) matches nothing.
const char *__tsan_default_suppressions(void) {
    return "race_top:sScc6resume9returningyxn_tF\n";
}
