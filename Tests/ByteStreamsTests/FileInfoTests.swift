import ByteStreams
import Foundation
import TestSupport
import Testing

@Suite("FileInfo and the C library wrappers", .onDedicatedThreads)
struct FileInfoTests {
    @Test("a file's info from its descriptor and by name: kind, size, mode, owner, times; a link described itself unless followed; nil for no such name")
    func fileAndLink() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fileinfo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("12345".utf8),
                                               attributes: [.posixPermissions: 0o640]))
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("link").path,
                                                   withDestinationPath: "data")
        let folder = try SystemCalls.open(Pathname(directory.path), in: SystemCalls.currentDirectory,
                                          flags: OpenFlag.readOnly | OpenFlag.directory)
        defer { try? SystemCalls.close(folder, target: "directory") }
        let fd = try SystemCalls.open("data", in: folder, flags: OpenFlag.readOnly | OpenFlag.noFollow)
        defer { try? SystemCalls.close(fd, target: "data") }
        let modified = FileInfo.Timestamp(seconds: 1_234_567_890, nanoseconds: 123_456_789)
        try SystemCalls.setTimes(of: fd, access: FileInfo.Timestamp(seconds: 7, nanoseconds: 500), modification: modified,
                                 target: "data")

        let opened = try SystemCalls.info(of: fd, target: "data")
        #expect(opened.isRegularFile && !opened.isDirectory && !opened.isSymbolicLink && !opened.isFIFO && !opened.isSocket)
        #expect(opened.size == 5 && opened.permissions == 0o640 && opened.linkCount == 1)
        #expect(opened.owner == SystemCalls.effectiveUserID)
        #expect(opened.modificationTime == modified && opened.accessTime == FileInfo.Timestamp(seconds: 7, nanoseconds: 500))
        let link = try #require(try SystemCalls.info(of: "link", in: folder))
        #expect(link.isSymbolicLink && !link.isSameFile(as: opened))
        let followed = try #require(try SystemCalls.info(of: "link", in: folder, followsLinks: true))
        #expect(followed.isSameFile(as: opened))
        #expect(try SystemCalls.info(of: "missing", in: folder) == nil)

        #expect(try SystemCalls.readLink("link", in: folder) == Array("data".utf8))
        let notLink = #expect(throws: ByteStreamError.self) { try SystemCalls.readLink("data", in: folder) }
        #expect(notLink?.errno == Errno.invalidArgument)
        let throughLink = try SystemCalls.resolvedPath(Pathname(directory.path + "/link"))
        let direct = try SystemCalls.resolvedPath(Pathname(file))
        #expect(throughLink == direct && throughLink.lastComponent == "data")
        let missing = #expect(throws: ByteStreamError.self) { try SystemCalls.resolvedPath(Pathname(file + "-not")) }
        #expect(missing?.errno == Errno.noSuchFile)

        let duplicate = try SystemCalls.duplicate(fd, target: "data")
        defer { try? SystemCalls.close(duplicate, target: "data") }
        let duplicated = try SystemCalls.info(of: duplicate, target: "data")
        #expect(duplicate != fd && duplicated.isSameFile(as: opened))
        #expect(!SystemCalls.isTerminal(fd))
    }

    @Test("gmtime_r's fields in people's numbering, and printf's rounding")
    func cLibrary() throws {
        // 2000-02-29T01:01:01Z: a leap day, and every field distinct from its C numbering.
        let time = try #require(CLibrary.universalTime(951_782_400 + 3661))
        let fields: [Int] = [time.year, time.month, time.day, time.hour, time.minute, time.second]
        #expect(fields == [2000, 2, 29, 1, 1, 1])
        #expect(CLibrary.format(0, "%5.1f%%") == "  0.0%")
        // 62.55 is 62.549999… in binary: C rounds what is stored.
        #expect(CLibrary.format(62.55, "%5.1f%%") == " 62.5%")
        #expect(CLibrary.format(100, "%5.1f%%") == "100.0%")
    }

    #if os(Linux)
    /// Runs `body` with a new file `data` holding the 5 bytes `head:`, open for reading and
    /// writing, in a new directory under `parent`; both are removed afterwards.
    static func withHeadFile(in parent: String, _ body: (Int32) throws -> Void) throws {
        let directory = parent + "/gzstream-reserve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = try SystemCalls.open(Pathname(directory), in: SystemCalls.currentDirectory,
                                          flags: OpenFlag.readOnly | OpenFlag.directory)
        defer { try? SystemCalls.close(folder, target: "directory") }
        let fd = try SystemCalls.open("data", in: folder, flags: O_RDWR | OpenFlag.create | OpenFlag.exclusive,
                                      mode: 0o600)
        defer { try? SystemCalls.close(fd, target: "data") }
        try SystemCalls.write(fd, Array("head:".utf8), at: 0, target: "data")
        try body(fd)
    }

    /// Whether the temporary directory is on ext2/3/4, the only file systems reserveSpace acts on.
    static let temporaryIsExt4: Bool = fileSystemType(of: FileManager.default.temporaryDirectory.path) == SystemCalls.ext4FileSystemType

    /// The file system type of the directory `path` (``SystemCalls/fileSystemType(of:)``).
    static func fileSystemType(of path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return SystemCalls.fileSystemType(of: fd)
    }

    @Test("reserveSpace: a range's blocks allocated, the size kept until writes reach them, the bytes before kept, the blocks freed by a cut at the size; nothing for an empty or negative range or a pipe",
          .enabled(if: temporaryIsExt4, "needs the temporary directory on ext4"))
    func reserveSpace() throws {
        try Self.withHeadFile(in: FileManager.default.temporaryDirectory.path) { fd in
            #expect(!SystemCalls.reserveSpace(fd, offset: 5, length: 0))
            #expect(!SystemCalls.reserveSpace(fd, offset: -1, length: 10))
            #expect(!SystemCalls.reserveSpace(fd, offset: 5, length: Int64.max))
            #expect(try SystemCalls.status(of: fd, target: "data").st_size == 5)

            #expect(SystemCalls.reserveSpace(fd, offset: 5, length: 1 << 20))
            let reserved = try SystemCalls.status(of: fd, target: "data")
            #expect(reserved.st_size == 5)
            #expect(Int64(reserved.st_blocks) * 512 >= 1 << 20)
            // Writes into the range grow the file as far as they reach, and no further.
            try SystemCalls.write(fd, [UInt8](repeating: 7, count: 100), at: 1000, target: "data")
            #expect(try SystemCalls.status(of: fd, target: "data").st_size == 1100)
            var back = [UInt8](repeating: 0xff, count: 2000)
            #expect(try SystemCalls.read(fd, &back, back.count, at: 0, target: "data") == 1100)
            #expect(Array(back.prefix(5)) == Array("head:".utf8) && back[5..<1000].allSatisfy { $0 == 0 } && back[1000..<1100].allSatisfy { $0 == 7 })
            // A cut at the file's own size frees the blocks past it, as writeRemaining's end relies on.
            try SystemCalls.truncate(fd, toSize: 1100, target: "data")
            #expect(Int64(try SystemCalls.status(of: fd, target: "data").st_blocks) * 512 < 1 << 20)

            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            defer { close(ends[0]); close(ends[1]) }
            #expect(!SystemCalls.reserveSpace(ends[1], offset: 0, length: 4096))
        }
    }

    /// Whether `/dev/shm` is a tmpfs: a file system other than ext4 that every Linux machine
    /// here has, and that takes fallocate(2).
    static let sharedMemoryIsTmpfs: Bool = fileSystemType(of: "/dev/shm") == 0x0102_1994

    @Test("reserveSpace: nothing on a file system other than ext4 (tmpfs here): the size stays, no block is taken",
          .enabled(if: sharedMemoryIsTmpfs, "needs /dev/shm on tmpfs"))
    func reserveSpaceOffExt4() throws {
        // btrfs is the case that matters (it writes into preallocated extents in place, without
        // its compression); it cannot be made here without root, a loop device and mkfs.btrfs.
        try Self.withHeadFile(in: "/dev/shm") { fd in
            #expect(!SystemCalls.reserveSpace(fd, offset: 5, length: 1 << 20))
            let after = try SystemCalls.status(of: fd, target: "data")
            #expect(after.st_size == 5)
            #expect(Int64(after.st_blocks) * 512 < 1 << 20)
        }
    }
    #endif
}
