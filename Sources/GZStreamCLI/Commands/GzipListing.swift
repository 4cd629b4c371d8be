import ByteStreams
import GzipStreams

/// `gzstream -l` (gzip mode): GNU gzip's `-l` table, one row per file, in gzip's layout and
/// widths, with `-v` its method, CRC and date columns and, for more than one file, a totals
/// line. The values come from decoding the whole file rather than from the last trailer, so
/// they are right where gzip's are not: the uncompressed size is every member's bytes (gzip
/// shows the last member's ISIZE, modulo 2^32), the CRC-32 is that of all of them, and the
/// ratio leaves out every member's header and trailer (gzip leaves out the first header and
/// one trailer; its totals line the last file's). For a file of one member under 4 GiB the
/// row is gzip's.
final class GzipListing: Listing {
    private unowned let command: Command
    private let operandCount: Int
    private let output: ListingOutput
    private var headerWritten = false
    private var totals = (compressed: Int64(0), uncompressed: Int64(0), overhead: Int64(0))

    // The file being listed.
    private var operand: Pathname = "-"
    private var crc: UInt32 = 0
    /// Header and trailer bytes of its members.
    private var overhead: Int64 = 0
    private var firstHeader: GzipHeader?

    init(command: Command, operandCount: Int) {
        self.command = command
        self.operandCount = operandCount
        output = ListingOutput(command.environment.standardOutput)
    }

    var writeError: (any Error)? { output.writeError }

    private var common: CommonOptions { command.common }

    private func emit(_ text: String) {
        output.write(text)
    }

    /// gzip's widest `off_t`: 19 digits.
    private static let numberWidth = 19

    func begin() {}

    func unreadableFile(_ name: String, problem: String) {}

    func beginFile(_ name: String, operand: Pathname) {
        self.operand = operand
        crc = 0
        overhead = 0
        firstHeader = nil
    }

    func row(_ member: GzipInputStream.Member) {
        crc = crc32Combine(crc, member.crc32, secondLength: UInt64(member.uncompressedSize))
        overhead += member.headerSize + 8
        if firstHeader == nil { firstHeader = member.header }
    }

    func endFile(compressedSize: Int64, uncompressedSize: Int64, trailingGarbage: GzipInputStream.TrailingGarbage?,
                 error: (any Error)?) {
        // A file that failed has no row, as in gzip; its error was reported.
        guard error == nil else { return }
        if !headerWritten {
            headerWritten = true
            if common.verbose { emit("method  crc     date  time  ") }
            if !common.quiet {
                emit(pad("compressed", Self.numberWidth) + " " + pad("uncompressed", Self.numberWidth)
                     + "  ratio uncompressed_name\n")
            }
        }
        var line = ""
        if common.verbose {
            line += "defla " + hex(crc, 8) + " " + gzipDate(listedTime()) + " "
        }
        line += pad(String(compressedSize), Self.numberWidth) + " " + pad(String(uncompressedSize), Self.numberWidth)
            + " " + gzipRatio(uncompressedSize - (compressedSize - overhead), uncompressedSize)
            + " " + escapingControlCharacters(listedName()) + "\n"
        emit(line)
        totals.compressed += compressedSize
        totals.uncompressed += uncompressedSize
        totals.overhead += overhead
    }

    func end() {
        guard operandCount > 1, !common.quiet, totals.compressed > 0, totals.uncompressed > 0 else { return }
        var line = common.verbose ? String(repeating: " ", count: 28) : ""
        line += pad(String(totals.compressed), Self.numberWidth) + " " + pad(String(totals.uncompressed), Self.numberWidth)
            + " " + gzipRatio(totals.uncompressed - (totals.compressed - totals.overhead), totals.uncompressed)
            + " (totals)\n"
        emit(line)
    }

    /// The name gzip shows: with `-N` the stored name (beside the file), else the file's name
    /// less its suffix (`.tgz` gives `.tar`), or itself without one; `stdout` for standard input.
    /// Bytes that are not UTF-8 are shown as ``Pathname/description`` shows them.
    private func listedName() -> String {
        if common.useName == true, let stored = firstHeader?.fileName, let name = safeFileName(stored) {
            return operand == "-" ? name.description : operand.directoryPart.appending(name).description
        }
        if operand == "-" { return "stdout" }
        return (unpackedName(of: operand, customSuffix: common.suffix) ?? operand).description
    }

    /// The time gzip shows: with `-N` the stored MTIME when there is one, else the file's
    /// modification time (standard input's when it is a regular file, else 0).
    private func listedTime() -> Int {
        if common.useName == true, let mtime = firstHeader?.modificationTime, mtime != 0 { return Int(mtime) }
        if operand != "-" { return command.currentInput?.info.modificationTime.seconds ?? 0 }
        return command.standardInputModificationTime() ?? 0
    }
}
