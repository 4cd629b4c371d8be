/// A member's path made safe to create under the destination: relative, without empty, `.` or
/// `..` components. Pure path arithmetic on bytes; nothing here touches the file system.
///
/// The rules (as GNU tar's `--extract` applies them by default, and Python's tarfile `data`
/// filter): leading `/` are removed (the caller warns once); `.` components and repeated `/`
/// are dropped; a `..` component anywhere is refused, never resolved, since `a/../../x` would
/// leave the tree and a symbolic link `a` would make even `a/../x` land elsewhere.
struct ExtractionPath: Hashable {
    /// The components, each non-empty, none `.` or `..`, none holding `/` or NUL.
    var components: [[UInt8]]

    /// The path joined by `/`: a key for members already extracted.
    var key: [UInt8] { Array(components.joined(separator: [UInt8(ascii: "/")])) }
    /// The components of the directory holding the member.
    var parent: ArraySlice<[UInt8]> { components.dropLast() }
    /// The last component: the name created in the parent directory.
    var name: [UInt8] { components.last ?? [] }

    /// Why a path was refused.
    enum Refusal: Error {
        case nulInName, parentDirectoryComponent

        /// The refusal as an ``ExtractionError`` says it.
        var reason: ExtractionError.Reason {
            switch self {
            case .nulInName: .nulInName
            case .parentDirectoryComponent: .parentDirectoryComponent
            }
        }
    }

    /// `path` made relative to the destination.
    /// - Returns: The path (no components at all for `/` or `./`: the destination itself), and
    ///   whether leading `/` were removed.
    /// - Throws: ``Refusal`` for a NUL byte or a `..` component.
    static func normalising(_ path: [UInt8]) throws(Refusal) -> (path: ExtractionPath, strippedSlash: Bool) {
        guard !path.contains(0) else { throw .nulInName }
        var components: [[UInt8]] = []
        for component in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if component.elementsEqual([UInt8(ascii: ".")]) { continue }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { throw .parentDirectoryComponent }
            components.append(Array(component))
        }
        return (ExtractionPath(components: components), path.first == UInt8(ascii: "/"))
    }

    /// Whether a symbolic link at this path with target `target` stays inside the destination:
    /// the target is relative and, resolved lexically from the link's directory, never climbs
    /// above the destination; a `..` that follows a name is taken only when that name is now a
    /// real directory (`isRealDirectory`, given the path from the destination).
    ///
    /// Lexical resolution is exact through real directories: the link's own directories were
    /// opened without following any link, and directories are never replaced. A `..` after a
    /// name that is a symbolic link climbs from wherever that link points (`b -> .` at the top,
    /// then `c -> b/../x`, leaves the tree), and after a name not there yet it could later be
    /// one: both are refused. Each link on a chain was checked the same way, so no chain leaves
    /// the tree.
    func linkStaysInside(_ target: [UInt8], isRealDirectory: (ArraySlice<[UInt8]>) -> Bool) -> Bool {
        guard !target.isEmpty, target.first != UInt8(ascii: "/"), !target.contains(0) else { return false }
        var position = Array(components.dropLast())
        // How many leading components of `position` are known to be real directories.
        var known = position.count
        for component in target.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if component.elementsEqual([UInt8(ascii: ".")]) { continue }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                guard !position.isEmpty else { return false }
                if known < position.count {
                    guard isRealDirectory(position[...]) else { return false }
                }
                position.removeLast()
                known = position.count
            } else {
                position.append(Array(component))
            }
        }
        return true
    }
}
