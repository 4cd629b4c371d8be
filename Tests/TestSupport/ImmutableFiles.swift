import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Files that cannot be removed, for the tests of what happens then: a read-only directory does
// not stop root (tests run as root in CI), an immutable file (`chattr +i`) stops everyone.

/// Sets or clears the immutable flag of `path`, as `chattr +i` / `chattr -i` do: an immutable
/// file cannot be renamed, removed, linked or written, not even by root.
/// - Returns: Whether it worked: it needs CAP_LINUX_IMMUTABLE (root, usually) and a file
///   system with the flag (ext4, xfs, btrfs; not tmpfs). Always `false` off Linux.
/// The corresponding C function is `ioctl(2)` with `FS_IOC_GETFLAGS` and `FS_IOC_SETFLAGS`.
public func setImmutable(_ path: String, _ immutable: Bool) -> Bool {
    #if os(Linux)
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    // <linux/fs.h>: FS_IOC_GETFLAGS is _IOR('f', 1, long), FS_IOC_SETFLAGS _IOW('f', 2, long)
    // (the same numbers on x86-64 and arm64); the kernel moves an int. FS_IMMUTABLE_FL is 0x10.
    let getFlags: UInt = 0x8008_6601
    let setFlags: UInt = 0x4008_6602
    let immutableFlag: Int32 = 0x10
    var flags: Int32 = 0
    guard ioctl(fd, getFlags, &flags) == 0 else { return false }
    flags = immutable ? flags | immutableFlag : flags & ~immutableFlag
    return ioctl(fd, setFlags, &flags) == 0
    #else
    return false
    #endif
}

/// Whether ``setImmutable(_:_:)`` works in the temporary directory, so that a file there can
/// be made one that not even root may remove: tried once, on a file of its own.
public let canMakeFilesImmutable: Bool = {
    guard let directory = try? makeTemporaryDirectory(prefix: "gzstream-immutable") else { return false }
    defer { removeTemporaryDirectory(directory) }
    let path = directory.path + "/probe"
    guard FileManager.default.createFile(atPath: path, contents: nil), setImmutable(path, true) else { return false }
    let refused = unlink(path) != 0
    _ = setImmutable(path, false)
    return refused
}()

extension Trait where Self == ConditionTrait {
    /// Runs the test only where ``canMakeFilesImmutable``; elsewhere it is reported as skipped,
    /// saying why.
    public static var needsImmutableFiles: Self {
        .enabled(if: canMakeFilesImmutable,
                 "needs a file not even root may remove (chattr +i): CAP_LINUX_IMMUTABLE, and a file system with the flag")
    }
}
