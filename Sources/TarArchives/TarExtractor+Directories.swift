import ByteStreams

/// Walking to a member's directory without following links, directory members, and the last
/// pass that gives directories their modes and times.
extension TarExtractor {
    /// The directory that holds `path`, opened from the destination one component at a time
    /// (missing ones made, mode 0777 less the umask, as GNU tar makes them); kept open for the
    /// next members.
    /// - Returns: A descriptor the extractor keeps owning, valid until the next call.
    func parentDirectory(of path: ExtractionPath, _ entry: TarEntry) throws -> Int32 {
        try heldDirectory(path.parent, creating: true, entry)
    }

    /// The directory `components` under the destination (the destination itself for none),
    /// reached from the deepest held directory on its path: the components below it opened one
    /// at a time, each with `openat(2)` and `O_NOFOLLOW | O_DIRECTORY` from the one before
    /// (``openComponent(_:in:creating:_:flags:)``), and held for the next calls; held
    /// directories off the path are closed.
    /// - Parameter creating: Whether a missing component is made (`mkdirat(2)`, mode 0777 less
    ///   the umask).
    /// - Returns: A lookup descriptor the extractor keeps owning, valid until the next call that
    ///   holds directories.
    /// - Throws: As ``openDirectory(_:creating:_:lastFlags:)``.
    func heldDirectory(_ components: ArraySlice<[UInt8]>, creating: Bool, _ entry: TarEntry) throws -> Int32 {
        var common = 0
        while common < min(heldPath.count, components.count),
              heldPath[common] == components[components.startIndex + common] {
            common += 1
        }
        // An ancestor of the deepest held directory: taken as it is, the deeper ones kept.
        if common == components.count {
            if common == 0 { return destination }
            if let held = heldDirectories.last(where: { $0.depth == common }) { return held.descriptor }
        }
        while let last = heldDirectories.last, last.depth > common {
            heldDirectories.removeLast()
            try? SystemCalls.close(last.descriptor, target: "directory")
        }
        var depth = heldDirectories.last?.depth ?? 0
        heldPath.removeSubrange(depth...)
        while depth < components.count {
            let next = try openComponent(components.prefix(depth + 1), in: heldDirectories.last?.descriptor ?? destination,
                                         creating: creating, entry, flags: SystemCalls.lookupDirectoryFlags)
            if heldDirectories.count >= Self.maximumHeldDirectories, let replaced = heldDirectories.popLast() {
                try? SystemCalls.close(replaced.descriptor, target: "directory")
            }
            heldDirectories.append((depth + 1, next))
            heldPath.append(components[components.startIndex + depth])
            depth += 1
        }
        return heldDirectories.last?.descriptor ?? destination
    }

    /// Opens the directory `components` under the destination, each component with `openat(2)`
    /// and `O_NOFOLLOW | O_DIRECTORY` relative to the one before, so no symbolic link is
    /// followed, wherever it came from.
    /// - Parameters:
    ///   - creating: Whether a missing component is made (`mkdirat(2)`, mode 0777 less the umask).
    ///   - flags: How the last component is opened: for lookups (`O_PATH` on Linux), or
    ///     `O_RDONLY` to change its mode and times.
    /// - Returns: A new descriptor, owned by the caller (a duplicate of the destination's for no
    ///   components).
    /// - Throws: ``ExtractionError/Reason/symbolicLinkInPath(component:)`` or
    ///   ``ExtractionError/Reason/notADirectoryInPath(component:)`` naming the path up to the
    ///   component; `ByteStreamError` of the calls.
    func openDirectory(_ components: ArraySlice<[UInt8]>, creating: Bool, _ entry: TarEntry,
                       lastFlags flags: Int32 = SystemCalls.lookupDirectoryFlags) throws -> Int32 {
        var current = destination
        var owned = false
        defer { if owned { try? SystemCalls.close(current, target: "directory") } }
        for index in components.indices {
            let isLast = index == components.index(before: components.endIndex)
            let next = try openComponent(components[...index], in: current, creating: creating, entry,
                                         flags: isLast ? flags : SystemCalls.lookupDirectoryFlags)
            if owned { try? SystemCalls.close(current, target: "directory") }
            current = next
            owned = true
        }
        if !owned { return try SystemCalls.duplicate(destination, target: "destination") }
        owned = false
        return current
    }

    /// Opens the last of `components`, a directory, in `directory`, never following a link.
    func openComponent(_ components: ArraySlice<[UInt8]>, in directory: Int32, creating: Bool,
                               _ entry: TarEntry, flags: Int32) throws -> Int32 {
        let name = Pathname(bytes: components.last!)!
        let shown = displayText(Array(components.joined(separator: [UInt8(ascii: "/")])))
        var madeOne = false
        while true {
            do {
                return try SystemCalls.open(name, in: directory, flags: flags | OpenFlag.directory | OpenFlag.noFollow,
                                            target: shown)
            } catch let error as ByteStreamError {
                switch error.errno ?? 0 {
                case Errno.noSuchFile where creating && !madeOne:
                    // Made now, or by someone else meanwhile: either way opened (and checked) next.
                    try SystemCalls.makeDirectory(name, in: directory, mode: 0o777, target: shown)
                    madeOne = true
                case Errno.tooManySymbolicLinks, Errno.notADirectory:
                    let found = try SystemCalls.info(of: name, in: directory, target: shown)
                    let path = Array(components.joined(separator: [UInt8(ascii: "/")]))
                    if found?.isSymbolicLink == true {
                        throw ExtractionError(.symbolicLinkInPath(component: path), entry)
                    }
                    throw ExtractionError(.notADirectoryInPath(component: path), entry)
                default:
                    throw error
                }
            }
        }
    }

    /// Makes a directory member (mode 0700 until ``finish()``), or takes the directory already
    /// there; its mode, owner and time wait for ``finish()``. The destination itself (a member
    /// named `./` or `/`) is left as it is.
    func makeDirectory(_ entry: TarEntry, at path: ExtractionPath) throws {
        guard !path.components.isEmpty else { return }
        let parent = try parentDirectory(of: path, entry)
        let name = Pathname(bytes: path.name)!
        let shown = displayText(entry.path)
        if try !SystemCalls.makeDirectory(name, in: parent, mode: 0o700, target: shown) {
            if let found = try SystemCalls.info(of: name, in: parent, target: shown), !found.isDirectory {
                // A file or a link in the way: removed (the link itself) only when replaceable.
                try requireReplaceable(path, entry)
                try SystemCalls.unlink(name, in: parent, target: shown)
                guard try SystemCalls.makeDirectory(name, in: parent, mode: 0o700, target: shown) else {
                    throw ExtractionError(.exists, entry)
                }
            }
        }
        // Held: the members that follow are mostly inside it.
        let descriptor = try heldDirectory(path.components[...], creating: false, entry)
        let file = try SystemCalls.info(of: descriptor, target: shown)
        made[path.key] = Made(kind: .directory, file: file)
        pendingDirectories[path.key] = PendingDirectory(entry: entry, path: path, file: file)
    }

    /// Gives one directory its mode, owner and time, through a descriptor opened without
    /// following links and checked to be the directory made.
    func applyAttributes(of directory: PendingDirectory) throws {
        let shown = displayText(directory.entry.path)
        let parent = try heldDirectory(directory.path.parent, creating: false, directory.entry)
        let descriptor = try openComponent(directory.path.components[...], in: parent, creating: false, directory.entry,
                                           flags: OpenFlag.readOnly)
        defer { try? SystemCalls.close(descriptor, target: shown) }
        let file = try SystemCalls.info(of: descriptor, target: shown)
        guard file.isSameFile(as: directory.file) else { return }
        try applyAttributes(to: descriptor, of: directory.entry, shown: shown)
    }
}
