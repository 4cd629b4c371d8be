#ifndef GZSTREAM_CFILESPACE_SHIM_H
#define GZSTREAM_CFILESPACE_SHIM_H

// Linux's fallocate(2), which Swift's Glibc module leaves out (glibc declares it only under
// _GNU_SOURCE). Called as the system call itself, not through posix_fallocate(3): where a file
// system has no fallocate, glibc's posix_fallocate writes a byte into every block of the range,
// which would race with other threads writing the same file at offsets. And fstatfs(2)'s file
// system type, which decides whether that is worth doing (ext4 only).
#if defined(__linux__) && defined(__LP64__)
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

/// fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length): allocates the blocks of bytes
/// offset..<offset + length without changing the file's size. 0 on success, else -1 with errno
/// set (EOPNOTSUPP where the file system cannot).
static inline int gzstream_fallocate(int fd, long long offset, long long length) {
    return (int)syscall(SYS_fallocate, fd, 0x01 /* FALLOC_FL_KEEP_SIZE */, offset, length);
}

/// fstatfs(fd)'s f_type into *type: the magic number of the file system the open file is on
/// (0xEF53 for ext2/3/4). 0 on success, else -1 with errno set. Swift's Glibc module has no
/// <sys/vfs.h>.
static inline int gzstream_file_system_type(int fd, long long *type) {
    struct statfs info;
    int result = fstatfs(fd, &info);
    if (result == 0) *type = (long long)info.f_type;
    return result;
}
#endif

#endif
