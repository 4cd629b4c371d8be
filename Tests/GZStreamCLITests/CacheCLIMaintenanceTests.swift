import Foundation
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream cache`, continued: remove, clear, prune and limits, the directory, processes at once.

extension CacheCLITests {
    // MARK: remove, clear, prune, limits

    @Test("remove: exit 0 when there was an entry; 1 and not found when there was none (-q quiet, -f no error)")
    func remove() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("x".utf8))
            try await cache.put("other", Array("y".utf8))
            let removed = try await cache.run(["remove", "-v", "k"])
            #expect(removed.status == 0 && removed.out == "" && removed.err == "gzstream: cache: k: removed\n")
            #expect(cache.files() == [try cache.name("other")])
            let absent = try await cache.run(["remove", "k"])
            #expect(absent.status == 1 && absent.out == "" && absent.err == missLine("k", "not found"))
            let quiet = try await cache.run(["remove", "-q", "k"])
            #expect(quiet.status == 1 && quiet.out == "" && quiet.err == "")
            let forced = try await cache.run(["remove", "-f", "k"])
            #expect(forced.status == 0 && forced.out == "" && forced.err == "")
            #expect(cache.files() == [try cache.name("other")])
        }
    }

    @Test("clear removes every entry and temporary file, nothing else")
    func clear() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            for key in ["a", "b", "c"] { try await cache.put(key, Array(key.utf8)) }
            try Data("partial".utf8).write(to: URL(fileURLWithPath: cache.directory + "/.tmp-0123456789abcdef"))
            try Data("notes".utf8).write(to: URL(fileURLWithPath: cache.directory + "/notes"))
            let cleared = try await cache.run(["clear", "-v"])
            #expect(cleared.status == 0 && cleared.out == "" && cleared.err == "gzstream: cache: removed 3 entries\n")
            #expect(cache.files() == ["notes"])
            let again = try await cache.run(["clear"])
            #expect(again.status == 0 && again.out == "" && again.err == "")
            #expect(try await cache.run(["clear", "-v"]).err == "gzstream: cache: removed 0 entries\n")
        }
    }

    @Test("--max-age: an older entry is an expired miss for get (and removed); prune removes the rest, and old temporary files")
    func maximumAge() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            for key in ["old", "older", "recent"] { try await cache.put(key, Array(key.utf8)) }
            let now = Int(Date().timeIntervalSince1970)
            setModificationTime(try cache.entryPath("old"), seconds: now - 3 * 86400)
            setModificationTime(try cache.entryPath("older"), seconds: now - 4 * 86400)
            setModificationTime(try cache.entryPath("recent"), seconds: now - 3600)
            let temporary = cache.directory + "/.tmp-0123456789abcdef"
            try Data("partial".utf8).write(to: URL(fileURLWithPath: temporary))
            setModificationTime(temporary, seconds: now - 7200)

            let expired = try await cache.run(["get", "old", "--max-age", "2d"])
            #expect(expired.status == 1 && expired.out == "")
            let prefix = "gzstream: cache: old: expired (last used "
            let age = Int(expired.err.dropFirst(prefix.count).prefix { $0.isNumber }) ?? -1
            #expect(expired.err.hasPrefix(prefix) && expired.err == "\(prefix)\(age) s ago)\n", "\(expired)")
            #expect(age >= 3 * 86400 && age < 3 * 86400 + 600)
            #expect(try await cache.run(["get", "-q", "old", "--max-age", "2d"]).err == "")  // now removed: not found, quiet
            #expect(try await cache.run(["get", "recent", "--max-age", "2d"]).out == "recent")

            let olderSize = fileStatus(try cache.entryPath("older"))?.size ?? 0
            let pruned = try await cache.run(["prune", "-v", "--max-age", "2d"])
            #expect(pruned.status == 0 && pruned.out == "")
            #expect(pruned.err == "gzstream: cache: pruned 1 expired, 0 evicted, 1 abandoned temporary file; "
                + "\(olderSize + 7) bytes freed\n")
            #expect(cache.files() == [try cache.name("recent")])
        }
    }

    @Test("--max-size: prune and put evict least recently used first; a hit counts as a use")
    func maximumSize() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let keys = ["e1", "e2", "e3", "e4"]
            for (index, key) in keys.enumerated() {
                try await cache.put(key, randomBytes(count: 10_000, seed: UInt64(index)))
                setModificationTime(try cache.entryPath(key), seconds: 1_700_000_001 + index)
            }
            func size(_ key: String) throws -> Int64 { try #require(fileStatus(try cache.entryPath(key))).size }
            let sizes = try Dictionary(uniqueKeysWithValues: keys.map { ($0, try size($0)) })
            // e1 is the oldest, until a hit makes it the newest.
            #expect(try await cache.run(["get", "e1"]).status == 0)
            let limit = sizes["e1"]! + sizes["e3"]! + sizes["e4"]!
            let pruned = try await cache.run(["prune", "-v", "--max-size", String(limit)])
            #expect(pruned.status == 0 && pruned.out == "")
            #expect(pruned.err == "gzstream: cache: pruned 0 expired, 1 evicted, 0 abandoned temporary files; \(sizes["e2"]!) bytes freed\n")
            #expect(try cache.files() == ["e1", "e3", "e4"].map { try cache.name($0) }.sorted())

            // A put over the limit evicts the least recently used (e3), never the entry just put.
            try await cache.put("e5", randomBytes(count: 10_000, seed: 9), options: ["--max-size", String(limit)])
            #expect(try cache.files() == ["e1", "e4", "e5"].map { try cache.name($0) }.sorted())
            // Without a limit nothing is evicted.
            #expect(try await cache.run(["prune", "-v"]).err
                == "gzstream: cache: pruned 0 expired, 0 evicted, 0 abandoned temporary files; 0 bytes freed\n")
            #expect(cache.files().count == 3)
        }
    }

    @Test("a put larger than --max-size alone: exit 2, a warning (not under -q), nothing kept, no other entry lost")
    func putOverLimit() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("small", Array("small".utf8))
            let big = randomBytes(count: 5000, seed: 8)
            // The same bytes under another key in another cache make a file of the same size.
            let probe = try CacheUnderTest(scratch, name: "probe")
            try await probe.put("big", big)
            let bigSize = try #require(fileStatus(try probe.entryPath("big"))).size
            let input = try scratch.write("big", big)
            let put = try await cache.run(["put", "big", input, "--max-size", "1K"])
            #expect(put.status == 2 && put.out == "")
            #expect(put.err == "gzstream: cache: big: not kept: its \(bigSize) bytes are more than --max-size 1024\n")
            let quiet = try await cache.run(["put", "-q", "big", input, "--max-size", "1K"])
            #expect(quiet.status == 2 && quiet.out == "" && quiet.err == "")
            #expect(cache.files() == [try cache.name("small")])
        }
    }

    @Test("-0 … -9 and --level set put's compression")
    func levels() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let text = sampleText(byteCount: 200_000)
            try await cache.put("stored", text, options: ["-0"])
            try await cache.put("best", text, options: ["--level", "9"])
            let stored = try #require(fileStatus(try cache.entryPath("stored"))).size
            let best = try #require(fileStatus(try cache.entryPath("best"))).size
            #expect(stored > 200_000 && best < 100_000)
            #expect(try await cache.run(["get", "stored"]).stdout == text)
        }
    }

    @Test("-p N and --threads N: one or several deflating threads give the same bytes back; 0 is a usage error")
    func threads() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let text = sampleText(byteCount: 3 << 20)
            try await cache.put("one", text, options: ["-p", "1"])
            try await cache.put("two", text, options: ["--threads=2"])
            try await cache.put("grouped", text, options: ["-9p2"])
            for key in ["one", "two", "grouped"] {
                #expect(try await cache.run(["get", key]).stdout == text, "\(key)")
            }
            let zero = try await cache.run(["put", "-p", "0", "zero"])
            #expect(zero.status == 1 && zero.out == "")
            #expect(zero.err == "gzstream: thread count must be 1 to 256, not '0'\n" + cacheTryHelpLine, "\(zero.err)")
        }
    }

    // MARK: The directory

    @Test("the default directory: $XDG_CACHE_HOME/gzstream when absolute, else $HOME/.cache/gzstream, else an error")
    func defaultDirectory() async throws {
        try await withAsyncScratch { scratch in
            let input = try scratch.write("input", "cached\n")
            func put(_ environment: [String]) async throws -> RunResult {
                try await runAsync("/usr/bin/env", ["-i"] + environment + [Locations.binary, "cache", "put", "k", input], in: scratch)
            }
            let name = try DiskCache(directory: scratch.path("probe")).entryFileName(forKey: "k")
            let xdg = try await put(["XDG_CACHE_HOME=\(scratch.path("xdg"))", "HOME=\(scratch.path("home"))"])
            #expect(xdg.status == 0 && xdg.out == "" && xdg.err == "", "\(xdg)")
            #expect(FileManager.default.fileExists(atPath: scratch.path("xdg/gzstream/\(name)")))
            let home = try await put(["XDG_CACHE_HOME=relative", "HOME=\(scratch.path("home"))"])
            #expect(home.status == 0 && home.out == "" && home.err == "", "\(home)")
            #expect(FileManager.default.fileExists(atPath: scratch.path("home/.cache/gzstream/\(name)")))
            let none = try await put([])
            #expect(none.status == 1 && none.out == "")
            #expect(none.err == "gzstream: cache: no cache directory: give --dir DIR, or set XDG_CACHE_HOME or HOME\n")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("relative")))
        }
    }

    @Test("--dir naming a file, or a directory that cannot be made: one line, exit 1")
    func badDirectory() async throws {
        try await withAsyncScratch { scratch in
            let file = try scratch.write("file", "x")
            let notDirectory = try await gzstreamAsync(["cache", "--dir", file, "list"], in: scratch)
            #expect(notDirectory.status == 1 && notDirectory.out == "")
            #expect(notDirectory.err == "gzstream: \(file): not a directory\n")
            let under = try await gzstreamAsync(["cache", "--dir", file + "/sub", "list"], in: scratch)
            #expect(under.status == 1 && under.out == "")
            #expect(under.err == "gzstream: \(file)/sub: open failed: Not a directory\n")
            let putUnder = try await gzstreamAsync(["cache", "--dir", file + "/sub", "put", "k", file], in: scratch)
            #expect(putUnder.status == 1 && putUnder.out == "")
            #expect(putUnder.err == "gzstream: cache: k: cannot store: open failed: Not a directory\n")
        }
    }

    @Test("a cache directory group or others may write, or a symbolic link, is refused by every command: one line, exit 1",
          arguments: [0o770, 0o777, 0o707] as [mode_t])
    func untrustedDirectory(mode: mode_t) async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("value".utf8))
            let input = try scratch.write("input", "new value")
            try #require(chmod(cache.directory, mode) == 0)
            let refusal = "gzstream: \(cache.directory): untrusted cache directory: writable by group or others "
                + "(mode 0\(String(mode, radix: 8)); it must be writable by its owner only)\n"
            for arguments in [["get", "k"], ["put", "k", input], ["list"], ["remove", "k"], ["clear"], ["prune"]] {
                let result = try await cache.run(arguments)
                #expect(result.status == 1 && result.out == "" && result.err == refusal, "\(arguments)")
            }
            try #require(chmod(cache.directory, 0o700) == 0)
            let link = scratch.path("link")
            try #require(symlink(cache.directory, link) == 0)
            for arguments in [["get", "k"], ["list"]] {
                let result = try await gzstreamAsync(["cache", "--dir", link] + arguments, in: scratch)
                #expect(result.status == 1 && result.out == "", "\(arguments)")
                #expect(result.err == "gzstream: \(link): untrusted cache directory: a symbolic link (give the directory itself)\n")
            }
            // Nothing was changed: the entry is still there for the directory itself.
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 0 && get.out == "value" && get.err == "")
        }
    }

    @Test("a cache directory another user owns is refused: one line, exit 1, nothing read",
          .enabled(if: geteuid() == 0, "needs root to give the directory to nobody (uid 65534)"))
    func foreignDirectory() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("value".utf8))
            try #require(chown(cache.directory, 65534, 65534) == 0)
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: \(cache.directory): untrusted cache directory: owned by uid 65534 "
                + "(it must be owned by uid 0, the effective user, and writable by no one else)\n")
        }
    }

    @Test("an entry another user wrote for our key is a damaged miss: nothing on standard output, exit 1, removed",
          .enabled(if: geteuid() == 0, "needs root to give the entry to nobody (uid 65534)"))
    func foreignEntry() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("attacker's bytes".utf8))
            let path = try cache.entryPath("k")
            try #require(chown(path, 65534, 65534) == 0)
            setModificationTime(path, seconds: 1_700_000_000)
            let list = try await cache.run(["list"])
            let stored = String(fileStatus(path)?.size ?? -1)
            #expect(list.status == 0 && list.err == "")
            #expect(list.out == "      stored        plain  last use (UTC)        key hash\n"
                + String(repeating: " ", count: 12 - stored.count) + stored + "            -  2023-11-14T22:13:20Z  \(try cache.name("k"))\n")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: cache: k: damaged entry removed: entry file owned by uid 65534, not by this user\n")
            #expect(cache.files() == [])
        }
    }

    @Test("with a key, list shows no plain size a header was changed to, and get is a damaged miss")
    func forgedPlainSize() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: true)
            try await cache.put("k", sampleText(byteCount: 1000))
            let path = try cache.entryPath("k")
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[14] = 0xff  // 1000 becomes 65512
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            setModificationTime(path, seconds: 1_700_000_000)
            let stored = String(bytes.count)
            let list = try await cache.run(["list"])
            #expect(list.status == 0 && list.err == "")
            #expect(list.out == "      stored        plain  last use (UTC)        key hash\n"
                + String(repeating: " ", count: 12 - stored.count) + stored + "            -  2023-11-14T22:13:20Z  \(try cache.name("k"))\n")
            let json = try await cache.run(["list", "--json"])
            #expect(json.out == "[\n{\"name\":\"\(try cache.name("k"))\",\"storedSize\":\(stored),\"plainSize\":null,"
                + "\"lastUse\":\"2023-11-14T22:13:20Z\",\"encrypted\":null}\n]\n")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: cache: k: damaged entry removed: entry header not authenticated (changed, or written with another key)\n")
        }
    }

    // MARK: Processes at once

    /// Three processes put two different multi-MiB values under one key, four times each, while
    /// three others get it in loops (two to standard output, one with `-o`). Each get records
    /// whether the first put had finished before it started (a marker file the putters touch
    /// after each put), so a miss can be judged without timing: only "not found", only before.
    @Test("concurrent puts and gets in separate processes: every get is one value whole, or a miss before the first put",
          .timeLimit(.minutes(5)))
    func concurrentProcesses() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let valueA = try scratch.write("A", randomBytes(count: 3 << 20, seed: 21))
            let valueB = try scratch.write("B", sampleText(byteCount: 5 << 20, seed: 22))
            let logs = scratch.path("logs")
            try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: false)
            let script = #"""
            G=$0 D=$1 A=$2 B=$3 W=$4
            putter() {
              i=0
              while [ $i -lt 4 ]; do
                if [ $(( (i + $1) % 2 )) = 0 ]; then v=$A; else v=$B; fi
                "$G" cache --dir "$D" put K "$v" 2>>"$W/put$1.err"; s=$?
                [ $s = 0 ] || echo "put exit $s" >>"$W/put$1.err"
                : >"$W/first-put-done"
                i=$((i + 1))
              done
            }
            getter() {
              i=0
              while [ $i -lt 400 ] && [ ! -e "$W/puts-done" ]; do
                if [ -e "$W/first-put-done" ]; then phase=after; else phase=before; fi
                rm -f "$W/out$1"
                if [ "$2" = file ]; then
                  "$G" cache --dir "$D" get K -o "$W/out$1" 2>"$W/err$1"; s=$?
                else
                  "$G" cache --dir "$D" get K >"$W/out$1" 2>"$W/err$1"; s=$?
                fi
                if [ $s = 0 ]; then
                  if cmp -s "$W/out$1" "$A"; then echo "$phase hit A"
                  elif cmp -s "$W/out$1" "$B"; then echo "$phase hit B"
                  else echo "$phase BAD output of $(wc -c <"$W/out$1") bytes"; fi
                elif [ -s "$W/out$1" ]; then
                  echo "$phase BAD miss $s wrote $(wc -c <"$W/out$1") bytes: $(cat "$W/err$1")"
                else
                  echo "$phase miss $s $(cat "$W/err$1")"
                fi
                i=$((i + 1))
              done >"$W/get$1.log"
            }
            getter 1 stdout & g1=$!
            getter 2 stdout & g2=$!
            getter 3 file & g3=$!
            putter 1 & p1=$!
            putter 2 & p2=$!
            putter 3 & p3=$!
            wait $p1 $p2 $p3
            : >"$W/puts-done"
            wait $g1 $g2 $g3
            """#
            let result = try await runAsync("/bin/sh", ["-c", script, Locations.binary, cache.directory, valueA, valueB, logs],
                                 in: scratch, timeout: 280)
            #expect(result.status == 0 && !result.timedOut, "\(result)")

            for putter in 1...3 {
                #expect((try? String(contentsOfFile: "\(logs)/put\(putter).err", encoding: .utf8)) ?? "" == "", "putter \(putter)")
            }
            var hits = 0
            var misses = 0
            for getter in 1...3 {
                let log = try String(contentsOfFile: "\(logs)/get\(getter).log", encoding: .utf8)
                for line in log.split(separator: "\n") {
                    if line.hasSuffix(" hit A") || line.hasSuffix(" hit B") {
                        hits += 1
                    } else if line == "before miss 1 gzstream: cache: K: not found" {
                        misses += 1
                    } else {
                        Issue.record("getter \(getter): \(line)")
                    }
                }
            }
            // Once every put is done the entry is one of the two values, whole.
            let last = try await cache.run(["get", "K"])
            #expect(last.status == 0 && last.err == "")
            let values = [try readBytes(valueA), try readBytes(valueB)]
            #expect(values.contains(last.stdout))
            #expect(cache.files() == [try cache.name("K")], "no .tmp- file is left")
            #expect(try FileManager.default.contentsOfDirectory(atPath: logs).filter { $0.hasPrefix(".gzstream-") } == [])
            print("concurrent cache test: \(hits) hits, \(misses) misses before the first put")
        }
    }
}
