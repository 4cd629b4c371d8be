import Foundation

/// The program tests hash outputs with, as an argument vector that reads standard input (or
/// the file named after it) and prints the lowercase hex SHA-256 first on its line, then a
/// space: `openssl dgst -sha256 -r` when OpenSSL is installed, else coreutils' `sha256sum -b`.
/// OpenSSL's is the one `make test` installs because it uses the CPU's SHA instructions:
/// about 4 times less CPU than coreutils' on the 4 GiB + 7 fixture's output (3.9 s against
/// 17 s here), and the suite hashes that output several times.
public enum HashCommand {
    public static let arguments: [String] = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        ? ["/usr/bin/openssl", "dgst", "-sha256", "-r"]
        : ["/usr/bin/sha256sum", "-b"]

    /// ``arguments`` as one line for `sh -c`, every word quoted.
    public static var shellLine: String {
        arguments.map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ")
    }

    /// The hex digest at the start of the command's output (`nil` if it printed none).
    public static func digest(inOutput output: some Collection<UInt8>) -> String? {
        let hex = output.prefix { $0 != UInt8(ascii: " ") }
        guard hex.count == 64, hex.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return nil
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
