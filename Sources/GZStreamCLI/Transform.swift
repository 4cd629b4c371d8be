import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Command {
    struct Outcome {
        var status: ExitStatus
        var bytesIn: Int64
        var bytesOut: Int64
        var header: GzipHeader?
        /// pack --bgzf --index: where each member starts.
        var index: BGZFIndex?
    }

    /// The decoder for `input` (which it does not close). BGZF input (its first member has the
    /// `BC` subfield) is inflated on ``inflateThreads`` threads while this thread reads and
    /// writes; anything else is pipelined as pigz's: a worker reads `input` ahead, this thread
    /// inflates (ISA-L), and ``inflate(_:into:closesOutput:)`` writes behind on another.
    /// Reads of `input` are `--chunk-size` reads either way.
    func decodingStream(_ input: ByteInputStream) throws -> any GzipDecodingStream {
        let peeked = try PeekingInputStream(peeking: input, length: BGZFInputStream.signatureLength)
        if BGZFInputStream.startsWithBGZFMember(peeked.peekedBytes) {
            // The member pipeline already overlaps reading, inflating and writing: a read-ahead
            // worker on top of it measured slower (0.43-0.50 s against 0.32-0.40 s for `test`
            // of the 256 MiB benchmark file).
            return try BGZFInputStream(wrapping: peeked, threads: inflateThreads, chunkSize: options.chunkSize,
                                       trailingGarbage: .ignore, maximumOutputSize: options.maximumOutputSize)
        }
        let source = try ReadAheadInputStream(wrapping: peeked, chunkSize: options.chunkSize,
                                              bufferCount: Self.readAheadBytes / options.chunkSize + 1)
        return try GzipInputStream(wrapping: source, chunkSize: Self.inflateInputSize, trailingGarbage: .ignore,
                                   maximumOutputSize: options.maximumOutputSize)
    }

    /// Reads `decoder` to its end and writes what it gives to `output`, in writes of
    /// ``unpackWriteSize`` bytes (of `--chunk-size` when it is given). A `GzipInputStream`
    /// inflates straight into the ring of a `WriteBehindOutputStream`, whose worker writes, so
    /// that inflating never waits for a write; BGZF is written from this thread while its
    /// workers inflate the next members. The bytes before a decoding error still reach `output`
    /// (standard output keeps them, as with gzip). Closes `output` when `closesOutput`.
    func inflate(_ decoder: any GzipDecodingStream, into output: ByteOutputStream, closesOutput: Bool) throws {
        let writeSize = options.chunkSizeGiven ? options.chunkSize : Self.unpackWriteSize
        if decoder is BGZFInputStream {
            do {
                try decoder.copy(to: output, chunkSize: writeSize)
            } catch {
                if closesOutput { output.close() }
                throw error
            }
            if closesOutput { try output.closeOrThrow() }
            return
        }
        let sink = try WriteBehindOutputStream(wrapping: output, chunkSize: writeSize,
                                               bufferSize: max(Self.inflateOutputSize, writeSize),
                                               closesInnerStream: closesOutput)
        do {
            try decoder.openOrThrow()
            try sink.openOrThrow()
            let length = sink.bufferSize
            while try sink.withWritableBuffer(minimumCapacity: length, { buffer in
                let count = decoder.read(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: length)
                if count < 0 { throw decoder.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
                return count
            }) > 0 {}
        } catch {
            try? sink.flush()
            sink.close()
            throw error
        }
        try sink.closeOrThrow()
    }

    /// The compressed bytes read ahead of the inflater: 256 KiB.
    static let readAheadBytes = 256 * 1024
    /// The most compressed bytes given to the inflater at once: 64 KiB.
    static let inflateInputSize = 64 * 1024
    /// The most plain bytes the inflater makes in one call, and the size of each write-behind
    /// buffer: 128 KiB.
    static let inflateOutputSize = 128 * 1024
    /// The size of unpack's writes when `--chunk-size` is not given: 128 KiB. Writing 256 MiB
    /// to a file in 4 KiB writes cost about twice the system time of 128 KiB writes here (see
    /// the README's measurements).
    static let unpackWriteSize = 128 * 1024

    /// Packs or unpacks `input` into `output` in chunks of `chunkSize` bytes; closes `input`,
    /// and `output` when `closesOutput`.
    func transform(_ input: ByteInputStream, inputName: String, inputInfo: FileInfo?,
                           into output: ByteOutputStream, outputName: String, closesOutput: Bool) throws -> Outcome {
        defer { input.close() }
        do {
            switch options.mode {
            case .pack:
                let threads = options.threads ?? availableProcessorCount()
                let packer: any PackingOutputStream
                if options.bgzf {
                    // BGZF headers hold no name or time (htslib reads a fixed 18-byte header).
                    packer = try BGZFOutputStream(wrapping: output, level: options.level, threads: threads,
                                                  chunkSize: options.chunkSize, buildsIndex: options.index,
                                                  closesInnerStream: closesOutput)
                } else {
                    packer = try GzipOutputStream(wrapping: output, level: options.level,
                                                  header: packHeader(inputName: inputName, inputInfo: inputInfo),
                                                  chunkSize: options.chunkSize, threads: threads,
                                                  blockSize: options.blockSize ?? GzipOutputStream.defaultBlockSize,
                                                  closesInnerStream: closesOutput)
                }
                try packer.openOrThrow()
                do {
                    try input.copy(to: packer, chunkSize: options.chunkSize)
                } catch {
                    // No trailer (or BGZF end-of-file member): partial output never looks whole.
                    packer.abandon()
                    throw error
                }
                try packer.closeOrThrow()
                return Outcome(status: .success, bytesIn: packer.uncompressedByteCount,
                               bytesOut: packer.compressedCount, header: nil,
                               index: (packer as? BGZFOutputStream)?.index)
            case .unpack:
                // A range through the .gzi index seeks the file itself (BlockedUnpack.swift).
                if options.rangeOffset != nil || options.rangeLength != nil {
                    return try unpackRange(input, path: inputName, into: output, closesOutput: closesOutput)
                }
                let decoder = try decodingStream(input)
                defer { decoder.close() }
                try inflate(decoder, into: output, closesOutput: closesOutput)
                var status = ExitStatus.success
                if decoder.trailingGarbage != nil {
                    status = warnTrailingGarbage(inputName)
                }
                return Outcome(status: status, bytesIn: decoder.compressedByteCount,
                               bytesOut: decoder.uncompressedByteCount, header: decoder.header)
            case .test, .list, .index:
                preconditionFailure("test, list and index do not transform")
            }
        } catch let reported as Reported {
            throw reported   // already reported (unpackRange)
        } catch let error as ByteStreamError where error.errno == EPIPE && error.target == "standard output" {
            brokenPipe = true
            throw Reported(status: .error)
        } catch let error as ByteStreamError {
            throw Reported(status: reportError(error.target ?? inputName, describe(error)))
        } catch {
            throw Reported(status: reportError(inputName, describe(error)))
        }
    }

    func packHeader(inputName: String, inputInfo: FileInfo?) -> GzipHeader {
        var header = GzipHeader()
        guard let inputInfo, options.useName != false else { return header }
        header.fileName = Array(baseName(inputName).utf8)
        header.modificationTime = UInt32(clamping: max(0, inputInfo.modificationTime.seconds))
        return header
    }

    /// The input's access and modification times; for `unpack -N`, the header's MTIME when set.
    func outputTimes(inputInfo: FileInfo?, header: GzipHeader?)
        -> (access: FileInfo.Timestamp, modification: FileInfo.Timestamp)? {
        guard let inputInfo else { return nil }
        if options.mode == .unpack, options.useName == true, let mtime = header?.modificationTime, mtime != 0 {
            return (inputInfo.accessTime, FileInfo.Timestamp(seconds: Int(mtime), nanoseconds: 0))
        }
        return (inputInfo.accessTime, inputInfo.modificationTime)
    }
}

/// What pack needs of a compressing stream.
protocol PackingOutputStream: ByteOutputStream {
    /// Closes without ending the data, so that a reader sees it truncated.
    func abandon()
    var uncompressedByteCount: Int64 { get }
    var compressedCount: Int64 { get }
}

extension GzipOutputStream: PackingOutputStream {}
extension BGZFOutputStream: PackingOutputStream {}
