import ByteStreams

/// What `-o PATH` names, examined on descriptors before anything is written to it.
///
/// `-o` writes into a FIFO or device and through a symbolic link, as a shell redirection does.
/// In a directory another user can write, that user chooses what is at PATH's last component:
/// a FIFO of their own (they read what root unpacks), a link to `/dev/sda` or to
/// `/proc/self/fd/2`. So a symbolic link there is followed only when it belongs to the
/// effective user or to root (as the kernel's `protected_symlinks` rule), and a FIFO, device or
/// socket is written into only when it does. The link followed is the one examined: its target
/// is read from the descriptor of the link itself, never by looking the name up again.
struct ExplicitOutput {
    /// The path the output is written through: `-o`'s path itself, or, when its last component
    /// is a trusted symbolic link, that link's target (relative targets made relative to the
    /// link's directory). What that target names further is the trusted owner's choice.
    var path: Pathname
    /// The last component was a trusted symbolic link, and ``path`` is its target.
    var followedLink: Bool
    /// The last component is a symbolic link of another user: not followed. Without `-f` it
    /// is an existing name; with `-f` the link itself is replaced.
    var untrustedLink: Bool

    /// Why `-o`'s target is refused.
    struct Refusal: Error {
        var message: String
    }

    /// `path` as given: nothing examined, nothing followed.
    init(path: Pathname) {
        self.path = path
        followedLink = false
        untrustedLink = false
    }

    /// Examines `path`'s last component relative to its directory, not following it.
    /// - Throws: ``Refusal`` for a FIFO, device or socket of another user, or a link that
    ///   changed while it was read.
    /// Does not block (the link is opened `O_PATH`). The corresponding C functions are
    /// `openat(2)` (`O_PATH|O_NOFOLLOW`), `fstat(2)` and `readlinkat(2)`.
    init(examining path: Pathname) throws(Refusal) {
        self.path = path
        followedLink = false
        untrustedLink = false
        let name = path.lastComponent
        // A name ending in "/" or naming "." or "..": a directory, looked up as typed.
        guard !name.isEmpty, name != ".", name != ".." else { return }
        let directoryPath = path.directoryPart
        let flags: Int32
        #if os(Linux)
        // The link itself, not opened.
        flags = OpenFlag.pathOnly | OpenFlag.noFollow
        #else
        flags = OpenFlag.readOnly | OpenFlag.noFollow | OpenFlag.nonBlocking
        #endif
        let directoryDescriptor: Int32
        do {
            directoryDescriptor = try SystemCalls.open(directoryPath.isEmpty ? "." : directoryPath,
                                                       in: SystemCalls.currentDirectory,
                                                       flags: SystemCalls.lookupDirectoryFlags)
        } catch {
            // A missing directory is reported where the output is created.
            return
        }
        defer { try? SystemCalls.close(directoryDescriptor, target: path.description) }
        guard let descriptor = try? SystemCalls.open(name, in: directoryDescriptor, flags: flags) else { return }
        defer { try? SystemCalls.close(descriptor, target: path.description) }
        guard let info = FileInfo(descriptor: descriptor) else { return }
        let trusted = info.owner == SystemCalls.effectiveUserID || info.owner == 0
        if info.isSymbolicLink {
            guard trusted else {
                untrustedLink = true
                return
            }
            // The link examined, read through its own descriptor: never looked up by name again.
            let target: [UInt8]
            do {
                target = try SystemCalls.readLink("", in: descriptor, target: path.description)
            } catch {
                throw Refusal(message: "cannot read the symbolic link: \(errorText(error))")
            }
            let absolute = target.first == UInt8(ascii: "/")
            guard !target.isEmpty, let resolved = Pathname(bytes: absolute ? target : directoryPath.bytes + target) else {
                throw Refusal(message: "cannot read the symbolic link: \(Errno.text(Errno.invalidArgument))")
            }
            self.path = resolved
            followedLink = true
        } else if !info.isRegularFile, !info.isDirectory, !trusted {
            throw Refusal(message: Self.foreignSpecialFile(info))
        }
    }

    /// The refusal of a FIFO, device or socket that another user owns.
    static func foreignSpecialFile(_ info: FileInfo) -> String {
        let kind: String
        if info.isFIFO {
            kind = "a FIFO"
        } else if info.isSocket {
            kind = "a socket"
        } else {
            kind = "a device"
        }
        return "is \(kind) owned by uid \(info.owner), another user: not written into"
    }

    /// Whether a FIFO, device or socket opened for the output may be written: it belongs to the
    /// effective user or to root.
    static func mayWriteInto(_ info: FileInfo) -> Bool {
        info.owner == SystemCalls.effectiveUserID || info.owner == 0
    }
}

extension ExplicitOutput {
    /// What `-o PATH` is, for every command that writes one (unpack, pack, receive, cache get).
    enum Target {
        /// A descriptor of this process that PATH names (`/dev/stdout`, `/dev/fd/N`,
        /// `/proc/self/fd/N`, or a trusted link to one): written through that descriptor itself,
        /// at its offset, never replaced; not closed.
        case processDescriptor(Int32)
        /// Anything else, its last component examined: a device or FIFO to open and write
        /// into, or a file to write beside its name and rename into place.
        case path(ExplicitOutput)
    }

    /// Classifies `-o PATH`: a descriptor named as such needs no lookup; otherwise the last
    /// component is examined once (``init(examining:)``), and a trusted link to a descriptor
    /// of this process is that descriptor.
    /// - Throws: ``Refusal`` as ``init(examining:)``.
    static func classify(_ path: Pathname) throws(Refusal) -> Target {
        if let descriptor = processDescriptor(named: path, followsLinks: false) { return .processDescriptor(descriptor) }
        let examined = try ExplicitOutput(examining: path)
        if !examined.untrustedLink,
           let descriptor = processDescriptor(named: examined.path, followsLinks: examined.followedLink) {
            return .processDescriptor(descriptor)
        }
        return .path(examined)
    }

    /// The path a file output is published as: with `-o` naming a trusted symbolic link, the
    /// file the link points to (resolved once; its directory is then used by descriptor), so
    /// that the link itself stays, as a shell redirection leaves it; otherwise `outputPath`.
    func publishPath(for outputPath: Pathname) -> Pathname {
        followedLink ? (existingFile(path) ?? outputPath) : outputPath
    }
}
