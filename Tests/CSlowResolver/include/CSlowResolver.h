#ifndef RUNWAY_SLOW_RESOLVER_H
#define RUNWAY_SLOW_RESOLVER_H

/// A slow name server for tests, on Linux: this target defines `getaddrinfo`, which the test
/// binary's libcurl then calls instead of the C library's. A name `MS.slow.test` (the `.test`
/// domain is reserved for tests, never a real host) resolves to 127.0.0.1 after MS milliseconds;
/// every other name goes to the C library's resolver, unchanged.

/// How many `.slow.test` names the resolver has begun to resolve.
long runway_slow_resolves_started(void);

/// How many of them it has answered, after their delay.
long runway_slow_resolves_finished(void);

#endif
