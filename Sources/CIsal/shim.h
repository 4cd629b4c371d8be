#ifndef GZSTREAM_CISAL_SHIM_H
#define GZSTREAM_CISAL_SHIM_H

// ISA-L (Intel's storage acceleration library): its streaming inflate, the one igzip uses,
// its CRC-32, and its deflate for the fastest pack level.
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>
// ISA-L's version macros (ISAL_MAJOR_VERSION ...) are in its umbrella header only; these are
// the only names taken from it.
#include <isa-l.h>

// The level buffer ISA-L's deflate needs at `level` (0 to 3), ISA-L's default size for that
// level. A function because the ISAL_DEF_LVL*_DEFAULT macros are expressions Swift cannot import.
static inline uint32_t gzstream_isal_level_buffer_size(int level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
    }
}

#endif
