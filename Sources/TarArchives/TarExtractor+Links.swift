import ByteStreams

/// Symbolic and hard links: their targets checked before anything is made.
extension TarExtractor {
    /// Makes a symbolic link member (`symlinkat(2)`), its target stored as given once it is
    /// known to stay inside the destination (``ExtractionPath/linkStaysInside(_:)``) or links
    /// outside are allowed; its time and (as root, when asked) owner are the link's own.
    func makeSymbolicLink(_ entry: TarEntry, at path: ExtractionPath) throws {
        guard !path.components.isEmpty else { throw ExtractionError(.emptyName, entry) }
        let target = entry.linkTarget
        guard !target.contains(0),
              options.allowsLinksOutsideDestination || path.linkStaysInside(target, isRealDirectory: { prefix in
                  guard let fd = try? openDirectory(prefix, creating: false, entry) else { return false }
                  try? SystemCalls.close(fd, target: "directory")
                  return true
              }) else {
            throw ExtractionError(.linkTargetOutsideDestination(target: target), entry)
        }
        let parent = try parentDirectory(of: path, entry)
        let name = Pathname(bytes: path.name)!
        let shown = displayText(entry.path)
        let linkTarget = Pathname(bytes: target)!
        // Made where the name is free (the usual case, one call); else what is there is replaced
        // when allowed.
        if try !SystemCalls.makeSymbolicLink(name, in: parent, to: linkTarget, target: shown) {
            try requireReplaceable(path, entry)
            // The name itself goes (a link there is removed, not followed); a directory is not
            // removed, and makes this fail.
            try SystemCalls.unlink(name, in: parent, target: shown)
            guard try SystemCalls.makeSymbolicLink(name, in: parent, to: linkTarget, target: shown) else {
                throw ExtractionError(.exists, entry)
            }
        }
        if let ids = ownerToApply(of: entry) {
            try SystemCalls.changeOwner(of: name, in: parent, owner: ids.owner, group: ids.group, target: shown)
        }
        try SystemCalls.setTimes(of: name, in: parent, access: nil, modification: modificationTime(of: entry), target: shown)
        if let file = try SystemCalls.info(of: name, in: parent, target: shown) {
            made[path.key] = Made(kind: .symbolicLink, file: file)
        }
    }

    /// Makes a hard link member: another name for a regular file that an earlier member of this
    /// extraction wrote and that is still that file (device and inode), made with `linkat(2)`
    /// between directory descriptors without following links. A link to a symbolic link, a
    /// directory, a name outside the destination or never extracted is refused: a hard link to
    /// a symbolic link an archive made would let a later member write through it.
    func makeHardLink(_ entry: TarEntry, at path: ExtractionPath) throws {
        guard !path.components.isEmpty else { throw ExtractionError(.emptyName, entry) }
        let target = entry.linkTarget
        guard let targetPath = try? ExtractionPath.normalising(target).path, !targetPath.components.isEmpty else {
            throw ExtractionError(.linkTargetOutsideDestination(target: target), entry)
        }
        guard let earlier = made[targetPath.key] else {
            throw ExtractionError(.hardLinkTargetNotExtracted(target: target), entry)
        }
        guard earlier.kind == .file else { throw ExtractionError(.hardLinkTargetNotRegularFile(target: target), entry) }

        let shown = displayText(entry.path)
        let targetDirectory = try openDirectory(targetPath.parent, creating: false, entry)
        defer { try? SystemCalls.close(targetDirectory, target: shown) }
        let targetName = Pathname(bytes: targetPath.name)!
        guard let found = try SystemCalls.info(of: targetName, in: targetDirectory, target: displayText(target)),
              found.isRegularFile, found.isSameFile(as: earlier.file) else {
            throw ExtractionError(.hardLinkTargetNotRegularFile(target: target), entry)
        }

        let parent = try parentDirectory(of: path, entry)
        let name = Pathname(bytes: path.name)!
        if let existing = try SystemCalls.info(of: name, in: parent, target: shown) {
            if existing.isSameFile(as: found) {
                made[path.key] = earlier
                return
            }
            try requireReplaceable(path, entry)
            try SystemCalls.unlink(name, in: parent, target: shown)
        }
        guard try SystemCalls.link(targetName, in: targetDirectory, to: name, in: parent, target: shown) else {
            throw ExtractionError(.exists, entry)
        }
        made[path.key] = earlier
    }
}
