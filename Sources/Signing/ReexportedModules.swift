// An app that signs also reads and checks what it signed: `import Signing` brings the CMS types
// (documents, timestamp tokens, signature levels) and the verifier with it, as it did before they
// had modules of their own. An app that only verifies imports `Validation` and links no journal.
@_exported public import CMS
@_exported public import Validation
