internal import CCurl
internal import CCurlShims
import CertificateProviders
internal import Durability
import Foundation
internal import OpenSSLWrappers

/// The TLS material of one ``CurlTransport``, made once: the extra trust anchors and the client
/// identity as OpenSSL handles, and the C structure the SSL_CTX hook reads on every new connection.
///
/// `@unchecked Sendable`: everything is written in `init` and only read afterwards (by curl's
/// thread, through `config`); the certificates and key it points at are kept alive by the stored
/// `Certificate` and `LocalSigningKey` values.
final class CurlTLSSetup: @unchecked Sendable {
    /// The C view of the material; nil when there is nothing to install.
    let config: UnsafeMutablePointer<CCurlShims_tls_config>?
    /// The CA file to use instead of the system store, or nil.
    let replacementCAFile: String?
    /// The client certificate's subject, for error messages; nil without a client identity.
    let clientSubject: String?
    private let keptAlive: [Certificate]
    private let keptKey: LocalSigningKey?
    private let chain: UnsafeMutableBufferPointer<OpaquePointer?>
    private let anchors: UnsafeMutableBufferPointer<OpaquePointer?>

    /// No extra anchors, no client identity.
    init() {
        config = nil
        replacementCAFile = nil
        clientSubject = nil
        keptAlive = []
        keptKey = nil
        chain = .allocate(capacity: 0)
        anchors = .allocate(capacity: 0)
    }

    init(configuration: CurlTransport.Configuration) throws {
        var anchorCertificates: [Certificate] = []
        var replacement: String?
        if let file = configuration.trustedCAFile {
            guard let bytes = FileSystem.read(file) else {
                throw FileSystem.failure("read the trusted CA file", file)
            }
            let certificates: [Certificate]
            do {
                certificates = try Certificate.certificates(derOrPEM: bytes)
            } catch {
                throw CertificateProviderError.malformedInput(
                    "the trusted CA file '\(file)' holds no PEM or DER certificate"
                )
            }
            guard !certificates.isEmpty else {
                throw CertificateProviderError.malformedInput("the trusted CA file '\(file)' holds no certificate")
            }
            if configuration.trustedCAFileReplacesSystemStore {
                replacement = file
            } else {
                anchorCertificates = certificates
            }
        }
        var key: LocalSigningKey?
        var identityCertificates: [Certificate] = []
        if let identity = configuration.clientIdentity {
            guard let local = identity.key as? LocalSigningKey else {
                throw CertificateProviderError.invalidParameter(
                    "the TLS client identity '\(identity.certificate.subject)' has a key this process does not hold "
                        + "(\(type(of: identity.key))); use a stored identity or a PKCS#12 file"
                )
            }
            key = local
            identityCertificates = [identity.certificate] + identity.chain
        }
        replacementCAFile = replacement
        clientSubject = configuration.clientIdentity?.certificate.subject
        keptAlive = anchorCertificates + identityCertificates
        keptKey = key
        let chainCertificates = identityCertificates.dropFirst()
        chain = .allocate(capacity: chainCertificates.count)
        _ = chain.initialize(from: chainCertificates.map { Optional($0.handle.pointer) })
        anchors = .allocate(capacity: anchorCertificates.count)
        _ = anchors.initialize(from: anchorCertificates.map { Optional($0.handle.pointer) })
        if anchorCertificates.isEmpty && key == nil {
            config = nil
        } else {
            let config = UnsafeMutablePointer<CCurlShims_tls_config>.allocate(capacity: 1)
            config.initialize(
                to: CCurlShims_tls_config(
                    certificate: identityCertificates.first?.handle.pointer,
                    private_key: key?.handle.pointer,
                    chain: UnsafePointer(chain.baseAddress),
                    chain_count: Int32(chain.count),
                    extra_anchors: UnsafePointer(anchors.baseAddress),
                    extra_anchor_count: Int32(anchors.count)
                )
            )
            self.config = config
        }
    }

    deinit {
        config?.deallocate()
        chain.deallocate()
        anchors.deallocate()
    }
}
