#ifndef GZSTREAM_CFILESPACE_SHIM_H
#define GZSTREAM_CFILESPACE_SHIM_H

// Linux's fallocate(2), which Swift's Glibc module leaves out (glibc declares it only under
// _GNU_SOURCE). Called as the system call itself, not through posix_fallocate(3): where a file
// system has no fallocate, glibc's posix_fallocate writes a byte into every block of the range,
// which would race with other threads writing the same file at offsets.
#if defined(__linux__) && defined(__LP64__)
#include <sys/syscall.h>
#include <unistd.h>

/// fallocate(fd, 0, offset, length): allocates the blocks of bytes offset..<offset + length
/// and extends the file's size to their end when it is shorter. 0 on success, else -1 with errno
/// set (EOPNOTSUPP where the file system cannot).
static inline int gzstream_fallocate(int fd, long long offset, long long length) {
    return (int)syscall(SYS_fallocate, fd, 0, offset, length);
}
#endif

#endif
