#ifndef GZSTREAM_CISAL_SHIM_H
#define GZSTREAM_CISAL_SHIM_H

// ISA-L (Intel's storage acceleration library): its streaming inflate, the one igzip uses,
// and its CRC-32.
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>

#endif
