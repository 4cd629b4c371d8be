import ByteStreams
import StreamCache

/// Reads the `--key-file` of cache and send/receive: a refused or unreadable file is one line
/// naming it (``Reported``, exit 1), as is one the group or others may write, or another user
/// than you or root owns (they could choose the key); a file that others may read, or that
/// root owns when you are not root, is used with a warning (silenced by `-q`), since the key is then only as secret as that file.
/// - Parameters:
///   - path: The key file, as given.
///   - diagnostics: Where the error or warning goes.
/// - Throws: ``Reported`` once the failure is told.
/// Blocks while the file is read.
func loadKeyFile(_ path: String, diagnostics: Diagnostics) throws -> SecretStreamKey {
    let key: SecretStreamKey
    do {
        key = try SecretStreamKey(contentsOfFile: path)
    } catch SecretStreamError.invalidKeyFile(_, let byteCount) {
        diagnostics.error(path, "a key file must hold exactly \(SecretStreamKey.byteCount) bytes, not \(byteCount)")
        throw Reported(status: .error)
    } catch SecretStreamError.keyFileNotRegular(_, let fileType) {
        diagnostics.error(path, "a key file must be a regular file, not \(fileType)")
        throw Reported(status: .error)
    } catch SecretStreamError.keyFileWritableByOthers(_, let permissions) {
        diagnostics.error(path, keyFileWritableProblem(permissions))
        throw Reported(status: .error)
    } catch SecretStreamError.keyFileOwnedByAnotherUser(_, let owner) {
        diagnostics.error(path, keyFileOwnerProblem(owner))
        throw Reported(status: .error)
    } catch let error as ByteStreamError {
        diagnostics.error(path, "cannot read the key file: \(error.reason)")
        throw Reported(status: .error)
    }
    if let exposure = key.fileExposure {
        diagnostics.warning(path, "warning: key file \(exposure)")
    }
    return key
}
