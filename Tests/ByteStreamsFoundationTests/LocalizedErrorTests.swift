import ByteStreams
import ByteStreamsFoundation
import Foundation
import GzipStreams
import SecretStreams
import StreamCache
import Testing

/// One value of a public error type and the message a user reads for it.
struct ErrorSample: Sendable, CustomTestStringConvertible {
    var typeName: String
    var message: String
    /// Makes the error: a real failure where one is cheap to cause, else a case built directly.
    var make: @Sendable () -> any Error

    var testDescription: String { typeName }
}

/// The error `body` throws, or a failure naming `typeName` when it throws none.
private func caught(_ typeName: String, _ body: () throws -> Void) -> any Error {
    do {
        try body()
    } catch {
        return error
    }
    return ByteStreamError(.invalidArgument(name: typeName, message: "did not throw"), operation: "test")
}

private let samples: [ErrorSample] = [
    ErrorSample(typeName: "ByteStreamError", message: "open notes.txt: No such file or directory") {
        ByteStreamError(.system(errno: ENOENT), operation: "open", target: "notes.txt")
    },
    ErrorSample(typeName: "GzipError",
                message: "CRC-32 mismatch in member 2 at byte 1234 (stored 2d3b08af, computed 9e1c0b51)") {
        GzipError.crcMismatch(member: 2, stored: 0x2d3b_08af, computed: 0x9e1c_0b51, offset: 1234)
    },
    ErrorSample(typeName: "IndexedGzipError", message: "offset 10 is past the end of the data (5 bytes)") {
        IndexedGzipError.offsetPastEnd(offset: 10, size: 5)
    },
    ErrorSample(typeName: "GzipIndexError",
                message: "not a valid GZIDX index: it does not start with GZIDX (at byte 0)") {
        caught("GzipIndexError") { _ = try GzipIndex(gzidx: Array("GZIPX and more bytes than a header holds....".utf8)) }
    },
    ErrorSample(typeName: "GzipIndexError",
                message: "not a valid gztool index: it does not start with 8 zero bytes and gzipindx or gzipindX (at byte 0)") {
        caught("GzipIndexError") { _ = try GzipIndex(gztool: Array("sixteen bytes...".utf8), compressedSize: 0) }
    },
    ErrorSample(typeName: "GzipIndexError", message: "not a valid .gzi index: 3 bytes, fewer than 8") {
        caught("GzipIndexError") { _ = try GzipIndexFile(bytes: [1, 2, 3], compressedSize: 0) }
    },
    ErrorSample(typeName: "SecretStreamError", message: "trailing data at byte 70 after the final chunk") {
        SecretStreamError.trailingData(offset: 70)
    },
    ErrorSample(typeName: "CacheDirectoryError",
                message: "/tmp/cache: untrusted cache directory: writable by group or others (mode 0777; it must be writable by its owner only)") {
        CacheDirectoryError(path: "/tmp/cache", reason: .writableByOthers(mode: 0o777))
    },
    ErrorSample(typeName: "CacheMiss", message: "expired (last used 90 s ago)") {
        CacheMiss.expired(age: 90)
    },
    ErrorSample(typeName: "FoundationStreamError", message: "read: No such file or directory") {
        FoundationStreamError(operation: "read", underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOENT)))
    },
]

@Suite("Public errors describe themselves: localizedDescription and debugDescription")
struct LocalizedErrorTests {
    @Test("localizedDescription of each public error type is its description", arguments: samples)
    func localizedDescription(sample: ErrorSample) {
        let error = sample.make()
        #expect(String(reflecting: type(of: error)).hasSuffix("." + sample.typeName))
        #expect(error.localizedDescription == sample.message)
        #expect((error as? any LocalizedError)?.errorDescription == sample.message)
        #expect(String(describing: error) == sample.message)
        print("\(sample.typeName): \(error.localizedDescription)")
    }

    @Test("debugDescription shows the type, the case and the raw fields", arguments: [
        (GzipError.notGzip(offset: 0) as any Error, "GzipStreams.GzipError.notGzip(offset: 0)"),
        (GzipError.emptyInput, "GzipStreams.GzipError.emptyInput"),
        (GzipError.unsupportedMethod(7, member: 1, offset: 2),
         "GzipStreams.GzipError.unsupportedMethod(7, member: 1, offset: 2)"),
        (IndexedGzipError.undecodable(point: 3, error: .emptyInput),
         "GzipStreams.IndexedGzipError.undecodable(point: 3, error: GzipStreams.GzipError.emptyInput)"),
        (IndexedGzipError.notRegularFile, "GzipStreams.IndexedGzipError.notRegularFile"),
        (GzipIndexError(format: .gzidx, reason: "version 2 (known: 0 and 1)", offset: 5),
         #"GzipStreams.GzipIndexError(format: GzipStreams.GzipIndexFile.Format.gzidx, reason: "version 2 (known: 0 and 1)", offset: Optional(5))"#),
        (ByteStreamError(.system(errno: ENOENT), operation: "open", target: "notes.txt"),
         #"ByteStreams.ByteStreamError(code: ByteStreams.ByteStreamError.Code.system(errno: 2), operation: "open", target: Optional("notes.txt"))"#),
        (SecretStreamError.invalidKeyFile(path: "k", byteCount: 3),
         #"SecretStreams.SecretStreamError.invalidKeyFile(path: "k", byteCount: 3)"#),
        (CacheMiss.notFound, "StreamCache.CacheMiss.notFound"),
        (CacheMiss.expired(age: 90), "StreamCache.CacheMiss.expired(age: 90)"),
    ] as [(any Error & Sendable, String)])
    func debugDescription(error: any Error & Sendable, expected: String) {
        #expect(String(reflecting: error) == expected)
    }
}
