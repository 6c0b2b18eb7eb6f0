#ifndef RUNWAY_CZLIBTEST_SHIM_H
#define RUNWAY_CZLIBTEST_SHIM_H

// zlib for the test server's gzip endpoints. `deflateInit2` is a macro, which Swift cannot
// call, so it is wrapped here.

#include <zlib.h>

/// Starts a gzip (not raw deflate, not zlib) stream: window bits 15 + 16 selects the gzip wrapper.
static inline int runway_test_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
