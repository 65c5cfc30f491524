// Signs one document with the identity of a PKCS#12 file, records it in an SQLite journal and
// verifies the signature against a root: `sqlite-signer FILE.p12 DOCUMENT JOURNAL.sqlite ROOT.pem`,
// the file's password in SIGNER_P12_PASSWORD. Prints the signature's path, the verdict and the
// journal's record count.

import CertificateProviders
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing

let arguments = CommandLine.arguments
guard arguments.count == 5, let password = ProcessInfo.processInfo.environment["SIGNER_P12_PASSWORD"] else {
    FileHandle.standardError.write(
        Data("usage: SIGNER_P12_PASSWORD=… sqlite-signer FILE.p12 DOCUMENT JOURNAL ROOT.pem\n".utf8)
    )
    exit(64)
}
let (p12, document, journalPath, rootPath) = (arguments[1], arguments[2], arguments[3], arguments[4])

do {
    var registry = ProviderRegistry()
    try PKCS12CertificateProvider.register(
        in: &registry,
        parameters: [PKCS12CertificateProvider.ParameterKey.inMemory: .boolean(true)]
    )
    let journal = try SignatureJournal(url: URL(fileURLWithPath: journalPath))
    let coordinator = SigningCoordinator(registry: registry, journal: journal)
    let output = URL(fileURLWithPath: document + ".p7s")
    let result = try await coordinator.sign(
        document: .file(URL(fileURLWithPath: document)),
        provider: .pkcs12,
        parameters: [
            PKCS12CertificateProvider.ParameterKey.file: .string(p12),
            PKCS12CertificateProvider.ParameterKey.password: .secret(Secret(password)),
        ],
        output: output
    )
    let root = try Certificate.certificates(derOrPEM: Array(Data(contentsOf: URL(fileURLWithPath: rootPath))))
    let verification = try CMSVerifier.verify(
        signature: result.signature,
        contentFileAt: URL(fileURLWithPath: document),
        trustAnchors: root
    )
    print("signature: \(output.path)")
    print("signer: \(result.signerCertificate.subject)")
    print("valid: \(verification.isValid)")
    print("records: \(try await journal.count())")
} catch {
    FileHandle.standardError.write(Data("sqlite-signer: \(error)\n".utf8))
    exit(1)
}
