#ifndef RUNWAY_CZLIB_SHIM_H
#define RUNWAY_CZLIB_SHIM_H

#include <zlib.h>

// deflateInit2 / inflateInit2 are macros, which Swift cannot call; these wrap them.

/// Starts a deflate stream that writes the gzip format (RFC 1952).
static inline int runway_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// Starts an inflate stream that reads gzip or zlib, detected from the header.
static inline int runway_inflate_init_auto(z_stream *stream) {
    return inflateInit2(stream, 15 + 32);
}

/// Starts an inflate stream that reads raw deflate data (no header), as some servers send for
/// `Content-Encoding: deflate`.
static inline int runway_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -15);
}

#endif
