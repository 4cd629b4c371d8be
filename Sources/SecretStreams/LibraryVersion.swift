import CSodium

/// The version of the libsodium library loaded at run time, such as "1.0.18", for a program's
/// `--version`. Wraps libsodium's `sodium_version_string`.
public var libsodiumVersion: String { String(cString: sodium_version_string()) }
