#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// User and group names from the system's databases (`/etc/passwd`, `/etc/group`, or whatever
/// NSS is configured with), looked up once per ID and kept: tar stores an owner's name beside its
/// ID (ustar `uname`, `gname`) so that an extraction elsewhere can map it to that system's IDs.
///
/// Names are bytes, as the database holds them. An ID that has no entry has the empty name
/// (tar then stores the ID alone, as GNU tar does). Not thread-safe: one instance per walk.
package final class OwnerNames {
    private var users: [UInt32: [UInt8]] = [:]
    private var groups: [UInt32: [UInt8]] = [:]

    package init() {}

    /// The name of user `id`, or empty when it has none.
    /// The corresponding C function is `getpwuid_r(3)`.
    package func userName(_ id: UInt32) -> [UInt8] {
        if let known = users[id] { return known }
        let call: Lookup<passwd> = { record, buffer, count, result in
            var entry = passwd()
            let code = getpwuid_r(id, &entry, buffer, count, result)
            record = code == 0 && result.pointee != nil ? entry.pw_name.map { Self.bytes(of: $0) } : nil
            return code
        }
        let name = Self.lookUp(call) ?? []
        users[id] = name
        return name
    }

    /// The name of group `id`, or empty when it has none.
    /// The corresponding C function is `getgrgid_r(3)`.
    package func groupName(_ id: UInt32) -> [UInt8] {
        if let known = groups[id] { return known }
        let call: Lookup<group> = { record, buffer, count, result in
            var entry = group()
            let code = getgrgid_r(id, &entry, buffer, count, result)
            record = code == 0 && result.pointee != nil ? entry.gr_name.map { Self.bytes(of: $0) } : nil
            return code
        }
        let name = Self.lookUp(call) ?? []
        groups[id] = name
        return name
    }

    /// The ID of the user named `name`, or `nil` when there is none.
    /// The corresponding C function is `getpwnam_r(3)`.
    package static func userID(named name: String) -> UInt32? {
        var found: UInt32?
        let call: Lookup<passwd> = { _, buffer, count, result in
            var entry = passwd()
            let code = getpwnam_r(name, &entry, buffer, count, result)
            if code == 0, result.pointee != nil { found = entry.pw_uid }
            return code
        }
        _ = lookUp(call)
        return found
    }

    /// The ID of the group named `name`, or `nil` when there is none.
    /// The corresponding C function is `getgrnam_r(3)`.
    package static func groupID(named name: String) -> UInt32? {
        var found: UInt32?
        let call: Lookup<group> = { _, buffer, count, result in
            var entry = group()
            let code = getgrnam_r(name, &entry, buffer, count, result)
            if code == 0, result.pointee != nil { found = entry.gr_gid }
            return code
        }
        _ = lookUp(call)
        return found
    }

    /// A `get…_r` call: it may store a name in its first argument, and returns the call's result.
    private typealias Lookup<Record> = (inout [UInt8]?, UnsafeMutablePointer<CChar>, Int,
                                        UnsafeMutablePointer<UnsafeMutablePointer<Record>?>) -> Int32

    /// Runs a `get…_r` call with a buffer of 16 KiB, then larger ones while it says `ERANGE`
    /// (up to 1 MiB). - Returns: What `call` stored in its first argument.
    private static func lookUp<Record>(_ call: Lookup<Record>) -> [UInt8]? {
        var size = 16 * 1024
        while size <= 1024 * 1024 {
            var buffer = [CChar](repeating: 0, count: size)
            var result: UnsafeMutablePointer<Record>? = nil
            var record: [UInt8]?
            let code = buffer.withUnsafeMutableBufferPointer { call(&record, $0.baseAddress!, size, &result) }
            if code != ERANGE { return record }
            size *= 4
        }
        return nil
    }

    private static func bytes(of name: UnsafeMutablePointer<CChar>) -> [UInt8] {
        var bytes: [UInt8] = []
        var next = name
        while next.pointee != 0 {
            bytes.append(UInt8(bitPattern: next.pointee))
            next += 1
        }
        return bytes
    }
}
