// `Secret` lives in a leaf module of its own so that the HTTP client, which carries passwords in
// request bodies, does not depend on the core; the core's users keep finding it here.
@_exported public import Secrets
