#ifndef GZSTREAM_CLIBDEFLATE_SHIM_H
#define GZSTREAM_CLIBDEFLATE_SHIM_H

// libdeflate: whole-buffer deflate, used for BGZF members (each at most 64 KiB both ways).
#include <libdeflate.h>

#endif
