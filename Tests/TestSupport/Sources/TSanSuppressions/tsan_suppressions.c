#include "TSanSuppressions.h"

// One known false positive of the Swift concurrency runtime, and nothing else.
//
// When a continuation is resumed from another thread (libcurl's loop thread finishing a
// transfer) before the awaiting task has suspended -- a refused connection can end that fast --
// the runtime hands the task over through an atomic status word on its "already resumed" path,
// which carries no thread-sanitizer annotation. The resuming thread's read of the continuation
// context and the awaiting task's next write to that frame (in withUnsafeContinuation's resume
// function, compiler-generated code of the standard library) then look unordered, and the
// sanitizer reports the task allocator's slab as raced (seen rarely, in the DNS-bypass failover
// test). The outcome itself is handed over with a release/acquire pair the sanitizer does see
// (CurlTransfer.takeOutcome). The entry names only that resume function, which returns to its
// caller by a tail call and so is never on the stack of a race in our own code: those still report.
const char *__tsan_default_suppressions(void) {
    return "race:$ss22withUnsafeContinuation9isolation_xScA_pSgYi_ySccyxs5NeverOGXEtYalFTY0_\n";
}
