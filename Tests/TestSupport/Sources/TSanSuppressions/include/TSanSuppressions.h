#pragma once

/// Read by the thread sanitizer's runtime at start-up (when the tests run under
/// `swift test --sanitize=thread`); see tsan_suppressions.c.
const char *__tsan_default_suppressions(void);
