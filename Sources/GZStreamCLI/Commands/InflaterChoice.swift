import GzipStreams

extension Command {
    /// The deflate decoder for this run's sequential readers: zlib's (``GzipInputStream/Inflater/zlib``)
    /// for `test`, `list`, `unpack --strict` and `index --strict`, so that a file they pass is one that zlib, GNU
    /// gzip, pigz and CPython read too; otherwise ISA-L's (``GzipInputStream/Inflater/isal``),
    /// about twice as fast. ISA-L decodes some deflate data that zlib rejects (a dynamic block
    /// whose literal/length or distance code is incomplete); plain `unpack` keeps its output only
    /// when the member's CRC-32 and ISIZE match it, as igzip does.
    var inflaterChoice: GzipInputStream.Inflater {
        switch options.command {
        case .test, .list: .zlib
        case .unpack(let unpack), .receive(let unpack, _): unpack.decode.strict ? .zlib : .isal
        case .index(let index): index.strict ? .zlib : .isal
        case .pack, .send: .isal
        }
    }
}
