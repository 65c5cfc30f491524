@_exported public import CertificateIssuing

/// The test name of ``CertificateIssuer``: an in-memory certificate authority (root, intermediates,
/// leaves, TLS servers; RSA, EC or GOST keys; Cyrillic subjects). Issuance itself lives in the
/// production module `CertificateIssuing` (the DSS emulator and `certsign demo` use it too), which this
/// module re-exports so that test code reaches every member through `import CertificateProvidersTesting`.
///
/// ```swift
/// let pki = try TestPKI()
/// let alice = try pki.issueLeaf(subject: "CN=Алиса Иванова,O=ООО Ромашка")
/// ```
public typealias TestPKI = CertificateIssuer
