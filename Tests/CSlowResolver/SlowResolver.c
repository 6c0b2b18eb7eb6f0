#include "CSlowResolver.h"

#ifdef __linux__
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_long started;
static atomic_long finished;

long runway_slow_resolves_started(void) { return atomic_load(&started); }
long runway_slow_resolves_finished(void) { return atomic_load(&finished); }

typedef int (*resolver)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **result) {
    resolver next = (resolver)dlsym(RTLD_NEXT, "getaddrinfo");
    if (next == NULL) return EAI_FAIL;
    static const char suffix[] = ".slow.test";
    size_t length = node ? strlen(node) : 0;
    size_t suffixLength = sizeof(suffix) - 1;
    if (length <= suffixLength || strcmp(node + length - suffixLength, suffix) != 0) {
        return next(node, service, hints, result);
    }
    atomic_fetch_add(&started, 1);
    long milliseconds = strtol(node, NULL, 10);
    struct timespec delay = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
    while (nanosleep(&delay, &delay) != 0) {}
    int status = next("127.0.0.1", service, hints, result);
    atomic_fetch_add(&finished, 1);
    return status;
}
#else
long runway_slow_resolves_started(void) { return 0; }
long runway_slow_resolves_finished(void) { return 0; }
#endif
