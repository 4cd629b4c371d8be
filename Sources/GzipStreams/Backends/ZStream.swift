import CZlib
import Synchronization

/// One zlib stream, deflating or inflating raw deflate data (RFC 1951, no zlib or gzip
/// wrapper: gzstream writes and parses the RFC 1952 framing itself).
///
/// The `z_stream` is allocated once at a fixed address, because zlib keeps a pointer to it;
/// each successful init is paired with exactly one `deflateEnd`/`inflateEnd`, in ``end()`` or
/// at the latest in `deinit`. ``liveCount`` counts the zlib states not yet ended, so a test can
/// prove the pairing.
final class ZStream {
    enum Mode { case deflate, inflate }

    /// The number of initialised zlib states not yet ended, across the process.
    static let liveCount = Atomic<Int>(0)

    let mode: Mode
    let pointer: UnsafeMutablePointer<z_stream>
    private(set) var isLive = false
    /// Whether ``RawInflater/step(input:inputCount:output:outputCapacity:)`` inflates with
    /// `Z_BLOCK`, returning at every deflate block boundary, so that `data_type` tells where it
    /// stopped (``bitsPastBlockBoundary``); `Z_NO_FLUSH` otherwise.
    var stopsAtBlocks = false
    /// ``RawInflater/seeksBlockBoundary``.
    var seeksBlockBoundary = false
    /// ``RawInflater/blockBoundaryFound``.
    var blockBoundaryFound: (bits: Int, bytesAfter: [UInt8])?
    /// zlib's `data_type` after the last step.
    var dataType: Int32 = 0
    /// zlib's `data_type` after the last step that took input or gave output.
    var dataTypeAfterProgress: Int32 = 0

    /// A raw deflater at `level` (0...9) with a 32 KiB window and zlib's default memory level.
    /// Wraps zlib's `deflateInit2`.
    init(deflateLevel level: Int) throws(GzipError) {
        mode = .deflate
        pointer = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        let code = czlib_deflateInit2(pointer, Int32(level), Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY)
        try checkInit(code)
    }

    /// A raw inflater with a 32 KiB window. Wraps zlib's `inflateInit2`.
    init(inflate: Void) throws(GzipError) {
        mode = .inflate
        pointer = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        let code = czlib_inflateInit2(pointer, -MAX_WBITS)
        try checkInit(code)
    }

    private func checkInit(_ code: Int32) throws(GzipError) {
        guard code == Z_OK else {
            // deinit releases the memory: a class whose stored properties are all set runs it.
            throw GzipError.zlibFailure(code: code, message: Self.message(for: code, stream: nil))
        }
        isLive = true
        ZStream.liveCount.add(1, ordering: .relaxed)
    }

    /// Starts a new member with the same settings. Wraps zlib's `inflateReset`/`deflateReset`.
    func reset() {
        guard isLive else { return }
        _ = mode == .deflate ? deflateReset(pointer) : inflateReset(pointer)
    }

    /// Releases zlib's state; later calls do nothing. Wraps zlib's `deflateEnd`/`inflateEnd`.
    func end() {
        guard isLive else { return }
        isLive = false
        _ = mode == .deflate ? deflateEnd(pointer) : inflateEnd(pointer)
        ZStream.liveCount.subtract(1, ordering: .relaxed)
    }

    deinit {
        end()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// zlib's message for the last failure, or a name for `code`.
    static func message(for code: Int32, stream: UnsafeMutablePointer<z_stream>?) -> String {
        if let text = stream?.pointee.msg { return String(cString: text) }
        switch code {
        case Z_MEM_ERROR: return "out of memory"
        case Z_VERSION_ERROR: return "incompatible zlib version"
        case Z_STREAM_ERROR: return "invalid zlib stream state"
        case Z_DATA_ERROR: return "invalid deflate data"
        case Z_BUF_ERROR: return "no progress possible"
        default: return "zlib error \(code)"
        }
    }
}

/// The version of the zlib library loaded at run time, such as "1.2.13". Wraps zlib's `zlibVersion`.
public var zlibRuntimeVersion: String { String(cString: zlibVersion()) }
