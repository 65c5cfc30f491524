internal import COpenSSL
internal import COpenSSLShims
public import CertificateProviders
public import Foundation
internal import OpenSSLWrappers

/// An in-memory certificate authority built with OpenSSL: a root, optional intermediates, and leaf
/// identities with RSA, EC or GOST R 34.10-2012 keys (GOST needs the gost engine). Subjects may be
/// Cyrillic. Each certificate is signed with the digest that fits its issuer's key (SHA-256, or
/// Streebog for a GOST issuer).
///
/// The DSS emulator issues its users' and services' certificates with it, `certsign demo` its demo
/// identity, and tests their fixtures (`TestPKI` in `CertificateProvidersTesting` is this type).
/// Keys and certificates live in memory only; nothing is written to disk.
///
/// ```swift
/// let issuer = try CertificateIssuer()
/// let alice = try issuer.issueLeaf(subject: "CN=Алиса Иванова,O=ООО Ромашка")
/// // alice.certificate, alice.chain == [issuer.root.certificate], alice.key signs
/// ```
public struct CertificateIssuer: Sendable {
    /// A certificate that can issue others, with its key.
    public struct Authority: Sendable {
        /// The CA certificate.
        public let certificate: Certificate
        /// The CA's private key.
        public let key: LocalSigningKey
        /// The chain above this authority (issuer first, root last); empty for the root.
        public let chain: [Certificate]

        /// Creates an authority from an existing CA certificate and its key (to issue more
        /// certificates under a CA made earlier).
        public init(certificate: Certificate, key: LocalSigningKey, chain: [Certificate] = []) {
            self.certificate = certificate
            self.key = key
            self.chain = chain
        }
    }

    /// Creates an issuer around an existing root (certificate and key).
    public init(root: Authority) {
        self.root = root
    }

    /// The self-signed root.
    public let root: Authority

    /// Creates a root CA.
    /// - Parameters:
    ///   - rootSubject: the root's subject as an RFC 2253 string, `CN=…,O=…,C=…` (commas inside values are
    ///     not supported); `Certificate.subject` prints it back unchanged.
    ///   - keyType: the root's key (default RSA-2048).
    ///   - validity: validity period (default: from one day ago for ten years).
    public init(
        rootSubject: String = "CN=Test Root CA,O=swift-certificate-providers",
        keyType: LocalSigningKey.GenerationParameters = .rsa2048,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity
    ) throws {
        let key = try LocalSigningKey(generating: keyType)
        let certificate = try CertificateIssuer.makeCertificate(
            subject: rootSubject,
            publicKey: key,
            issuerCertificate: nil,
            issuerKey: key,
            validity: validity,
            profile: .authority
        )
        root = Authority(certificate: certificate, key: key, chain: [])
    }

    /// From one day ago to ten years from now.
    public static var defaultValidity: ClosedRange<Date> {
        Date().addingTimeInterval(-86_400)...Date().addingTimeInterval(10 * 365 * 86_400)
    }

    /// Issues an intermediate CA under `issuer` (default: the root).
    public func issueIntermediate(
        subject: String,
        keyType: LocalSigningKey.GenerationParameters = .rsa2048,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity
    ) throws -> Authority {
        let issued = try issueNewKey(keyType, subject: subject, issuer: issuer, validity: validity, profile: .authority)
        return Authority(certificate: issued.certificate, key: issued.key, chain: issued.chain)
    }

    /// Issues a leaf signing identity (digitalSignature + nonRepudiation, emailProtection and
    /// clientAuth) under `issuer` (default: the root). Its chain runs issuer first, root last.
    public func issueLeaf(
        subject: String,
        keyType: LocalSigningKey.GenerationParameters = .p256,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity
    ) throws -> SigningIdentity {
        let issued = try issueNewKey(keyType, subject: subject, issuer: issuer, validity: validity, profile: .leaf)
        return SigningIdentity(certificate: issued.certificate, chain: issued.chain, key: issued.key)
    }

    /// Issues a leaf certificate for an existing key.
    public func issueCertificate(
        subject: String,
        publicKey key: LocalSigningKey,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity
    ) throws -> Certificate {
        try certify(key, subject: subject, issuer: issuer ?? root, validity: validity, profile: .leaf)
    }

    /// Issues a certificate for an existing key whose extensions are exactly `extensions` (besides
    /// subject and authority key identifiers), in OpenSSL configuration syntax as for
    /// ``issueLeaf(subject:keyType:issuer:validity:extensions:)``: to give a key a new certificate
    /// that, e.g., names other revocation URLs.
    public func issueCertificate(
        subject: String,
        publicKey key: LocalSigningKey,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity,
        extensions: [(name: String, value: String)]
    ) throws -> Certificate {
        try certify(key, subject: subject, issuer: issuer ?? root, validity: validity, profile: .custom(extensions))
    }

    /// A certificate for `key` signed by `issuer`.
    private func certify(
        _ key: LocalSigningKey,
        subject: String,
        issuer: Authority,
        validity: ClosedRange<Date>,
        profile: Profile
    ) throws -> Certificate {
        try CertificateIssuer.makeCertificate(
            subject: subject,
            publicKey: key,
            issuerCertificate: issuer.certificate,
            issuerKey: issuer.key,
            validity: validity,
            profile: profile
        )
    }

    /// Issues a leaf identity whose extensions are exactly `extensions` (besides subject and
    /// authority key identifiers), each in OpenSSL configuration syntax, e.g.
    /// `("extendedKeyUsage", "critical,timeStamping")`, `("authorityInfoAccess", "OCSP;URI:http://…")`,
    /// `("crlDistributionPoints", "URI:http://…")`, `("keyUsage", "critical,digitalSignature")`.
    public func issueLeaf(
        subject: String,
        keyType: LocalSigningKey.GenerationParameters = .p256,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity,
        extensions: [(name: String, value: String)]
    ) throws -> SigningIdentity {
        let issued = try issueNewKey(
            keyType,
            subject: subject,
            issuer: issuer,
            validity: validity,
            profile: .custom(extensions)
        )
        return SigningIdentity(certificate: issued.certificate, chain: issued.chain, key: issued.key)
    }

    /// Issues a TLS server identity (digitalSignature + keyEncipherment, serverAuth) under `issuer`
    /// (default: the root) naming `dnsNames` and `ipAddresses` in its subjectAltName (`localhost`,
    /// `127.0.0.1`, `::1` by default). Its chain runs issuer first, root last.
    public func issueTLSServer(
        subject: String = "CN=localhost",
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1", "::1"],
        keyType: LocalSigningKey.GenerationParameters = .p256,
        issuer: Authority? = nil,
        validity: ClosedRange<Date> = CertificateIssuer.defaultValidity
    ) throws -> SigningIdentity {
        let names = (dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }).joined(separator: ",")
        let issued = try issueNewKey(
            keyType,
            subject: subject,
            issuer: issuer,
            validity: validity,
            profile: .tlsServer(subjectAltName: names)
        )
        return SigningIdentity(certificate: issued.certificate, chain: issued.chain, key: issued.key)
    }

    /// A new key of `keyType` with its certificate under `issuer` (default: the root), and the
    /// chain above it (issuer first, root last).
    private func issueNewKey(
        _ keyType: LocalSigningKey.GenerationParameters,
        subject: String,
        issuer: Authority?,
        validity: ClosedRange<Date>,
        profile: Profile
    ) throws -> (certificate: Certificate, key: LocalSigningKey, chain: [Certificate]) {
        let issuer = issuer ?? root
        let key = try LocalSigningKey(generating: keyType)
        let certificate = try certify(key, subject: subject, issuer: issuer, validity: validity, profile: profile)
        return (certificate, key, [issuer.certificate] + issuer.chain)
    }

    // MARK: OpenSSL

    private enum Profile {
        case authority, leaf
        case tlsServer(subjectAltName: String)
        case custom([(name: String, value: String)])

        /// The profile's extensions (NID, OpenSSL configuration value), key identifiers last.
        /// - Throws: `.invalidParameter` for an unknown custom extension name.
        func extensions() throws -> [(Int32, String)] {
            let identifiers = [(NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")]
            switch self {
            case .authority:
                return [
                    (NID_basic_constraints, "critical,CA:TRUE"),
                    (NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"),
                ] + identifiers
            case .leaf:
                return [
                    (NID_basic_constraints, "critical,CA:FALSE"),
                    (NID_key_usage, "critical,digitalSignature,nonRepudiation"),
                    (NID_ext_key_usage, "emailProtection,clientAuth"),
                ] + identifiers
            case .tlsServer(let subjectAltName):
                return [
                    (NID_basic_constraints, "critical,CA:FALSE"),
                    (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
                    (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, subjectAltName),
                ] + identifiers
            case .custom(let named):
                var list: [(Int32, String)] = []
                for (name, value) in named {
                    let nid = OBJ_txt2nid(name)
                    guard nid != NID_undef else {
                        throw CertificateProviderError.invalidParameter("unknown certificate extension '\(name)'")
                    }
                    list.append((nid, value))
                }
                return list + identifiers
            }
        }
    }

    private static func makeCertificate(
        subject: String,
        publicKey: LocalSigningKey,
        issuerCertificate: Certificate?,
        issuerKey: LocalSigningKey,
        validity: ClosedRange<Date>,
        profile: Profile
    ) throws -> Certificate {
        ERR_clear_error()
        guard let x509 = X509_new() else { throw failure("X509_new") }
        let handle = X509Handle(takingOwnershipOf: x509)
        guard X509_set_version(x509, 2) == 1 else { throw failure("X509_set_version") }
        try setSerialNumber(x509)
        guard ASN1Time.set(OpaquePointer(X509_getm_notBefore(x509)), to: validity.lowerBound),
            ASN1Time.set(OpaquePointer(X509_getm_notAfter(x509)), to: validity.upperBound)
        else {
            throw failure("ASN1_TIME_set")
        }
        let issuerX509 = issuerCertificate?.handle.pointer
        try setNames(x509, subject: subject, issuer: issuerX509)
        guard X509_set_pubkey(x509, publicKey.handle.pointer) == 1 else { throw failure("X509_set_pubkey") }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuerX509 ?? x509, x509, nil, nil, 0)
        for (nid, value) in try profile.extensions() {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw failure("extension \(nid)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(x509, ext, -1) == 1 else { throw failure("X509_add_ext") }
        }
        let digest = try DigestAlgorithm.preferred(for: issuerKey.publicKeyAlgorithm)
        guard X509_sign(x509, issuerKey.handle.pointer, try digest.evpMD()) > 0 else { throw failure("X509_sign") }
        // Re-read from DER, as every real certificate is: an X509 that OpenSSL built in memory keeps
        // no cached encoding of its to-be-signed part, so each later i2d (every CMS signature that
        // embeds it) would encode it again from scratch.
        return try Certificate(derEncoded: try handle.derBytes())
    }

    /// A random positive 63-bit serial.
    private static func setSerialNumber(_ x509: OpaquePointer) throws {
        var serialBytes = [UInt8](repeating: 0, count: 8)
        guard RAND_bytes(&serialBytes, 8) == 1 else { throw failure("RAND_bytes") }
        serialBytes[0] &= 0x7F
        serialBytes[0] |= 0x01
        guard let serialBN = BN_bin2bn(serialBytes, 8, nil) else { throw failure("BN_bin2bn") }
        defer { BN_free(serialBN) }
        guard let serial = BN_to_ASN1_INTEGER(serialBN, nil) else { throw failure("BN_to_ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(x509, serial) == 1 else { throw failure("X509_set_serialNumber") }
    }

    /// Sets the subject, and the issuer's subject as issuer (the subject itself when self-signed).
    /// - Throws: `.invalidParameter` for a subject part that is not `FIELD=value`.
    private static func setNames(_ x509: OpaquePointer, subject: String, issuer issuerX509: OpaquePointer?) throws {
        let name = try makeName(subject)
        defer { X509_NAME_free(name) }
        guard X509_set_subject_name(x509, name) == 1 else { throw failure("X509_set_subject_name") }
        guard X509_set_issuer_name(x509, issuerX509.map { X509_get_subject_name($0) } ?? name) == 1 else {
            throw failure("X509_set_issuer_name")
        }
    }

    /// A new `X509_NAME` (the caller frees it) from an RFC 2253 string, `CN=…,O=…`; values are
    /// UTF-8 (Cyrillic becomes UTF8String).
    /// - Throws: `.invalidParameter` for a part that is not `FIELD=value` or names an unknown field.
    static func makeName(_ subject: String) throws -> OpaquePointer {
        guard let name = X509_NAME_new() else { throw failure("X509_NAME_new") }
        // The subject is an RFC 2253 string: most significant attribute last, so it is added first
        // and `Certificate.subject` prints the string back as written.
        for part in subject.split(separator: ",").reversed() {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pieces.count == 2, !pieces[0].isEmpty else {
                X509_NAME_free(name)
                throw CertificateProviderError.invalidParameter("subject part '\(part)' is not FIELD=value")
            }
            guard X509_NAME_add_entry_by_txt(name, pieces[0], MBSTRING_UTF8, pieces[1], -1, -1, 0) == 1 else {
                X509_NAME_free(name)
                throw OpenSSLErrorQueue.error(
                    .invalidParameter,
                    "subject part '\(part)': '\(pieces[0])' is not a name field OpenSSL knows (CN, O, OU, C, L, ST, "
                        + "emailAddress, …)"
                )
            }
        }
        return name
    }

    private static func failure(_ step: String) -> CertificateProviderError {
        OpenSSLErrorQueue.error(.cryptoFailure, "CertificateIssuer could not build a certificate (\(step))")
    }
}
