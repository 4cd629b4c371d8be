import Foundation
import Testing

// The Python packages that read gzip indexes, as oracles for the tests that write or read them.

/// indexed_gzip and rapidgzip (PyPI), installed by `make test-deps` into the virtual
/// environment `.build/test-venv` below the package root: the readers of the GZIDX index format
/// (indexed_gzip's own), against which tests check the indexes this package writes and reads.
/// Where the environment is missing or cannot import both, a test that needs it is skipped, and
/// says so (`.requires(.pythonOracle)`), rather than passing unchecked.
public struct PythonOracle: Sendable {
    /// The virtual environment: `<package root>/.build/test-venv`.
    public static let environment: URL = PackageLocations.root
        .appendingPathComponent(".build", isDirectory: true)
        .appendingPathComponent("test-venv", isDirectory: true)

    /// The Python packages the tests import.
    public static let packages = ["indexed_gzip", "rapidgzip"]

    /// The environment's interpreter, `bin/python3`, when it exists and imports every one of
    /// ``packages``; else `nil`. Checked once per test run (one child process), as `make
    /// test-deps` runs before the tests, not during them.
    public static let path: String? = {
        let python = environment.appendingPathComponent("bin/python3").path
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import " + packages.joined(separator: ", ")]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? python : nil
    }()

    /// rapidgzip's command-line program (`bin/rapidgzip`, which the package installs beside
    /// the interpreter: `rapidgzip --import-index INDEX --ranges LENGTH@OFFSET -c FILE`), when
    /// ``path`` is usable and the program is there; else `nil`.
    public static var rapidgzipPath: String? {
        let program = environment.appendingPathComponent("bin/rapidgzip").path
        return path != nil && FileManager.default.isExecutableFile(atPath: program) ? program : nil
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where ``PythonOracle/path`` is usable; elsewhere it is reported as
    /// skipped, with what is missing and how to install it.
    public static var requiresPythonOracle: Self {
        .enabled(if: PythonOracle.path != nil, Comment(rawValue: "needs indexed_gzip and rapidgzip in "
            + "\(PythonOracle.environment.path), which is missing or cannot import them (make test-deps installs them)"))
    }
}
