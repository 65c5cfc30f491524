public import CertificateProviders
public import CertificateProvidersTesting
import Foundation

/// A throwaway test CA and one signer it issued, held as a `certsign` user holds them: the root
/// certificate as a PEM file and the signer as a `.p12` made by the real `openssl pkcs12 -export`.
public struct PKCS12SignerFiles: Sendable {
    /// The CA.
    public let pki: TestPKI
    /// The signer, issued by the CA's root.
    public let signer: SigningIdentity
    /// The root certificate's PEM file.
    public let rootPath: String
    /// The signer's `.p12` (not written when made with `exportsPKCS12: false`).
    public let p12Path: String
    /// The `.p12`'s password.
    public let password: String

    /// Makes the CA and the signer and writes `root.pem` and `signer.p12` into `directory`.
    /// - Parameters:
    ///   - rootKeyType: the root's key (the signer's is `keyType`).
    ///   - exportsPKCS12: whether to write the `.p12` (an outside signer of two-phase signing holds a
    ///     PEM key instead, and `openssl pkcs12` cannot write a GOST key without the engine's options).
    public init(
        rootSubject: String,
        rootKeyType: LocalSigningKey.GenerationParameters = .rsa2048,
        signerSubject: String,
        keyType: LocalSigningKey.GenerationParameters,
        password: String,
        exportsPKCS12: Bool = true,
        in directory: TemporaryDirectory
    ) throws {
        pki = try TestPKI(rootSubject: rootSubject, keyType: rootKeyType)
        signer = try pki.issueLeaf(subject: signerSubject, keyType: keyType)
        rootPath = try directory.write("root.pem", text: pki.root.certificate.pemRepresentation)
        p12Path = directory.path("signer.p12")
        self.password = password
        if exportsPKCS12 { try OpenSSLPKCS12.export(signer, password: password, to: p12Path, in: directory) }
    }
}
