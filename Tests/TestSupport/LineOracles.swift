// Plain, slow statements of the line rules the line-reading code must follow: the oracles the
// CLI and library tests compare with.

/// Lines `first` through `last` (numbered from 1; to the end when `nil`) of `data`, each with
/// its `\n`, as `sed -n 'first,lastp'` prints them.
public func sedLines(_ data: [UInt8], _ first: Int, _ last: Int?) -> [UInt8] {
    var output: [UInt8] = []
    var line = 1
    for byte in data {
        if line >= first && line <= (last ?? .max) { output.append(byte) }
        if byte == 0x0A { line += 1 }
    }
    return output
}

/// Hadoop's LineRecordReader rule for a split: the lines of `data` that start in
/// [offset, offset + length) (to the end without a length), each whole with its `\n`. A line
/// starts at 0 and after every `\n`.
public func linesStarting(in data: [UInt8], offset: Int, length: Int?) -> [UInt8] {
    let end = length.map { offset + $0 } ?? Int.max
    var result: [UInt8] = []
    var lineStart = 0
    while lineStart < data.count {
        let lineEnd = data[lineStart...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? data.count
        if lineStart >= end { break }
        if lineStart >= offset { result += data[lineStart..<lineEnd] }
        lineStart = lineEnd
    }
    return result
}
