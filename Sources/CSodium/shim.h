#ifndef GZSTREAM_CSODIUM_SHIM_H
#define GZSTREAM_CSODIUM_SHIM_H

// libsodium: sodium_init, sodium_memzero and the secretstream API
// (crypto_secretstream_xchacha20poly1305_*), whose sizes and tags are macros Swift does not
// import (they are expressions); libsodium's own functions (…_abytes(), …_tag_final()) give them.
#include <sodium.h>

#endif
