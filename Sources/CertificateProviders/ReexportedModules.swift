// `Secret` lives in a leaf module of its own so that the HTTP client, which carries passwords in
// request bodies, does not depend on the core; the core's users keep finding it here.
@_exported public import Secrets
// The shape of the error types (`CodedError`, `ErrorCode`): a leaf for the same reason; the core's
// users reach `description` and equality of `CertificateProviderError` without importing it.
@_exported public import CodedErrors
