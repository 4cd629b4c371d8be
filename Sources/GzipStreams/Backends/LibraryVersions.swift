import CIsal
import CLibdeflate

// The versions of the compression libraries this module calls, for a program's `--version`.
// zlib's, read at run time, is ``zlibRuntimeVersion`` (ZStream.swift).

/// The version of libdeflate this module was compiled against, such as "1.14": libdeflate's
/// `LIBDEFLATE_VERSION_STRING` (libdeflate has no function that reports its version at run time;
/// its library name changes with any incompatible version).
public var libdeflateVersion: String { LIBDEFLATE_VERSION_STRING }

/// The version of ISA-L this module was compiled against, such as "2.30.0": ISA-L's
/// `ISAL_MAJOR_VERSION`, `ISAL_MINOR_VERSION` and `ISAL_PATCH_VERSION` (ISA-L has no function
/// that reports its version at run time).
public var isalVersion: String { "\(ISAL_MAJOR_VERSION).\(ISAL_MINOR_VERSION).\(ISAL_PATCH_VERSION)" }
