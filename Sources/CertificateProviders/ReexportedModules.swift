// The shape of the error types (`CodedError`, `ErrorCode`) and `Secret` live in leaf modules of their
// own so that the HTTP client (which carries passwords in request bodies and throws its own errors)
// does not depend on the core; the core's users keep finding both here.
@_exported public import CodedErrors
@_exported public import Secrets
