import ByteStreams
import Foundation
import GzipStreams
import TarArchives
import Testing
import TestSupport

/// ``TarIndexBuilder`` fed by the GZIDX builder's decode, the index file's round trip and its
/// bounds, and ``IndexedTarArchive`` reading members through both indexes.
@Suite(.onDedicatedThreads, .requires(.tar), .requires(.gzip))
struct TarIndexTests {
    /// A `.tar.gz` of `TarReaderTests.longTree` plus a 300 KB file, made by GNU tar and gzip;
    /// its GZIDX (a point every 64 KiB) and member entries from one decode.
    func indexedArchive(in scratch: URL) throws -> (tar: [UInt8], gzidx: GzipIndex, entries: [TarEntry], binding: TarIndex.Binding) {
        _ = try shell("\(TarReaderTests.longTree) && seq 1 60000 > tree/numbers && tar --format=pax \(TarReaderTests.tarOptions) "
            + "-C tree -cf out.tar . && gzip -k out.tar", in: scratch)
        let compressed = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar.gz")))
        let output = MemoryOutputStream()
        output.open()
        var builder = TarIndexBuilder()
        let summary = try GzipIndexBuilder(span: 64 << 10).build(from: MemoryInputStream(bytes: compressed), into: output,
                                                                  plainBytes: { builder.take($0) })
        guard case .archive(let entries) = builder.finish() else { throw ShellFailure(script: "index", status: 1, stderr: "") }
        let binding = TarIndex.Binding(compressedSize: summary.compressedSize, modificationSeconds: 5, modificationNanoseconds: 7,
                                       compressedTail: Array(compressed.suffix(8)), plainSize: summary.plainSize)
        let tar = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
        return (tar, try GzipIndex(gzidx: [UInt8](output.data)), entries, binding)
    }

    @Test func builderSeesWhatTheReaderSees() throws {
        try withTemporaryDirectory { scratch in
            let (tar, _, entries, _) = try indexedArchive(in: scratch)
            #expect(entries == (try readMembers(tar).map(\.0)))
            var notTar = TarIndexBuilder()
            Array("plain text, not a tar header".utf8 + [UInt8](repeating: 32, count: 600)).withUnsafeBytes { notTar.take($0) }
            #expect(notTar.finish() == .notTar)
            var cut = TarIndexBuilder()
            tar[0..<(entries[3].dataOffset + 10)].withUnsafeBytes { cut.take($0) }
            #expect(cut.finish() == .damaged(TarError(.truncated, offset: entries[3].headerOffset)) || entries[3].size < 10)
        }
    }

    @Test func fileRoundTripAndBounds() throws {
        try withTemporaryDirectory { scratch in
            let (_, _, entries, binding) = try indexedArchive(in: scratch)
            let index = TarIndex(entries: entries, binding: binding)
            let bytes = try index.encoded()
            #expect(bytes.count < TarIndex.maximumFileSize(plainSize: binding.plainSize))
            let decoded = try TarIndex(decoding: bytes, expecting: binding)
            #expect(decoded == index)
            var unknownPlain = binding
            unknownPlain.plainSize = -1
            #expect(try TarIndex(decoding: bytes, expecting: unknownPlain) == index)
            let long = try #require(entries.first { $0.path.count > 255 })
            #expect(index.entry(atPath: long.path) == long)
            #expect(index.entry(atPath: Array("./nope".utf8)) == nil)
            #expect(index.entries(withPathPrefix: Array("./d".utf8)).count == entries.filter { $0.path.starts(with: Array("./d".utf8)) }.count)

            var moved = binding
            moved.modificationNanoseconds = 8
            #expect(indexFailure { _ = try TarIndex(decoding: bytes, expecting: moved) }
                == TarIndexError(.boundToAnotherFile(field: "modification time")))
            #expect(indexFailure { _ = try TarIndex(decoding: Array(bytes.dropFirst()), expecting: nil) } == TarIndexError(.notATarIndex))
            // Every byte flipped in turn: an error, never a different index.
            // (Not the gzip member's MTIME, XFL and OS, bytes 4..<10 of it at 68, which no check covers
            // and nothing reads.)
            for position in stride(from: 8, to: bytes.count, by: 7) where !(72..<78).contains(position) {
                var damaged = bytes
                damaged[position] ^= 0x10
                if let other = try? TarIndex(decoding: damaged, expecting: nil) {
                    Issue.record("byte \(position) flipped still decodes: \(other.entries.count) entries")
                }
            }
            var small = binding
            small.plainSize = 1024
            let tooMany = try TarIndex(entries: entries, binding: small).encoded()
            let tooManyError = indexFailure { _ = try TarIndex(decoding: tooMany, expecting: nil) }
            if case .tooLarge? = tooManyError?.reason {} else { Issue.record("\(String(describing: tooManyError))") }
        }
    }

    /// An archive whose last 8 bytes are zeros (BGZF's end-of-file block) is bound by samples
    /// of its data, in version 2; version 1 reads as before unless its tail is those zeros.
    @Test func bindingVersions() throws {
        try withTemporaryDirectory { scratch in
            let (_, _, entries, binding) = try indexedArchive(in: scratch)
            // Version 1 (the last bytes), as every earlier gzstream wrote it: written and read unchanged.
            let lastBytes = try TarIndex(entries: entries, binding: binding).encoded()
            #expect(Array(lastBytes[8..<12]) == [1, 0, 0, 0])
            #expect(try TarIndex(decoding: lastBytes, expecting: binding).binding == binding)

            #expect(TarIndex.Binding.needsSampledTail(lastBytes: [UInt8](repeating: 0, count: 8)))
            #expect(!TarIndex.Binding.needsSampledTail(lastBytes: binding.compressedTail) && !TarIndex.Binding.needsSampledTail(lastBytes: []))
            let head = Array("the first block".utf8)
            var sampled = binding
            sampled.compressedTail = TarIndex.Binding.sampledTail(head: head, end: Array("the last block".utf8))
            sampled.tailIsSampled = true
            #expect(sampled.compressedTail.count == 8)
            #expect(sampled.compressedTail != TarIndex.Binding.sampledTail(head: head, end: Array("the last blocK".utf8)))
            let version2 = try TarIndex(entries: entries, binding: sampled).encoded()
            #expect(Array(version2[8..<12]) == [2, 0, 0, 0])
            #expect(try TarIndex(decoding: version2, expecting: sampled).binding == sampled)
            #expect(try TarIndex(decoding: version2, expecting: nil).binding == sampled)
            // Another archive's samples, or an archive bound by its last bytes: another file.
            var other = sampled
            other.compressedTail[0] ^= 1
            #expect(indexFailure { _ = try TarIndex(decoding: version2, expecting: other) }
                == TarIndexError(.boundToAnotherFile(field: "data")))
            #expect(indexFailure { _ = try TarIndex(decoding: version2, expecting: binding) }
                == TarIndexError(.boundToAnotherFile(field: "data")))

            // An older gzstream's index of a BGZF archive: version 1 holding the end-of-file block's
            // zeros, which any BGZF archive of that size and time would match.
            var zeros = binding
            zeros.compressedTail = [UInt8](repeating: 0, count: 8)
            let old = try TarIndex(entries: entries, binding: zeros).encoded()
            #expect(Array(old[8..<12]) == [1, 0, 0, 0])
            #expect(indexFailure { _ = try TarIndex(decoding: old, expecting: sampled) } == TarIndexError(.weakBinding))
            var resized = sampled
            resized.compressedSize += 1
            #expect(indexFailure { _ = try TarIndex(decoding: old, expecting: resized) }
                == TarIndexError(.boundToAnotherFile(field: "size")))
            var version3 = version2
            version3[8] = 3
            #expect(indexFailure { _ = try TarIndex(decoding: version3, expecting: nil) } == TarIndexError(.unsupportedVersion(3)))
        }
    }

    @Test func membersThroughTheIndexes() throws {
        try withTemporaryDirectory { scratch in
            let (tar, gzidx, entries, binding) = try indexedArchive(in: scratch)
            let file = FileInputStream(path: scratch.appendingPathComponent("out.tar.gz").path)
            let plain = try IndexedGzipInputStream(wrapping: file, index: gzidx, threads: 1)
            defer { plain.close() }
            let archive = IndexedTarArchive(plain: plain, index: TarIndex(entries: entries, binding: binding))
            for entry in entries.reversed() {
                let content = try archive.content(of: entry).readToEnd()
                #expect(content == Array(tar[entry.dataOffset..<(entry.dataOffset + entry.size)]), "\(entry.pathString)")
            }
            let numbers = try #require(try archive.entry(atPath: Array("./numbers".utf8)))
            #expect(numbers.size > 64 << 10)

            var wrongSize = numbers
            wrongSize.size += 1
            #expect(indexFailure { _ = try archive.content(of: wrongSize) }
                == TarIndexError(.memberMismatch(offset: numbers.headerOffset, field: "size")))
            var wrongName = numbers
            wrongName.path = Array("./other".utf8)
            #expect(indexFailure { _ = try archive.verifiedEntry(wrongName) }
                == TarIndexError(.memberMismatch(offset: numbers.headerOffset, field: "path")))
            var shifted = numbers
            shifted.headerOffset += 512
            shifted.dataOffset += 512
            #expect(indexFailure { _ = try archive.verifiedEntry(shifted) }
                == TarIndexError(.memberMismatch(offset: shifted.headerOffset, field: "headers")))
            #expect(TarIndexError(.memberMismatch(offset: shifted.headerOffset, field: "headers")).description
                == "the member index does not match the archive: no member's headers start at byte \(shifted.headerOffset) "
                + "(rebuild it with gzstream index -f)")
        }
    }

    /// A record edited to give wider permissions, another owner or another time than the
    /// member's headers: the headers decide what is extracted, never the side file.
    @Test func attributesComeFromTheHeadersNotTheRecord() throws {
        try withTemporaryDirectory { scratch in
            let (_, gzidx, entries, binding) = try indexedArchive(in: scratch)
            let file = FileInputStream(path: scratch.appendingPathComponent("out.tar.gz").path)
            let plain = try IndexedGzipInputStream(wrapping: file, index: gzidx, threads: 1)
            defer { plain.close() }
            let archive = IndexedTarArchive(plain: plain, index: TarIndex(entries: entries, binding: binding))
            let numbers = try #require(entries.first { $0.path == Array("./numbers".utf8) })
            var edited = numbers
            edited.mode = 0o6777
            edited.userID = numbers.userID + 1
            edited.modificationTime = TarEntry.Timestamp(seconds: numbers.modificationTime.seconds + 1000, nanoseconds: 0)
            let checked = try archive.verifiedEntry(edited)
            #expect(checked == numbers)
            #expect(try archive.content(of: edited).readToEnd().count == numbers.size)
        }
    }
}

/// The ``TarIndexError`` `body` throws, or `nil` when it throws none (or another error).
func indexFailure(_ body: () throws -> Void) -> TarIndexError? {
    do {
        try body()
        return nil
    } catch {
        return error as? TarIndexError
    }
}
