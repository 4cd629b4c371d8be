// The cache hands out and takes the byte streams and keys of these modules.
@_exported import ByteStreams
@_exported import SecretStreams
