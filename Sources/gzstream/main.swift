@preconcurrency import ByteStreams
import GzipStreams
import Glibc
signal(SIGPIPE, SIG_IGN)
let mode = CommandLine.arguments[1]
let input = FileInputStream.standardInput()
let output = FileOutputStream.standardOutput()
do {
  if mode == "d" {
    let g = GzipInputStream(wrapping: input)
    try g.copy(to: output)
    g.close()
  } else {
    let g = GzipOutputStream(wrapping: output)
    try input.copy(to: g)
    try g.closeOrThrow()
  }
} catch { FileHandleStderr.write("\(error)\n"); exit(1) }
enum FileHandleStderr { static func write(_ s: String) { var e = FileOutputStream.standardError(); e.open(); try? e.writeAll(Array(s.utf8)) } }
