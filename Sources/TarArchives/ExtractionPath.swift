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
    /// the target is relative, its `..` components all come first (empty and `.` components
    /// ignored), and they climb no higher than the destination from the link's directory.
    ///
    /// Lexical resolution is exact for the leading `..`: they climb from the link's own
    /// directory through directories this extraction opened without following any link. A `..`
    /// after a name is refused because the name may be a symbolic link, and `..` then climbs
    /// from wherever that link points (`b -> .` at the top, then `c -> b/../x`, leaves the
    /// tree). Each link on a chain was checked the same way, so no chain leaves the tree.
    func linkStaysInside(_ target: [UInt8]) -> Bool {
        guard !target.isEmpty, target.first != UInt8(ascii: "/"), !target.contains(0) else { return false }
        var climbs = 0
        var descended = false
        for component in target.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if component.elementsEqual([UInt8(ascii: ".")]) { continue }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                if descended { return false }
                climbs += 1
            } else {
                descended = true
            }
        }
        return climbs <= components.count - 1
    }
}
