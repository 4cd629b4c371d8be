#ifndef GZSTREAM_CWIDECHARACTERS_SHIM_H
#define GZSTREAM_CWIDECHARACTERS_SHIM_H

// The C library's wide-character classes (`iswprint_l`), which Swift's Glibc module leaves
// out: `list --members` quotes names as GNU tar does, by the C library's own table, so that
// the two agree on every code point whatever Unicode version Swift's tables have.
#include <locale.h>
#include <wctype.h>

#endif
