internal import CCurl
internal import CCurlShims
import Foundation
internal import OpenSSLWrappers

/// The TLS material of one ``CurlTransport``, made once: the extra trust anchors and the client
/// identity as OpenSSL handles, and the C structure the SSL_CTX hook reads on every new connection.
///
/// `@unchecked Sendable`: everything is written in `init` and only read afterwards (by curl's
/// thread, through `config`); the certificates and key it points at are kept alive by the stored
/// handles.
final class CurlTLSSetup: @unchecked Sendable {
    /// The C view of the material; nil when there is nothing to install.
    let config: UnsafeMutablePointer<CCurlShims_tls_config>?
    /// The CA file to use instead of the system store, or nil.
    let replacementCAFile: String?
    /// The client certificate's subject, for error messages; nil without a client identity.
    let clientSubject: String?
    private let keptAlive: [X509Handle]
    private let keptKey: EVPKeyHandle?
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
        var anchorCertificates: [X509Handle] = []
        var replacement: String?
        if let file = configuration.trustedCAFile {
            let certificates = try Self.certificates(inCAFile: file)
            if configuration.trustedCAFileReplacesSystemStore {
                replacement = file
            } else {
                anchorCertificates = certificates
            }
        }
        let identity = configuration.clientIdentity
        let identityCertificates = identity.map { [$0.certificate] + $0.chain } ?? []
        let key = identity?.key
        replacementCAFile = replacement
        clientSubject = identity?.subject
        keptAlive = anchorCertificates + identityCertificates
        keptKey = key
        let chainCertificates = identityCertificates.dropFirst()
        chain = .allocate(capacity: chainCertificates.count)
        _ = chain.initialize(from: chainCertificates.map { Optional($0.pointer) })
        anchors = .allocate(capacity: anchorCertificates.count)
        _ = anchors.initialize(from: anchorCertificates.map { Optional($0.pointer) })
        if anchorCertificates.isEmpty && key == nil {
            config = nil
        } else {
            let config = UnsafeMutablePointer<CCurlShims_tls_config>.allocate(capacity: 1)
            config.initialize(
                to: CCurlShims_tls_config(
                    certificate: identityCertificates.first?.pointer,
                    private_key: key?.pointer,
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

    /// The certificates of a CA file, PEM (any number) or DER (one).
    /// - Throws: `.fileSystem` when it cannot be read; `.malformedInput` when it holds no certificate.
    private static func certificates(inCAFile file: String) throws -> [X509Handle] {
        guard let bytes = FileManager.default.contents(atPath: file).map(Array.init) else {
            throw HTTPClientError(.fileSystem, "the trusted CA file '\(file)' cannot be read")
        }
        if let pem = try? X509Handle.parse(pem: bytes), !pem.certificates.isEmpty, pem.failure == nil {
            return pem.certificates
        }
        if let der = try? X509Handle.parse(der: bytes) { return [der] }
        throw HTTPClientError.malformedInput("the trusted CA file '\(file)' holds no PEM or DER certificate")
    }
}
