public import CertificateProviders
public import JSON

extension JSONObjectReader {
    /// Reads an object of a server's answer with errors of this package's vocabulary: a wrong shape
    /// throws `errorCode` (`.network` for a client: the server did not speak the protocol), with the
    /// message naming the field.
    /// - Parameters:
    ///   - value: the object.
    ///   - context: where it sits, for messages (`"CSC credentials/list"`).
    ///   - path: the prefix of field names, empty at the top.
    ///   - errorCode: the code of the error a wrong shape throws.
    /// - Throws: `errorCode` when `value` is not an object.
    public init(
        _ value: JSONValue,
        context: String,
        path: String = "",
        errorCode: CertificateProviderError.Code
    ) throws {
        try self.init(value, context: context, path: path, makeError: { CertificateProviderError(errorCode, $0) })
    }
}
