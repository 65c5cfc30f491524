public import Foundation
package import OpenSSLWrappers

/// An X.509 certificate: its DER bytes and the fields callers show and check, parsed once by OpenSSL.
///
/// Values compare and hash by their DER encoding. Subjects and issuers are RFC 2253 strings with
/// UTF-8 kept as is, so Cyrillic names read as written (`CN=Иванов Иван,O=ООО Ромашка`).
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The OpenSSL certificate, shared between this package's modules.
    package let handle: X509Handle

    /// The DER encoding.
    public let derRepresentation: [UInt8]
    /// The subject as an RFC 2253 string (most significant RDN last, UTF-8 intact).
    public let subject: String
    /// The issuer as an RFC 2253 string.
    public let issuer: String
    /// The serial number in upper-case hexadecimal without leading zeros.
    public let serialNumber: String
    /// Start of validity.
    public let notValidBefore: Date
    /// End of validity.
    public let notValidAfter: Date
    /// SHA-256 of the DER encoding.
    public let sha256Fingerprint: [UInt8]
    /// The subject public key's algorithm (RSA, EC with curve, …).
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The public key size in bits.
    public let publicKeySize: Int
    /// The DER SubjectPublicKeyInfo (encoded on first access and kept: OpenSSL 3.0's key encoder
    /// costs more than the rest of reading a certificate, and verifying reads every certificate of
    /// a chain).
    public var publicKeyDERRepresentation: [UInt8] { handle.publicKeyDER }
    /// The key usage extension, or nil when the certificate has none.
    public let keyUsage: KeyUsage?
    /// The extended key usage purposes, empty when the certificate has no such extension.
    public let extendedKeyUsage: [ExtendedKeyUsage]
    /// Whether the basic constraints mark this certificate as a CA.
    public let isCertificateAuthority: Bool

    /// Parses one DER-encoded certificate.
    /// - Throws: `.malformedInput` for empty, truncated, corrupt input or trailing bytes.
    public init(derEncoded bytes: [UInt8]) throws {
        if let parsed = CertificateParseCache.shared.certificate(der: bytes) {
            self = parsed
            return
        }
        let handle = try CertificateProviderError.convertingOpenSSLErrors { try X509Handle.parse(der: bytes) }
        try self.init(handle: handle, der: bytes)
        CertificateParseCache.shared.keep(self, der: bytes)
    }

    /// Parses one PEM certificate (`-----BEGIN CERTIFICATE-----`).
    /// - Throws: `.malformedInput` when the text holds no certificate, a broken one, or more than one.
    public init(pemEncoded pem: String) throws {
        let all = try Certificate.certificates(pemEncoded: pem)
        guard all.count == 1 else {
            throw CertificateProviderError.malformedInput(
                "expected one PEM certificate, found \(all.count); use Certificate.certificates(pemEncoded:) for "
                    + "bundles"
            )
        }
        self = all[0]
    }

    /// Parses every certificate of a PEM bundle, in order.
    /// - Throws: `.malformedInput` when there is no certificate or one block is broken.
    public static func certificates(pemEncoded pem: String) throws -> [Certificate] {
        let parsed = try CertificateProviderError.convertingOpenSSLErrors { try X509Handle.parse(pem: Array(pem.utf8)) }
        if parsed.failure == nil && !parsed.certificates.isEmpty {
            return try parsed.certificates.map { try Certificate(handle: $0) }
        }
        if parsed.certificates.isEmpty && parsed.failure == nil {
            throw CertificateProviderError.malformedInput(
                "no PEM certificate found (expected -----BEGIN CERTIFICATE-----)"
            )
        }
        throw CertificateProviderError(
            .malformedInput,
            "PEM certificate number \(parsed.certificates.count + 1) is corrupt or truncated",
            openSSLErrors: parsed.failure ?? []
        )
    }

    /// Parses DER or PEM (one certificate or a bundle), telling them apart by content.
    /// - Throws: `.malformedInput` when the bytes are neither.
    public static func certificates(derOrPEM bytes: [UInt8]) throws -> [Certificate] {
        if bytes.first == 0x30 { return [try Certificate(derEncoded: bytes)] }
        guard let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") else {
            throw CertificateProviderError.malformedInput(
                bytes.isEmpty ? "the certificate file is empty" : "the data is neither a DER nor a PEM certificate"
            )
        }
        return try certificates(pemEncoded: text)
    }

    /// A certificate over an OpenSSL one, its fields read once.
    /// - Throws: `.malformedInput` or `.unsupportedAlgorithm` when a field cannot be read.
    package init(handle: X509Handle) throws {
        let der = try CertificateProviderError.convertingOpenSSLErrors { try handle.derBytes() }
        try self.init(handle: handle, der: der)
    }

    private init(handle: X509Handle, der: [UInt8]) throws {
        self.handle = handle
        self.derRepresentation = der
        (subject, issuer, serialNumber) = try CertificateProviderError.convertingOpenSSLErrors {
            (try handle.subjectName(), try handle.issuerName(), try handle.serialNumberHex())
        }
        guard let before = handle.notBefore, let after = handle.notAfter else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's validity dates cannot be read")
        }
        self.notValidBefore = before
        self.notValidAfter = after
        self.sha256Fingerprint = DigestAlgorithm.sha256.hash(der)
        guard let publicKey = handle.publicKey else {
            let oid = handle.publicKeyAlgorithmOID
            if let oid, GOSTEngine.isGOSTOID(oid), !GOSTEngine.isAvailable {
                OpenSSLErrorQueue.clear()
                throw GOSTEngine.unavailableError("the certificate's public key (\(oid))")
            }
            throw OpenSSLErrorQueue.error(
                .unsupportedAlgorithm,
                "the certificate's public key uses an algorithm OpenSSL cannot read (\(oid ?? "unknown OID"))"
            )
        }
        self.publicKeyAlgorithm = publicKey.algorithm
        self.publicKeySize = publicKey.bits
        self.keyUsage = handle.keyUsageBits.map(KeyUsage.init(rawValue:))
        self.extendedKeyUsage = handle.extendedKeyUsageOIDs.map(ExtendedKeyUsage.init(oid:))
        self.isCertificateAuthority = handle.isCertificateAuthority
        OpenSSLErrorQueue.clear()
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`, 64-column base64).
    public var pemRepresentation: String {
        let base64 = Data(derRepresentation).base64EncodedString(options: [
            .lineLength64Characters, .endLineWithLineFeed,
        ])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// The SHA-256 fingerprint as upper-case hex pairs joined by colons.
    public var sha256FingerprintHex: String {
        // From a digit table rather than String(format:) per byte: the signing coordinator records
        // this for every signature.
        HexText.uppercase(sha256Fingerprint, separator: UInt8(ascii: ":"))
    }

    /// Whether subject and issuer are the same name.
    public var isSelfIssued: Bool { handle.isSelfIssued }

    /// Whether `date` is within the validity period.
    public func isValid(at date: Date = Date()) -> Bool { notValidBefore <= date && date <= notValidAfter }

    /// The value of the first subject attribute with the given short name (`CN`, `O`, …), or nil.
    public func subjectAttribute(_ shortName: String) -> String? { handle.subjectAttribute(shortName) }

    /// Subject, serial and end of validity, for logs.
    public var description: String {
        "Certificate(subject: \(subject), serial: \(serialNumber), notValidAfter: \(notValidAfter))"
    }

    /// Certificates are equal when their DER encodings are.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }
    /// Hashes the DER encoding.
    public func hash(into hasher: inout Swift.Hasher) { hasher.combine(derRepresentation) }
}

/// The X.509 key usage bits (RFC 5280 4.2.1.3), using OpenSSL's `KU_*` bit values.
public struct KeyUsage: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The key usage bits, with OpenSSL's `KU_*` values.
    public let rawValue: UInt32
    /// Creates a set from OpenSSL's `KU_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `digitalSignature`: signatures other than on certificates and CRLs.
    public static let digitalSignature = KeyUsage(rawValue: 0x0080)
    /// `nonRepudiation` (`contentCommitment`): signatures that bind the signer to content.
    public static let nonRepudiation = KeyUsage(rawValue: 0x0040)
    /// `keyEncipherment`: transporting keys.
    public static let keyEncipherment = KeyUsage(rawValue: 0x0020)
    /// `dataEncipherment`: enciphering data directly.
    public static let dataEncipherment = KeyUsage(rawValue: 0x0010)
    /// `keyAgreement`: key agreement.
    public static let keyAgreement = KeyUsage(rawValue: 0x0008)
    /// `keyCertSign`: signing certificates.
    public static let keyCertSign = KeyUsage(rawValue: 0x0004)
    /// `cRLSign`: signing CRLs.
    public static let cRLSign = KeyUsage(rawValue: 0x0002)
    /// `encipherOnly`: with key agreement, only enciphering.
    public static let encipherOnly = KeyUsage(rawValue: 0x0001)
    /// `decipherOnly`: with key agreement, only deciphering.
    public static let decipherOnly = KeyUsage(rawValue: 0x8000)

    private static let names: [(KeyUsage, String)] = [
        (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"),
        (.keyEncipherment, "keyEncipherment"), (.dataEncipherment, "dataEncipherment"),
        (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"), (.cRLSign, "cRLSign"),
        (.encipherOnly, "encipherOnly"), (.decipherOnly, "decipherOnly"),
    ]

    /// The names of the bits that are set, in RFC 5280 order.
    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
    /// The names of the set bits, comma-separated.
    public var description: String { names.joined(separator: ", ") }
}

/// An extended key usage purpose, by OID: an open set.
public struct ExtendedKeyUsage: Hashable, Sendable, CustomStringConvertible {
    /// The dotted OID.
    public let oid: String
    /// Creates a purpose from its OID.
    public init(oid: String) { self.oid = oid }

    /// TLS server authentication (id-kp-serverAuth).
    public static let serverAuth = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.1")
    /// TLS client authentication (id-kp-clientAuth).
    public static let clientAuth = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.2")
    /// Code signing (id-kp-codeSigning).
    public static let codeSigning = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.3")
    /// E-mail protection (id-kp-emailProtection).
    public static let emailProtection = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.4")
    /// Time stamping (id-kp-timeStamping, RFC 3161 TSAs).
    public static let timeStamping = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.8")
    /// OCSP response signing (id-kp-OCSPSigning).
    public static let ocspSigning = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.9")

    /// OpenSSL's short name for the purpose (`clientAuth`), or the OID.
    public var description: String { ASN1Object.shortName(ofDotted: oid) ?? oid }
}
