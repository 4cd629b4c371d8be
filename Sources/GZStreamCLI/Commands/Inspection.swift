import ByteStreams
import GzipStreams

extension Command {
    /// `test` and `list`: decodes every member of `operand`, checking CRC-32 and ISIZE, and
    /// writes no data. `list` adds a row per member through `listing`. `opened` is the operand
    /// opened once (``Command/openOperand(_:)``), `nil` for standard input; it is read through
    /// its own descriptor.
    func inspect(_ operand: Pathname, input opened: OpenedInput?, listing: (any Listing)?) throws -> ExitStatus {
        let name = displayName(operand)
        let input: ByteInputStream
        if let opened {
            do {
                try checkKind(opened.info, of: operand)
            } catch let reported as Reported {
                listing?.unreadableFile(name, problem: reported.problem ?? "cannot be read")
                throw reported
            }
            input = try opened.stream()
        } else {
            try refuseTerminal(readingStandardInput: true)
            input = environment.standardInput
        }
        // test reads ahead and checks BGZF on -p threads, as unpack does; list needs every
        // member's header, so it stays sequential. Only test shows progress (ProgressReporter.swift).
        let testing = if case .test = options.command { true } else { false }
        let progress = testing ? beginProgress(name, writesStandardOutput: false) : nil
        if testing { beginVerboseLine(name) }
        defer { progress?.end(completed: false) }
        let gzip: any GzipDecodingStream
        var indexed: IndexedGzipInputStream?
        let indexing = testing ? try beginIndexWhileDecoding(operand, inputInfo: opened?.info, input: input) : nil
        if testing, indexing == nil, let (decoder, stream) = try indexedDecodingStream(input, progress: progress) {
            gzip = decoder
            indexed = stream
        } else if testing {
            gzip = try decodingStream(progress?.counting(input) ?? input, indexRecorder: indexing?.recorder, name: name)
        } else {
            let sequential = try GzipInputStream(wrapping: input, chunkSize: common.chunkSize, trailingGarbage: .ignore,
                                                 maximumOutputSize: maximumOutputSize, inflater: inflaterChoice,
                                                 closesInnerStream: false)
            sequential.memberHandler = { member in listing?.row(member) }
            gzip = sequential
        }
        defer {
            gzip.close()
            if operand != "-" { input.close() }
        }
        listing?.beginFile(name, operand: operand)
        // Nothing is written, so the inflater may fill large buffers.
        let scratchSize = testing ? max(Self.inflateOutputSize, common.chunkSize) : common.chunkSize
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        gzip.open()
        while listing?.writeError == nil {
            let count = gzip.read(scratch, maxLength: scratchSize)
            if count <= 0 { break }
            progress?.addOutput(count)
        }
        progress?.end(completed: gzip.streamError == nil && gzip.trailingGarbage == nil)
        if let indexed { noteIndexMismatch(of: indexed) }
        if listing?.writeError != nil { throw Reported(status: .error) }
        if let error = gzip.streamError {
            listing?.endFile(compressedSize: gzip.compressedByteCount, uncompressedSize: gzip.uncompressedByteCount,
                             trailingGarbage: nil, error: error)
            if options.gzip != nil, let error = error as? GzipError {
                throw Reported(status: reportLikeGzip(error, subject: name))
            }
            let subject = (error as? ByteStreamError)?.target ?? name
            throw Reported(status: reportError(subject, describe(error)))
        }
        listing?.endFile(compressedSize: gzip.compressedByteCount, uncompressedSize: gzip.uncompressedByteCount,
                         trailingGarbage: gzip.trailingGarbage, error: nil)
        var status = ExitStatus.success
        if let garbage = gzip.trailingGarbage {
            status = try warnTrailingGarbage(name, garbage)
        } else if gzip.endedWithZeroPadding {
            status = noteZeroPaddingLikeGzip(name)
        }
        if let indexing { try finishIndexWhileDecoding(indexing) }
        guard common.verbose && testing else { return status }
        if options.gzip != nil {
            // gzip's " OK" follows its trailing garbage warning.
            reportTestedLikeGzip()
        } else if status == .success {
            diagnostics.write("\(diagnostics.programName): \(name): OK (\(gzip.memberCount) member\(gzip.memberCount == 1 ? "" : "s"), "
                + "\(gzip.uncompressedByteCount) bytes)\n")
        }
        return status
    }
}

/// What `list` writes as it decodes each operand: gzstream's table or JSON (``MemberListing``),
/// or gzip's `-l` table (``GzipListing``).
protocol Listing: AnyObject {
    /// The first failure to write the listing; nothing more is written after it.
    var writeError: (any Error)? { get }
    func begin()
    /// A file that could not be opened (already reported).
    func unreadableFile(_ name: String, problem: String)
    /// `name` is what messages call the input (`standard input` for `-`); `operand` is its
    /// name's bytes as given (`-` for standard input).
    func beginFile(_ name: String, operand: Pathname)
    func row(_ member: GzipInputStream.Member)
    func endFile(compressedSize: Int64, uncompressedSize: Int64, trailingGarbage: GzipInputStream.TrailingGarbage?,
                 error: (any Error)?)
    func end()
}

/// Standard output for a listing: text written until the first failure, which is kept and ends
/// the listing (a closed pipe, say); shared by ``MemberListing`` and ``GzipListing``.
final class ListingOutput {
    private let stream: ByteOutputStream
    /// The first failure to write; nothing more is written after it.
    private(set) var writeError: (any Error)?

    init(_ stream: ByteOutputStream) {
        self.stream = stream
    }

    func write(_ text: String) {
        guard writeError == nil else { return }
        do {
            try stream.writeAll(Array(text.utf8))
        } catch {
            writeError = error
        }
    }
}

/// The output of `list`: a table, or with `--json` one JSON array of file objects. Rows are
/// written as members are decoded, so memory stays flat for files of many members.
final class MemberListing: Listing {
    private unowned let command: Command
    private var fileCount = 0
    private var memberRows = 0
    private var totals = (compressed: Int64(0), uncompressed: Int64(0), members: 0, files: 0)
    private let output: ListingOutput

    /// - Parameter json: `list --json`: JSON instead of the table.
    init(command: Command, json: Bool) {
        self.command = command
        self.json = json
        output = ListingOutput(command.environment.standardOutput)
    }

    var writeError: (any Error)? { output.writeError }

    private let json: Bool

    private func emit(_ text: String) {
        output.write(text)
    }

    /// A file that could not be opened: in JSON an object with no members and an `io` error,
    /// so that every file named has its entry.
    func unreadableFile(_ name: String, problem: String) {
        guard json else { return }
        emit((fileCount == 0 ? "\n" : ",\n") + "{\"file\":\(jsonString(name)),\"members\":[],\"memberCount\":0,"
             + "\"compressedSize\":0,\"uncompressedSize\":0,\"trailingGarbage\":null,"
             + "\"error\":{\"kind\":\"io\",\"offset\":null,\"message\":\(jsonString(problem))}}")
        fileCount += 1
    }

    func begin() {
        if json { emit("[") }
    }

    func beginFile(_ name: String, operand: Pathname) {
        memberRows = 0
        if json {
            emit((fileCount == 0 ? "\n" : ",\n") + "{\"file\":\(jsonString(name)),\"members\":[")
        } else {
            if fileCount > 0 { emit("\n") }
            emit("\(name):\n")
            emit(pad("member", 6) + pad("offset", 13) + pad("compressed", 14) + pad("uncompressed", 16)
                 + pad("saved", 10) + "  crc32     mtime                 os  name\n")
        }
        fileCount += 1
    }

    func row(_ member: GzipInputStream.Member) {
        let header = member.header
        if json {
            var fields = ["\"index\":\(member.index)", "\"offset\":\(member.offset)",
                          "\"compressedSize\":\(member.compressedSize)",
                          "\"uncompressedSize\":\(member.uncompressedSize)",
                          "\"crc32\":\"\(hex(member.crc32, 8))\"",
                          "\"mtime\":\(header.modificationTime)",
                          "\"os\":\(header.operatingSystem)",
                          "\"xfl\":\(header.extraFlags ?? 0)",
                          "\"text\":\(header.isText)",
                          "\"headerCRC\":\(header.hasHeaderCRC)",
                          "\"headerFieldCut\":\(member.isHeaderFieldCut)"]
            fields.append("\"name\":" + (header.fileName.map { jsonString(decodedText($0)) } ?? "null"))
            fields.append("\"comment\":" + (header.comment.map { jsonString(decodedText($0)) } ?? "null"))
            fields.append("\"extra\":" + (header.extraField.map { "\"\(hexBytes($0))\"" } ?? "null"))
            emit((memberRows == 0 ? "\n" : ",\n") + "{" + fields.joined(separator: ",") + "}")
        } else {
            var line = pad(String(member.index), 6) + " " + pad(String(member.offset), 12)
                + " " + pad(String(member.compressedSize), 13) + " " + pad(String(member.uncompressedSize), 15)
                + " " + pad(percentSaved(packed: member.compressedSize, plain: member.uncompressedSize, whenEmpty: "-"), 9)
                + "  " + hex(member.crc32, 8) + "  " + padRight(isoDate(header.modificationTime), 20)
                + "  " + padRight(String(header.operatingSystem), 3)
                + " " + (header.fileName.map(displayText) ?? "-")
            if member.isHeaderFieldCut { line += "  (name or comment cut at \(GzipInputStream.maximumHeaderFieldLength) bytes)" }
            if let comment = header.comment { line += "  comment: " + displayText(comment) }
            if let extra = header.extraField { line += "  extra: \(extra.count) bytes \(hexBytes(Array(extra.prefix(16))))\(extra.count > 16 ? "…" : "")" }
            emit(line + "\n")
        }
        memberRows += 1
        totals.members += 1
    }

    func endFile(compressedSize: Int64, uncompressedSize: Int64, trailingGarbage: GzipInputStream.TrailingGarbage?,
                 error: (any Error)?) {
        totals.compressed += compressedSize
        totals.uncompressed += uncompressedSize
        totals.files += 1
        if json {
            var fields = ["\"memberCount\":\(memberRows)", "\"compressedSize\":\(compressedSize)",
                          "\"uncompressedSize\":\(uncompressedSize)"]
            fields.append("\"trailingGarbage\":" + (trailingGarbage.map { "{\"offset\":\($0.offset),\"length\":\($0.length)}" } ?? "null"))
            if let error {
                let kind = (error as? GzipError)?.kind ?? "io"
                let offset = (error as? GzipError)?.offset.map(String.init) ?? "null"
                fields.append("\"error\":{\"kind\":\"\(kind)\",\"offset\":\(offset),\"message\":\(jsonString(describe(error)))}")
            } else {
                fields.append("\"error\":null")
            }
            emit("\n]," + fields.joined(separator: ",") + "}")
        } else {
            var line = pad("total", 6) + " " + pad("", 12) + " " + pad(String(compressedSize), 13)
                + " " + pad(String(uncompressedSize), 15) + " " + pad(percentSaved(packed: compressedSize, plain: uncompressedSize, whenEmpty: "-"), 9)
                + "  \(memberRows) member\(memberRows == 1 ? "" : "s")"
            if let trailingGarbage {
                line += ", \(trailingGarbage.length) bytes of trailing garbage at \(trailingGarbage.offset)"
            }
            if error != nil { line += ", stopped by an error" }
            emit(line + "\n")
        }
    }

    func end() {
        if json {
            emit("\n]\n")
        } else if totals.files > 1 {
            emit("\nall \(totals.files) files: \(totals.members) member\(totals.members == 1 ? "" : "s"), \(totals.compressed) -> "
                 + "\(totals.uncompressed) bytes, \(percentSaved(packed: totals.compressed, plain: totals.uncompressed, whenEmpty: "-")) saved\n")
        }
    }
}

/// Header text: UTF-8 when it is valid UTF-8, else ISO 8859-1 (RFC 1952 §2.3.1).
private func decodedText(_ bytes: [UInt8]) -> String {
    String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
}

/// Header text for the table, with control characters shown as `\u{…}` so a hostile name
/// cannot drive the terminal.
private func displayText(_ bytes: [UInt8]) -> String {
    escapingControlCharacters(decodedText(bytes))
}

/// MTIME as `YYYY-MM-DDTHH:MM:SSZ`, or `-` when it is 0 (none stored).
private func isoDate(_ mtime: UInt32) -> String {
    mtime == 0 ? "-" : utcTimestamp(Double(mtime))
}
