internal import COpenSSL
internal import COpenSSLShims
public import Foundation

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
        try self.init(handle: X509Handle.parse(der: bytes), der: bytes)
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
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        return try MemoryBIO.withReadBIO(Array(pem.utf8)) { bio in
            var result: [Certificate] = []
            while true {
                guard let x509 = PEM_read_bio_X509(bio, nil, nil, nil) else {
                    let entries = OpenSSLErrorQueue.drainEntries()
                    let endOfInput =
                        entries.last.map { $0.library == ERR_LIB_PEM && $0.reason == PEM_R_NO_START_LINE } ?? true
                    if endOfInput && !result.isEmpty { return result }
                    if result.isEmpty && endOfInput {
                        throw CertificateProviderError.malformedInput(
                            "no PEM certificate found (expected -----BEGIN CERTIFICATE-----)"
                        )
                    }
                    throw CertificateProviderError(
                        .malformedInput,
                        "PEM certificate number \(result.count + 1) is corrupt or truncated",
                        openSSLErrors: entries.map(\.text)
                    )
                }
                result.append(try Certificate(handle: X509Handle(takingOwnershipOf: x509)))
            }
        }
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

    package init(handle: X509Handle) throws {
        try self.init(handle: handle, der: handle.derBytes())
    }

    private init(handle: X509Handle, der: [UInt8]) throws {
        let x509 = handle.pointer
        self.handle = handle
        self.derRepresentation = der
        self.subject = try Certificate.rfc2253(X509_get_subject_name(x509), field: "subject")
        self.issuer = try Certificate.rfc2253(X509_get_issuer_name(x509), field: "issuer")
        self.serialNumber = try Certificate.serialHex(x509)
        guard let before = Certificate.date(X509_get0_notBefore(x509)),
            let after = Certificate.date(X509_get0_notAfter(x509))
        else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's validity dates cannot be read")
        }
        self.notValidBefore = before
        self.notValidAfter = after
        self.sha256Fingerprint = DigestAlgorithm.sha256.hash(der)
        guard let publicKey = X509_get0_pubkey(x509) else {
            let oid = Certificate.publicKeyAlgorithmOID(x509)
            if let oid, GOSTEngine.isGOSTOID(oid), !GOSTEngine.isAvailable {
                OpenSSLErrorQueue.clear()
                throw GOSTEngine.unavailableError("the certificate's public key (\(oid))")
            }
            throw OpenSSLErrorQueue.error(
                .unsupportedAlgorithm,
                "the certificate's public key uses an algorithm OpenSSL cannot read (\(oid ?? "unknown OID"))"
            )
        }
        self.publicKeyAlgorithm = EVPKeyHandle.algorithm(of: publicKey)
        self.publicKeySize = Int(EVP_PKEY_get_bits(publicKey))
        let flags = X509_get_extension_flags(x509)
        self.keyUsage = (flags & UInt32(EXFLAG_KUSAGE)) != 0 ? KeyUsage(rawValue: X509_get_key_usage(x509)) : nil
        self.extendedKeyUsage = Certificate.extendedKeyUsage(x509)
        self.isCertificateAuthority = (flags & UInt32(EXFLAG_CA)) != 0
        ERR_clear_error()
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
        // Hand-built rather than String(format:) per byte: the signing coordinator records this for
        // every signature.
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(sha256Fingerprint.count * 3)
        for (index, byte) in sha256Fingerprint.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ":")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether subject and issuer are the same name.
    public var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(handle.pointer), X509_get_issuer_name(handle.pointer)) == 0
    }

    /// Whether `date` is within the validity period.
    public func isValid(at date: Date = Date()) -> Bool { notValidBefore <= date && date <= notValidAfter }

    /// The value of the first subject attribute with the given short name (`CN`, `O`, …), or nil.
    public func subjectAttribute(_ shortName: String) -> String? {
        let nid = OBJ_txt2nid(shortName)
        guard nid != NID_undef, let name = X509_get_subject_name(handle.pointer) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

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

    // MARK: Field extraction

    /// The name as RFC 2253 text; an empty name (allowed when the subject is in subjectAltName) is "".
    /// - Throws: `.malformedInput` when OpenSSL cannot read or print the name.
    private static func rfc2253(_ name: OpaquePointer?, field: String) throws -> String {
        guard let name else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's \(field) name cannot be read")
        }
        var printed: Int32 = 0
        let bytes = try MemoryBIO.collecting { bio in
            printed = X509_NAME_print_ex(bio, name, 0, COpenSSLShims_XN_FLAG_RFC2253_UTF8())
        }
        guard printed >= 0 else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's \(field) name cannot be printed")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The dotted OID of the SubjectPublicKeyInfo's algorithm, read without decoding the key.
    private static func publicKeyAlgorithmOID(_ x509: OpaquePointer) -> String? {
        var object: OpaquePointer?
        guard let publicKey = X509_get_X509_PUBKEY(x509),
            X509_PUBKEY_get0_param(&object, nil, nil, nil, publicKey) == 1, let object
        else { return nil }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// - Throws: `.malformedInput` when the serial number is missing or cannot be converted.
    private static func serialHex(_ x509: OpaquePointer) throws -> String {
        guard let serial = X509_get0_serialNumber(x509), let bignum = ASN1_INTEGER_to_BN(serial, nil) else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's serial number cannot be read")
        }
        defer { BN_free(bignum) }
        guard let hex = BN_bn2hex(bignum) else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the certificate's serial number cannot be converted")
        }
        defer { COpenSSLShims_OPENSSL_free(hex) }
        // BN_bn2hex writes whole bytes ("0A1B…"); the documented form has no leading zeros.
        let digits = String(cString: hex)
        let trimmed = digits.drop(while: { $0 == "0" })
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }

    private static func extendedKeyUsage(_ x509: OpaquePointer) -> [ExtendedKeyUsage] {
        guard let raw = X509_get_ext_d2i(x509, NID_ext_key_usage, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { COpenSSLShims_sk_ASN1_OBJECT_pop_free(stack) }
        var result: [ExtendedKeyUsage] = []
        for index in 0..<COpenSSLShims_sk_ASN1_OBJECT_num(stack) {
            var buffer = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), COpenSSLShims_sk_ASN1_OBJECT_value(stack, index), 1)
            guard length > 0 else { continue }
            result.append(
                ExtendedKeyUsage(
                    oid: String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                )
            )
        }
        return result
    }
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
    public var description: String {
        let nid = OBJ_txt2nid(oid)
        guard nid != NID_undef, let name = OBJ_nid2sn(nid) else { return oid }
        return String(cString: name)
    }
}
