import Foundation
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream cache`, continued: get's output and misses, encryption, damage, list.

extension CacheCLITests {
    // MARK: get's output and misses

    @Test("get -o refuses an existing file without -f, before the lookup; -f replaces it")
    func existingOutput() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("cached\n".utf8))
            let out = try scratch.write("out", "mine\n")
            for key in ["k", "missing"] {
                let refused = try await cache.run(["get", key, "-o", out])
                #expect(refused.status == 1 && refused.out == "")
                #expect(refused.err == "gzstream: \(out): already exists; not overwritten (use -f to overwrite)\n")
                #expect(try scratch.read("out") == Array("mine\n".utf8))
            }
            let forced = try await cache.run(["get", "k", "-f", "-o", out])
            #expect(forced.status == 0 && forced.out == "" && forced.err == "", "\(forced)")
            #expect(try scratch.read("out") == Array("cached\n".utf8))
            // A miss with -f leaves the file as it was.
            let miss = try await cache.run(["get", "missing", "-f", "-o", out])
            #expect(miss.status == 1 && miss.err == missLine("missing", "not found"))
            #expect(try scratch.read("out") == Array("cached\n".utf8))
        }
    }

    @Test("a miss: exit 1, nothing on standard output, no -o file; -q says nothing of it")
    func miss() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let plain = try await cache.run(["get", "nothing here"])
            #expect(plain.status == 1 && plain.out == "" && plain.err == missLine("nothing here", "not found"))
            let quiet = try await cache.run(["get", "-q", "nothing here"])
            #expect(quiet.status == 1 && quiet.out == "" && quiet.err == "")
            let toFile = try await cache.run(["get", "nothing here", "-o", scratch.path("out")])
            #expect(toFile.status == 1 && toFile.out == "" && toFile.err == missLine("nothing here", "not found"))
            // No -o file, and no cache directory either: only a put makes it.
            #expect(try scratch.listing() == [])
        }
    }

    @Test("get -o a device writes into it; -o /dev/stdout writes through the descriptor")
    func outputsThatAreNotFiles() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("bytes\n".utf8))
            let null = try await cache.run(["get", "k", "-o", "/dev/null"])
            #expect(null.status == 0 && null.out == "" && null.err == "", "\(null)")
            let stdout = try await cache.run(["get", "k", "-o", "/dev/stdout"])
            #expect(stdout.status == 0 && stdout.out == "bytes\n" && stdout.err == "", "\(stdout)")
            let dash = try await cache.run(["get", "k", "-o", "-"])
            #expect(dash.status == 0 && dash.out == "bytes\n" && dash.err == "", "\(dash)")
            let directory = try await cache.run(["get", "k", "-o", cache.directory])
            #expect(directory.status == 1 && directory.out == "")
            #expect(directory.err == "gzstream: \(cache.directory): is a directory (give -o DIRECTORY/NAME)\n")
        }
    }

    @Test("get into a closed pipe ends as every filter does", .timeLimit(.minutes(1)),
          arguments: [BrokenPipeSignal.fatal, .ignored])
    func closedPipe(sigpipe: BrokenPipeSignal) async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", randomBytes(count: 1 << 20, seed: 3))
            let run = try gzstreamIntoClosedPipe("cache --dir \(cache.directory) get k", sigpipe: sigpipe, in: scratch)
            #expect(run.status == sigpipe.statusLine, "\(run)")
            #expect(run.err == sigpipe.message(naming: "standard output"), "\(run)")
        }
    }

    // MARK: Encryption

    @Test("key files: a wrong size or a missing file is one line and exit 1, before the cache is made",
          arguments: [0, 31, 33, 100])
    func wrongKeyFile(size: Int) async throws {
        try await withAsyncScratch { scratch in
            let keyFile = try scratch.write("key", randomBytes(count: size, seed: 9))
            for arguments in [["put", "k", keyFile], ["get", "k"], ["list"]] {
                let result = try await gzstreamAsync(["cache", "--dir", scratch.path("c"), "--key-file", keyFile] + arguments, in: scratch)
                #expect(result.status == 1 && result.out == "")
                #expect(result.err == "gzstream: \(keyFile): a key file must hold exactly 32 bytes, not \(size)\n")
            }
            let missing = try await gzstreamAsync(["cache", "--dir", scratch.path("c"), "--key-file", scratch.path("none"), "list"], in: scratch)
            #expect(missing.status == 1 && missing.out == "")
            #expect(missing.err == "gzstream: \(scratch.path("none")): cannot read the key file: No such file or directory\n")
            #expect(try scratch.listing() == ["key"])
        }
    }

    @Test("an entry put with a key is found only with that key; its file holds no plain text")
    func otherKeysMiss() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: true)
            let secret = Array(String(repeating: "attack at dawn\n", count: 100).utf8)
            try await cache.put("k", secret)
            let stored = try readBytes(try cache.entryPath("k"))
            #expect(!String(decoding: stored, as: UTF8.self).contains("attack"))
            let other = try scratch.write("other.key", randomBytes(count: 32, seed: 33))
            chmod(other, 0o600)
            for extra in [["--key-file", other], []] {
                let result = try await gzstreamAsync(["cache", "--dir", cache.directory] + extra + ["get", "k"], in: scratch)
                #expect(result.status == 1 && result.out == "" && result.err == missLine("k", "not found"), "\(result)")
            }
            #expect(cache.files() == [try cache.name("k")])
            let right = try await cache.run(["get", "k"])
            #expect(right.status == 0 && right.stdout == secret && right.err == "")
        }
    }

    // MARK: Damage

    /// One way to damage an entry file, and the message get then gives (after
    /// `damaged entry removed: `), from the file as it was before and the plain bytes.
    struct Damage: Sendable, CustomStringConvertible {
        var description: String
        var encrypted: Bool
        var damage: @Sendable (inout [UInt8]) -> Void
        /// `nil`: the message depends on where zlib put its block boundaries; only its start is
        /// checked.
        var message: @Sendable (_ before: [UInt8], _ plain: [UInt8]) -> String?
        var messageStart = ""
    }

    /// The encrypted payload starts at byte 16; its chunks of 64 KiB of plaintext take
    /// 4 + 65536 + 17 bytes each, after a 9-byte prefix and a 24-byte header.
    static let chunkBytes = 4 + 65_536 + 17

    static let damages: [Damage] = [
        Damage(description: "cut in half", encrypted: false, damage: { $0.removeLast($0.count - $0.count / 2) },
               message: { before, _ in "gzip data invalid: unexpected end of input in the deflate data of member 1 at byte \(before.count / 2 - 16)" }),
        Damage(description: "a bit flipped in the stored CRC-32", encrypted: false, damage: { $0[$0.count - 8] ^= 0x04 },
               message: { before, plain in
                   let stored = before[(before.count - 8)...].prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } ^ 0x04
                   return "gzip data invalid: CRC-32 mismatch in member 1 at byte \(before.count - 16 - 8) "
                       + "(stored \(hex8(stored)), computed \(hex8(referenceCRC32(plain))))"
               }),
        Damage(description: "a bit flipped in the deflate data", encrypted: false, damage: { $0[$0.count / 2] ^= 0x10 },
               message: { _, _ in nil }, messageStart: "gzip data invalid: "),
        Damage(description: "a bit flipped in the plain size", encrypted: false, damage: { $0[15] ^= 0x01 },
               message: { _, plain in "plain size \(plain.count ^ 1) in the header, \(plain.count) bytes in the member" }),
        Damage(description: "a bit flipped in the magic", encrypted: false, damage: { $0[0] ^= 0x01 },
               message: { _, _ in "not a gzstream cache entry" }),
        Damage(description: "cut inside the header", encrypted: false, damage: { $0.removeLast($0.count - 10) },
               message: { _, _ in "entry header cut at byte 10" }),
        // An encrypted entry's payload starts at byte 70: the 16-byte header, then its 54-byte seal.
        Damage(description: "cut inside chunk 2", encrypted: true, damage: { $0.removeLast($0.count - (70 + 33 + chunkBytes + 1000)) },
               message: { _, _ in "decryption failed: unexpected end of encrypted input in chunk 2, before the final chunk at byte \(33 + chunkBytes + 1000)" }),
        Damage(description: "a bit flipped in chunk 3", encrypted: true, damage: { $0[70 + 33 + 2 * chunkBytes + 30_000] ^= 0x80 },
               message: { _, _ in "decryption failed: authentication failed for chunk 3 at byte \(33 + 2 * chunkBytes) "
                   + "(wrong key, or the data was changed, reordered or cut)" }),
        Damage(description: "the encryption flag cleared", encrypted: true, damage: { $0[5] = 0 },
               message: { _, _ in "entry is not encrypted and a key was given" }),
    ]

    @Test("damage through the CLI: get exits 1, writes nothing, says why (also under -q) and removes the entry",
          arguments: damages, [false, true])
    func damagedEntry(damage: Damage, toFile: Bool) async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: damage.encrypted)
            let plain = randomBytes(count: 1 << 20, seed: 77)
            try await cache.put("k", plain)
            let path = try cache.entryPath("k")
            let before = try readBytes(path)
            var bytes = before
            damage.damage(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let result = try await cache.run(toFile ? ["get", "-q", "k", "-o", scratch.path("out")] : ["get", "k"])
            #expect(result.status == 1)
            #expect(result.out == "")
            let prefix = "gzstream: cache: k: damaged entry removed: "
            if let message = damage.message(before, plain) {
                #expect(result.err == prefix + message + "\n")
            } else {
                #expect(result.err.hasPrefix(prefix + damage.messageStart) && result.errLines.count == 1, "\(result)")
            }
            #expect(cache.files() == [])
            #expect(try scratch.listing().filter { $0 != "cache.key" } == ["cache"])
            // The next lookup is a plain miss.
            #expect(try await cache.run(["get", "k"]).err == missLine("k", "not found"))
        }
    }

    @Test("a FIFO under an entry's name is no entry: list skips it, get is a damaged miss and removes it; nothing waits",
          .timeLimit(.minutes(1)))
    func fifoUnderEntryName() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let path = try cache.entryPath("k")
            try FileManager.default.createDirectory(atPath: cache.directory, withIntermediateDirectories: true)
            #expect(mkfifo(path, 0o600) == 0)
            let list = try await cache.run(["list", "--json"])
            #expect(list.status == 0 && list.out == "[]\n" && list.err == "", "\(list)")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "" && get.err == missLine("k", "damaged entry removed: not a gzstream cache entry"),
                    "\(get)")
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(mkfifo(path, 0o600) == 0)
            try await cache.put("k", Array("value".utf8))
            #expect(try await cache.run(["get", "k"]).out == "value")
        }
    }

    // MARK: list

    @Test("list: a header and a row per entry, least recently used first; --json, exact")
    func list() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let encrypted = try CacheUnderTest(scratch, encrypted: true)  // the same directory, with a key
            try await cache.put("alpha", sampleText(byteCount: 1000))
            try await cache.put("beta", [])
            try await encrypted.put("gamma", randomBytes(count: 5000, seed: 4))
            let junk = String(repeating: "ff", count: 32)
            try Data("junk".utf8).write(to: URL(fileURLWithPath: cache.directory + "/" + junk))
            // Neither a temporary file nor another name is an entry.
            try Data("partial".utf8).write(to: URL(fileURLWithPath: cache.directory + "/.tmp-0123456789abcdef"))
            try Data("notes".utf8).write(to: URL(fileURLWithPath: cache.directory + "/notes"))
            setModificationTime(try cache.entryPath("alpha"), seconds: 1_700_000_300)
            setModificationTime(try cache.entryPath("beta"), seconds: 1_700_000_100)
            // The fraction is dropped, not rounded. (The library keeps times as a Double, which
            // cannot tell .999999999 from the next second at this magnitude: .999 it can.)
            setModificationTime(try encrypted.entryPath("gamma"), seconds: 1_700_000_200, nanoseconds: 999_000_000)
            setModificationTime(cache.directory + "/" + junk, seconds: 1_600_000_000)

            func size(_ path: String) -> Int64 { fileStatus(path)?.size ?? -1 }
            let rows: [(name: String, stored: Int64, plain: String, time: String, encrypted: String)] = [
                (junk, 4, "-", "2020-09-13T12:26:40Z", "null"),
                (try cache.name("beta"), size(try cache.entryPath("beta")), "0", "2023-11-14T22:15:00Z", "false"),
                (try encrypted.name("gamma"), size(try encrypted.entryPath("gamma")), "5000", "2023-11-14T22:16:40Z", "true"),
                (try cache.name("alpha"), size(try cache.entryPath("alpha")), "1000", "2023-11-14T22:18:20Z", "false"),
            ]
            let table = try await cache.run(["list"])
            #expect(table.status == 0 && table.err == "")
            #expect(table.out == "      stored        plain  last use (UTC)        key hash\n"
                + rows.map { "\(pad(String($0.stored), 12)) \(pad($0.plain, 12))  \($0.time)  \($0.name)\n" }.joined())

            // With a key, only authenticated headers give sizes: the unencrypted entries' are null.
            let json = try await encrypted.run(["list", "--json"])
            #expect(json.status == 0 && json.err == "")
            #expect(json.out == "[\n" + rows.map {
                "{\"name\":\"\($0.name)\",\"storedSize\":\($0.stored),\"plainSize\":\($0.encrypted == "true" ? $0.plain : "null"),"
                    + "\"lastUse\":\"\($0.time)\",\"encrypted\":\($0.encrypted == "true" ? "true" : "null")}"
            }.joined(separator: ",\n") + "\n]\n")
            let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]]
            #expect(parsed?.count == 4)
        }
    }

    @Test("list of a missing cache: the header alone, or []; nothing is made until a put makes the directory, mode 0700")
    func listEmpty() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch, name: "new/cache")
            let table = try await cache.run(["list"])
            #expect(table.status == 0 && table.err == "")
            #expect(table.out == "      stored        plain  last use (UTC)        key hash\n")
            let json = try await cache.run(["list", "--json"])
            #expect(json.status == 0 && json.out == "[]\n" && json.err == "")
            #expect(fileStatus(cache.directory) == nil)
            try await cache.put("k", Array("value".utf8))
            #expect(fileStatus(cache.directory)?.permissions == 0o700)
        }
    }
}
