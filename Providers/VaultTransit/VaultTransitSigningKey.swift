public import CertificateProviders
import RemoteProviderSupport

/// A transit key: it stays on the Vault / OpenBao server, which signs digests made here.
///
/// As a ``CertificateProviders/BatchSigningKey`` it signs up to ``maximumBatchSize`` digests per call:
/// the digests go as `batch_input` in requests of at most ``digestsPerRequest``, with up to
/// ``requestsInFlight`` requests in flight at once. Every request names the key version the
/// certificate was checked against, so a key rotated meanwhile cannot slip in another key.
///
/// With a certificate (``certificate``), each returned value is verified against it before it is
/// returned: a value that does not verify fails the whole call with `.cryptoFailure`, so it never
/// reaches a container. Without one (a key for a certificate request), the request builder verifies
/// the signature against the key it puts into the request.
public struct VaultTransitSigningKey: BatchSigningKey {
    /// The key's name on the server.
    public let name: String
    /// The key version that signs.
    public let version: Int
    /// The certificate every signature is checked against; nil for a key without one yet.
    public let certificate: Certificate?
    /// The key's algorithm.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The key size in bits.
    public let keySize: Int
    /// The key's SubjectPublicKeyInfo (DER, as OpenSSL encodes the server's PEM).
    public let publicKeyDERRepresentation: [UInt8]
    /// `.rsaPSS` or `.rsaPKCS1v15` for RSA keys (parameter `scheme`), `.ecdsa` for EC keys.
    public let defaultScheme: SignatureScheme
    /// The most digests one signing request carries.
    public let digestsPerRequest = 32
    /// The most signing requests in flight at once.
    public let requestsInFlight = 4
    private let client: VaultTransitClient

    /// Describes version `version` of the transit key `name`.
    /// - Parameters:
    ///   - name: the key's name.
    ///   - version: the version that signs.
    ///   - publicKey: the version's DER SubjectPublicKeyInfo.
    ///   - algorithm: its algorithm.
    ///   - keySize: its size in bits.
    ///   - certificate: the certificate to check signatures against (it must certify `publicKey`).
    ///   - rsaScheme: the scheme an RSA key signs with by default.
    ///   - client: the client that reaches the server.
    public init(
        name: String,
        version: Int,
        publicKey: [UInt8],
        algorithm: PublicKeyAlgorithm,
        keySize: Int,
        certificate: Certificate?,
        rsaScheme: SignatureScheme,
        client: VaultTransitClient
    ) {
        self.name = name
        self.version = version
        self.certificate = certificate
        publicKeyAlgorithm = algorithm
        self.keySize = keySize
        publicKeyDERRepresentation = publicKey
        defaultScheme = algorithm.isRSA ? rsaScheme : .ecdsa
        self.client = client
    }

    /// How many digests one call signs: ``digestsPerRequest`` times ``requestsInFlight`` times 2.
    public var maximumBatchSize: Int { digestsPerRequest * requestsInFlight * 2 }

    /// Signs digests on the server, several requests in flight, and checks every value.
    /// - Throws: `.invalidParameter` for a digest of the wrong length, an empty batch or one over
    ///   ``maximumBatchSize``; `.unsupportedAlgorithm` for a digest other than SHA-2 or a scheme that
    ///   does not fit the key; `.cryptoFailure` when a returned value does not verify with the
    ///   certificate; the client's errors.
    public func signatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [[UInt8]] {
        let what = "Vault transit key '\(name)' version \(version)"
        guard !digests.isEmpty, digests.count <= maximumBatchSize else {
            throw CertificateProviderError.invalidParameter(
                "\(what) signs 1 to \(maximumBatchSize) digests per call, not \(digests.count)"
            )
        }
        for digest in digests where digest.count != digestAlgorithm.outputByteCount {
            throw CertificateProviderError.invalidParameter(
                "\(what): a \(digestAlgorithm) digest has \(digestAlgorithm.outputByteCount) bytes, not \(digest.count)"
            )
        }
        let hashName = try Self.hashName(digestAlgorithm, what)
        let signatureAlgorithm = try self.signatureAlgorithm(scheme, what)
        let groups = stride(from: 0, to: digests.count, by: digestsPerRequest).map {
            Array(digests[$0..<min($0 + digestsPerRequest, digests.count)])
        }
        var results = [[[UInt8]]](repeating: [], count: groups.count)
        try await withThrowingTaskGroup(of: (Int, [[UInt8]]).self) { group in
            var next = 0
            func submit() {
                let index = next
                next += 1
                group.addTask {
                    let signed = try await client.sign(
                        key: name,
                        version: version,
                        digests: groups[index],
                        hashAlgorithm: hashName,
                        signatureAlgorithm: signatureAlgorithm
                    )
                    return (index, signed)
                }
            }
            while next < min(requestsInFlight, groups.count) { submit() }
            while let (index, signed) = try await group.next() {
                results[index] = signed
                if next < groups.count { submit() }
            }
        }
        let signatures = results.flatMap { $0 }
        try verify(signatures, digests, digestAlgorithm, scheme, what)
        return signatures
    }

    private func verify(
        _ signatures: [[UInt8]],
        _ digests: [[UInt8]],
        _ digestAlgorithm: DigestAlgorithm,
        _ scheme: SignatureScheme,
        _ what: String
    ) throws {
        try certificate?.verifyServerSignatures(
            signatures,
            forDigests: digests,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            service: what
        )
    }

    /// The transit name of a digest (`sha2-256`).
    private static func hashName(_ digest: DigestAlgorithm, _ what: String) throws -> String {
        switch digest {
        case .sha256: return "sha2-256"
        case .sha384: return "sha2-384"
        case .sha512: return "sha2-512"
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(what) signs SHA-256, SHA-384 or SHA-512 digests, not \(digest.displayName)"
            )
        }
    }

    /// `pkcs1v15` or `pss` for an RSA key, nil for an EC key.
    private func signatureAlgorithm(_ scheme: SignatureScheme, _ what: String) throws -> String? {
        switch (publicKeyAlgorithm.isRSA, scheme) {
        case (true, .rsaPKCS1v15): return "pkcs1v15"
        case (true, .rsaPSS): return "pss"
        case (false, .ecdsa) where publicKeyAlgorithm.isEC: return nil
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(what) (\(publicKeyAlgorithm)) cannot sign with the scheme \(scheme)"
            )
        }
    }
}
