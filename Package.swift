// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "gzstream",
    // Built and tested on Linux only. The libraries need macOS 15 for the Synchronization module
    // (Mutex, Atomic); nothing has been built or run on Apple platforms (docs/install.md).
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ByteStreams", targets: ["ByteStreams"]),
        .library(name: "GzipStreams", targets: ["GzipStreams"]),
        .library(name: "ByteStreamsFoundation", targets: ["ByteStreamsFoundation"]),
        .library(name: "SecretStreams", targets: ["SecretStreams"]),
        .library(name: "StreamCache", targets: ["StreamCache"]),
        .library(name: "TarArchives", targets: ["TarArchives"]),
        .library(name: "RatarmountIndexes", targets: ["RatarmountIndexes"]),
        .executable(name: "gzstream", targets: ["gzstream"]),
        .executable(name: "message-exchange", targets: ["MessageExchange"]),
        .executable(name: "async-message-exchange", targets: ["AsyncMessageExchange"]),
        .executable(name: "echo-bench", targets: ["EchoBench"]),
        .executable(name: "gzip-lines", targets: ["GzipLines"]),
    ],
    targets: [
        // zlib through pkg-config; Debian's package is zlib1g-dev.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libdeflate, its static library linked in (module.modulemap says why); Debian's package
        // is libdeflate-dev. Not through pkg-config, which would add -ldeflate, the shared one.
        .systemLibrary(
            name: "CLibdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        // ISA-L through pkg-config; Debian's package is libisal-dev.
        .systemLibrary(
            name: "CIsal",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"]), .brew(["isa-l"])]
        ),
        // libsodium through pkg-config; Debian's package is libsodium-dev.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // SQLite through pkg-config; Debian's package is libsqlite3-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The C library's wide-character classes (<wctype.h>), which Swift's Glibc module leaves
        // out; nothing to link.
        .systemLibrary(name: "CWideCharacters"),
        // Linux's fallocate(2) system call and fstatfs(2)'s file system type, which Swift's Glibc
        // module leaves out; nothing to link.
        .systemLibrary(name: "CFileSpace"),
        .target(name: "ByteStreams", dependencies: ["CFileSpace"]),
        .target(name: "GzipStreams", dependencies: ["ByteStreams", "CZlib", "CLibdeflate", "CIsal"]),
        // The only module that imports all of Foundation: run loops and Foundation's streams.
        .target(name: "ByteStreamsFoundation", dependencies: ["ByteStreams"]),
        // Authenticated encryption as streams; only this module links libsodium.
        .target(name: "SecretStreams", dependencies: ["ByteStreams", "CSodium"]),
        // The two-tier cache: memory, then gzip-compressed (and encrypted) files on disk.
        .target(name: "StreamCache", dependencies: ["ByteStreams", "GzipStreams", "SecretStreams"]),
        // tar archives: reading, writing, indexing members, and extracting safely; the indexed
        // archive reads a member through GzipStreams' range reads.
        .target(name: "TarArchives", dependencies: ["ByteStreams", "GzipStreams"]),
        // ratarmount's `.index.sqlite` read as untrusted input; the only module that links SQLite,
        // so TarArchives' users do not.
        .target(name: "RatarmountIndexes", dependencies: ["ByteStreams", "GzipStreams", "TarArchives", "CSQLite"]),
        .target(name: "GZStreamCLI", dependencies: ["ByteStreams", "GzipStreams", "SecretStreams", "StreamCache", "TarArchives",
                                                    "RatarmountIndexes", "CWideCharacters"]),
        .executableTarget(name: "gzstream", dependencies: ["GZStreamCLI"]),
        // The README's example: a client and server exchanging gzip-compressed messages.
        .executableTarget(name: "MessageExchange", dependencies: ["GzipStreams"], path: "Examples/MessageExchange"),
        // The same client and server in Swift concurrency: `@main`, `async`, awaited sockets.
        .executableTarget(name: "AsyncMessageExchange", dependencies: ["GzipStreams"],
                          path: "Examples/AsyncMessageExchange"),
        // The asynchronous sockets under load: concurrent gzip echoes over loopback (make bench-echo).
        .executableTarget(name: "EchoBench", dependencies: ["GzipStreams"], path: "Examples/EchoBench"),
        // The library's everyday tasks: scoped files, lines, an error's text, a range through an
        // index; it holds the README's library example verbatim, so that example is compiled.
        .executableTarget(name: "GzipLines", dependencies: ["GzipStreams"], path: "Examples/GzipLines"),
        // What every test target shares, as swift-nio ships NIOTestUtils: seeded data, temporary
        // directories, tool traits, the fixture manifest, running blocking tests off the
        // cooperative pool.
        .target(name: "TestSupport", dependencies: ["ByteStreams"], path: "Tests/TestSupport"),
        .testTarget(name: "ByteStreamsTests", dependencies: ["ByteStreams", "TestSupport"]),
        .testTarget(name: "GzipStreamsTests", dependencies: ["GzipStreams", "ByteStreams", "TestSupport"]),
        // Depends on GzipStreams alone, not even TestSupport: `import GzipStreams` must be enough
        // to use the byte streams.
        .testTarget(name: "GzipStreamsImportTests", dependencies: ["GzipStreams"]),
        .testTarget(name: "TarArchivesTests", dependencies: ["TarArchives", "GzipStreams", "ByteStreams", "TestSupport"]),
        .testTarget(name: "RatarmountIndexesTests", dependencies: ["RatarmountIndexes", "TarArchives", "GzipStreams", "ByteStreams",
                                                                 "TestSupport"]),
        .testTarget(name: "SecretStreamsTests", dependencies: ["SecretStreams", "ByteStreams", "GzipStreams", "CSodium", "TestSupport"]),
        .testTarget(name: "StreamCacheTests", dependencies: ["StreamCache", "SecretStreams", "ByteStreams", "GzipStreams", "TestSupport"]),
        // Also SecretStreams and StreamCache: one table checks every public error's
        // `localizedDescription`, which needs Foundation.
        .testTarget(name: "ByteStreamsFoundationTests", dependencies: ["ByteStreamsFoundation", "ByteStreams", "GzipStreams",
                                                                    "SecretStreams", "StreamCache", "TestSupport"]),
        .testTarget(name: "GZStreamCLITests", dependencies: ["GZStreamCLI", "GzipStreams", "ByteStreams", "TarArchives", "StreamCache", "gzstream", "MessageExchange", "AsyncMessageExchange", "GzipLines", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
