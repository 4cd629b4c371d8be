#ifndef GZSTREAM_CZLIB_SHIM_H
#define GZSTREAM_CZLIB_SHIM_H

#include <zlib.h>

// deflateInit2 and inflateInit2 are macros, which Swift cannot call: these wrappers pass
// zlib's version string and the z_stream size, as the macros do.
static inline int czlib_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                     int memLevel, int strategy) {
    return deflateInit2_(strm, level, method, windowBits, memLevel, strategy,
                         ZLIB_VERSION, (int)sizeof(z_stream));
}

static inline int czlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2_(strm, windowBits, ZLIB_VERSION, (int)sizeof(z_stream));
}

#endif
