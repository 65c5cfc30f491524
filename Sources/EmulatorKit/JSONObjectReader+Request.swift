import CertificateProviders
import JSON

extension JSONObjectReader {
    /// Reads an object of a request body: a wrong shape is the client's, so it throws
    /// `.malformedInput` naming the field (a router answers it with its protocol's 400).
    init(request value: JSONValue, context: String) throws {
        try self.init(value, context: context, makeError: { CertificateProviderError(.malformedInput, $0) })
    }
}
