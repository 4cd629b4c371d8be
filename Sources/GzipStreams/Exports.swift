// `import GzipStreams` alone gives the streams it wraps (files, memory, read-ahead) and
// `ByteStreamError`, as swift-nio's `NIO` re-exports `NIOCore`.
@_exported import ByteStreams
