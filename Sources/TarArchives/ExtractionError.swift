import ByteStreams

/// A member that ``TarExtractor`` refused to extract, or could not: what was refused, in which
/// member (its name as stored, and the plain offset of its first header block).
///
/// Nothing of a refused member is left in the destination: a regular file is written under a
/// temporary name that is removed on every error. Errors of the content stream itself (a
/// truncated archive, a gzip fault) are not wrapped: they come through unchanged.
public struct ExtractionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was refused, or what failed.
    public enum Reason: Equatable, Sendable {
        /// The member's path holds a NUL byte (only a PAX record can carry one).
        case nulInName
        /// The path names nothing once leading `/` and `.` components are removed (a regular
        /// file, link or other member named `/` or `./`).
        case emptyName
        /// A `..` component in the path: the member could land outside the destination.
        case parentDirectoryComponent
        /// A symbolic or hard link whose target is absolute, holds a NUL, or, resolved lexically
        /// from the link's directory, leaves the destination.
        case linkTargetOutsideDestination(target: [UInt8])
        /// A hard link to a path that no earlier member of this extraction created.
        case hardLinkTargetNotExtracted(target: [UInt8])
        /// A hard link to an earlier member that is not a regular file (a symbolic link, a
        /// directory), or whose file is no longer the one extracted: linking to a symbolic link
        /// would let a later member write through it.
        case hardLinkTargetNotRegularFile(target: [UInt8])
        /// A directory on the member's path is a symbolic link, which is never followed.
        case symbolicLinkInPath(component: [UInt8])
        /// A component of the member's path exists and is not a directory.
        case notADirectoryInPath(component: [UInt8])
        /// The name exists in the destination and was not made by this extraction; replacing
        /// it needs ``TarExtractor/Options/overwritesExisting``.
        case exists
        /// The content stream gave `actual` bytes where the header promised `expected`
        /// (`actual` is counted up to one byte past `expected`).
        case contentLength(expected: Int, actual: Int)
        /// A sparse member's map has runs out of order, overlapping, negative, past the file's
        /// size, or adding up to other than the stored size.
        case badSparseMap(detail: String)
        /// A system call failed (a component longer than `NAME_MAX`: `ENAMETOOLONG`; no space).
        case system(ByteStreamError)
    }

    /// The member's path as stored in the archive, bytes.
    public var memberName: [UInt8]
    /// The plain offset of the member's first header block (``TarEntry/headerOffset``).
    public var headerOffset: Int
    /// What was refused, or what failed.
    public var reason: Reason

    /// A refusal `reason` of the member `memberName` whose headers start at `headerOffset`.
    public init(_ reason: Reason, memberName: [UInt8], headerOffset: Int) {
        self.reason = reason
        self.memberName = memberName
        self.headerOffset = headerOffset
    }

    /// The refusal of `entry`.
    init(_ reason: Reason, _ entry: TarEntry) {
        self.init(reason, memberName: entry.path, headerOffset: entry.headerOffset)
    }

    /// One line a user reads: the member, its offset, what was refused and why.
    public var description: String {
        let member = "\(displayText(memberName)) (tar member at byte \(headerOffset))"
        switch reason {
        case .nulInName:
            return "\(member): a name with a NUL byte; not extracted"
        case .emptyName:
            return "\(member): the name is empty once leading \"/\" and \".\" are removed; not extracted"
        case .parentDirectoryComponent:
            return "\(member): a \"..\" in the name could leave the destination; not extracted"
        case .linkTargetOutsideDestination(let target):
            return "\(member): the link target \(displayText(target)) is outside the destination; not extracted"
        case .hardLinkTargetNotExtracted(let target):
            return "\(member): a hard link to \(displayText(target)), which no earlier member extracted; not extracted"
        case .hardLinkTargetNotRegularFile(let target):
            return "\(member): a hard link to \(displayText(target)), which is not a regular file this extraction wrote; not extracted"
        case .symbolicLinkInPath(let component):
            return "\(member): \(displayText(component)) on its path is a symbolic link, which is not followed; not extracted"
        case .notADirectoryInPath(let component):
            return "\(member): \(displayText(component)) on its path is not a directory; not extracted"
        case .exists:
            return "\(member): the file exists; not replaced (use -f to replace it)"
        case .contentLength(let expected, let actual):
            let got = actual > expected ? "more" : "\(actual)"
            return "\(member): the header says \(expected) bytes of content, the archive holds \(got); not extracted"
        case .badSparseMap(let detail):
            return "\(member): bad sparse map: \(detail); not extracted"
        case .system(let error):
            return "\(member): \(error.operation) failed: \(error.reason); not extracted"
        }
    }
}

/// Something ``TarExtractor`` did differently from what a member asked, without refusing the
/// archive: told to the extractor's warning handler as it happens.
public struct ExtractionWarning: Equatable, Sendable, CustomStringConvertible {
    /// What was done.
    public enum Reason: Equatable, Sendable {
        /// Leading `/` removed from member names (told once per extraction, for the first such
        /// member), so that an absolute name lands inside the destination.
        case strippedLeadingSlash
        /// A device or FIFO member skipped: the extractor makes no special files (no `mknod`).
        case skippedSpecialFile(kind: TarEntry.Kind)
        /// A member of a type the extractor does not know, skipped.
        case skippedUnknownType(typeflag: UInt8)
    }

    /// The member's path as stored, bytes.
    public var memberName: [UInt8]
    /// The plain offset of the member's first header block.
    public var headerOffset: Int
    /// What was done.
    public var reason: Reason

    /// A warning `reason` about the member `memberName` at `headerOffset`.
    public init(_ reason: Reason, memberName: [UInt8], headerOffset: Int) {
        self.reason = reason
        self.memberName = memberName
        self.headerOffset = headerOffset
    }

    /// One line a user reads.
    public var description: String {
        switch reason {
        case .strippedLeadingSlash:
            return "removing leading \"/\" from member names"
        case .skippedSpecialFile(let kind):
            let what = switch kind {
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            default: "a FIFO"
            }
            return "\(displayText(memberName)) (tar member at byte \(headerOffset)): \(what), skipped"
        case .skippedUnknownType(let typeflag):
            return "\(displayText(memberName)) (tar member at byte \(headerOffset)): unknown type \(typeText(typeflag)), skipped"
        }
    }
}

/// A name for a message: valid UTF-8 as it is, other bytes as `\` and three octal digits, a NUL
/// as `\000`.
func displayText(_ bytes: [UInt8]) -> String {
    // The usual name, valid UTF-8 without NUL, as it is (checked in one pass).
    if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return text }
    return bytes.split(separator: 0, omittingEmptySubsequences: false)
        .map { Pathname(bytes: $0)!.description }
        .joined(separator: "\\000")
}

/// A typeflag for a message: `'X'` for a printable one, else its value.
private func typeText(_ byte: UInt8) -> String {
    (0x21..<0x7f).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "\(byte)"
}
