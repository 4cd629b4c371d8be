import ByteStreams
import TarArchives

/// The MEMBER names of `unpack ARCHIVE MEMBER...`: a member is wanted when its name is one of
/// them, or lies under one (as tar takes a directory's name for all it holds). Names are
/// compared without leading `/` and `./` and without trailing `/`, as stored names vary. They
/// are names, not patterns, as `tar -x` takes them without `--wildcards` (`list --members`
/// takes patterns: ``TarMemberPattern``).
struct MemberSelection {
    /// The names, normalised.
    let names: [[UInt8]]
    /// Which names matched a member.
    private var found: [Bool]

    init(_ names: [Pathname]) {
        self.names = names.map { Self.normalised($0.bytes) }
        found = Array(repeating: false, count: names.count)
    }

    /// Whether `entry` is wanted; records which names it matched.
    mutating func wants(_ entry: TarEntry) -> Bool {
        let path = Self.normalised(entry.path)
        var wanted = false
        for (index, name) in names.enumerated() {
            if path == name {
                wanted = true
                found[index] = true
            } else if name.isEmpty || (path.count > name.count && path.starts(with: name) && path[name.count] == UInt8(ascii: "/")) {
                wanted = true
                found[index] = true
            }
        }
        return wanted
    }

    /// The names no member matched, for messages.
    var namesNotFound: [String] {
        zip(names, found).filter { !$0.1 }.map { Pathname(bytes: $0.0)?.description ?? "" }
    }

    /// `path` without leading `/` and `./`, and without trailing `/`.
    static func normalised(_ path: [UInt8]) -> [UInt8] {
        var bytes = path[...]
        while true {
            if bytes.first == UInt8(ascii: "/") {
                bytes = bytes.dropFirst()
            } else if bytes.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) {
                bytes = bytes.dropFirst(2)
            } else {
                break
            }
        }
        while bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        return Array(bytes)
    }
}
