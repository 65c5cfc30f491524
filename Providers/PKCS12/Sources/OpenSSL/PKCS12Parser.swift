internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// Walks a PKCS#12 with OpenSSL 3 and decides, from what OpenSSL put on its error queue, whether a
/// failure means a wrong password, a damaged file or an algorithm OpenSSL cannot run.
///
/// What OpenSSL 3.0 reports (found by experiment, see the tests):
/// - `PKCS12_verify_mac` with a wrong password returns 0 and leaves the queue empty; an unknown MAC
///   digest leaves `PKCS12_R_MAC_GENERATION_ERROR` plus an EVP "unsupported"/"unknown digest" entry;
/// - decrypting with a wrong password leaves `PROV_R_BAD_DECRYPT` + `PKCS12_R_PKCS12_CIPHERFINAL_ERROR`
///   (or, when the padding happens to look right, an ASN.1 decoding error of the garbage);
/// - RC2 without the legacy provider leaves `ERR_R_UNSUPPORTED` ("unsupported", Algorithm RC2-40-CBC);
///   an unknown PBE OID leaves `EVP_R_UNKNOWN_PBE_ALGORITHM`.
/// A MAC that fails while some encrypted part decrypts with the same password means the password is
/// right and the bytes were changed: that is a damaged file, not a wrong password.
enum PKCS12Parser {
    /// One way of handing the password to OpenSSL.
    enum PasswordForm {
        /// NULL: no password at all (zero-length BMPString).
        case absent
        /// The given bytes (UTF-8); "" is the empty password (a BMPString holding only the terminator).
        case given(Secret)

        func with<R>(_ body: (UnsafePointer<CChar>?, Int32) throws -> R) rethrows -> R {
            switch self {
            case .absent: return try body(nil, 0)
            case .given(let secret): return try secret.withCString { try body($0, Int32(secret.count)) }
            }
        }
    }

    /// Why an encrypted part did not open.
    enum PartFailure {
        case wrongKey
        case unsupported(String)
        case malformed([String])
    }

    /// What one walk with one password form produced.
    struct Contents {
        var keys: [(key: EVPKeyHandle, friendlyName: String?, localKeyID: [UInt8]?)] = []
        var certificates: [(certificate: Certificate, friendlyName: String?, localKeyID: [UInt8]?)] = []
        var keyEncryption: [PKCS12File.Algorithm] = []
        var contentEncryption: [PKCS12File.Algorithm] = []
        var plaintextKeys = 0
        var decryptedParts = 0
        var failures: [PartFailure] = []
        var openSSLErrors: [String] = []
        /// Key-derivation iterations spent so far by this open, across password forms.
        var iterationsSpent = 0

        var wrongKeyCount: Int {
            failures.filter { if case .wrongKey = $0 { return true } else { return false } }.count
        }
        var unsupported: [String] {
            failures.compactMap { if case .unsupported(let name) = $0 { return name } else { return nil } }
        }
        var malformed: Bool { failures.contains { if case .malformed = $0 { return true } else { return false } } }
    }

    // MARK: Entry point

    static func parse(_ bytes: [UInt8], password: Secret?) throws -> PKCS12File {
        let legacyAvailable = OpenSSLProviders.loadLegacy()
        GOSTEngine.load()
        let p12 = try decode(bytes)
        defer { PKCS12_free(p12) }

        let candidates = passwordCandidates(password)
        let macPresent = PKCS12_mac_present(p12) == 1
        let mac = macPresent ? macDescription(p12) : nil
        var iterationsSpent = 0
        try checkIterations(mac?.iterations, what: "integrity check (MAC)")
        let verified =
            macPresent ? try verifyMAC(p12, mac: mac, candidates: candidates, iterationsSpent: &iterationsSpent) : nil

        // Decode with the verified password; else, when a MAC refused every form, with the form as
        // given (only to tell a corrupt file from a wrong password: each further form would cost
        // every part's derivation again); else with each candidate, keeping the best result.
        var best: Contents?
        let forms = verified.map { [$0] } ?? (macPresent ? Array(candidates.prefix(1)) : candidates)
        for form in forms {
            let contents = try walk(p12, password: form, iterationsSpent: iterationsSpent)
            iterationsSpent = contents.iterationsSpent
            if contents.decryptedParts > best?.decryptedParts ?? -1 { best = contents }
            if contents.failures.isEmpty { break }
        }
        // `candidates` is never empty, so `best` is set.
        guard let contents = best else { throw CertificateProviderError(.cryptoFailure, "no password form was tried") }
        let verdict = Verdict(
            contents: contents,
            passwordGiven: password != nil,
            legacyAvailable: legacyAvailable,
            macPresent: macPresent,
            macVerified: verified != nil
        )
        try verdict.check()
        return try makeFile(contents, mac: mac, macVerified: verified != nil)
    }

    /// The PKCS#12 structure of `bytes` (the caller frees it).
    /// - Throws: `.malformedInput` for empty or oversized data or what is not a PKCS#12.
    private static func decode(_ bytes: [UInt8]) throws -> OpaquePointer {
        guard !bytes.isEmpty else { throw CertificateProviderError.malformedInput("the PKCS#12 data is empty") }
        guard bytes.count <= PKCS12File.maximumSize else {
            throw CertificateProviderError.malformedInput(
                "the data is \(bytes.count / 1_048_576) MiB; a PKCS#12 identity is a few kilobytes (at most "
                    + "\(PKCS12File.maximumSize / 1_048_576) MiB accepted): this is not a PKCS#12 file"
            )
        }
        OpenSSLErrorQueue.clear()
        guard
            let p12 = bytes.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_PKCS12(nil, &cursor, buffer.count)
            })
        else {
            throw notPKCS12(bytes, openSSLErrors: OpenSSLErrorQueue.drain())
        }
        return p12
    }

    // MARK: Walking the safes

    static func walk(_ p12: OpaquePointer, password: PasswordForm, iterationsSpent: Int = 0) throws -> Contents {
        OpenSSLErrorQueue.clear()
        guard let safes = PKCS12_unpack_authsafes(p12) else {
            throw OpenSSLErrorQueue.error(
                .malformedInput,
                "the PKCS#12 contents cannot be decoded: the file is corrupt or truncated"
            )
        }
        defer { COpenSSLShims_sk_PKCS7_pop_free(safes) }
        var contents = Contents()
        contents.iterationsSpent = iterationsSpent
        for index in 0..<COpenSSLShims_sk_PKCS7_num(safes) {
            guard let p7 = COpenSSLShims_sk_PKCS7_value(safes, index) else { continue }
            let type = OBJ_obj2nid(p7.pointee.type)
            OpenSSLErrorQueue.clear()
            switch type {
            case NID_pkcs7_data:
                guard let bags = PKCS12_unpack_p7data(p7) else {
                    throw OpenSSLErrorQueue.error(
                        .malformedInput,
                        "a PKCS#12 safe cannot be decoded: the file is corrupt"
                    )
                }
                defer { COpenSSLShims_sk_PKCS12_SAFEBAG_pop_free(bags) }
                try walkBags(bags, password: password, into: &contents, depth: 0)
            case NID_pkcs7_encrypted:
                let algorithm = describe(p7.pointee.d.encrypted?.pointee.enc_data?.pointee.algorithm)
                if let algorithm { contents.contentEncryption.append(algorithm) }
                try checkIterations(algorithm?.iterations, what: "certificate encryption")
                try spend(algorithm?.iterations, on: "certificate encryption", total: &contents.iterationsSpent)
                let bags = password.with { PKCS12_unpack_p7encdata(p7, $0, $1) }
                guard let bags else {
                    record(failure: classify(OpenSSLErrorQueue.drainEntries(), algorithm: algorithm), into: &contents)
                    continue
                }
                defer { COpenSSLShims_sk_PKCS12_SAFEBAG_pop_free(bags) }
                contents.decryptedParts += 1
                try walkBags(bags, password: password, into: &contents, depth: 0)
            case NID_pkcs7_enveloped:
                contents.failures.append(.unsupported("public-key privacy mode (pkcs7-envelopedData)"))
            default:
                throw CertificateProviderError.malformedInput(
                    "the PKCS#12 file holds a safe of unknown type \(objectName(nid: type))"
                )
            }
        }
        OpenSSLErrorQueue.clear()
        return contents
    }

    private static func record(failure: (PartFailure, [String]), into contents: inout Contents) {
        contents.failures.append(failure.0)
        contents.openSSLErrors.append(contentsOf: failure.1)
    }

    private static func walkBags(
        _ bags: OpaquePointer,
        password: PasswordForm,
        into contents: inout Contents,
        depth: Int
    ) throws {
        guard depth < 8 else {
            throw CertificateProviderError.malformedInput("the PKCS#12 safe contents are nested too deeply")
        }
        for index in 0..<COpenSSLShims_sk_PKCS12_SAFEBAG_num(bags) {
            guard let bag = COpenSSLShims_sk_PKCS12_SAFEBAG_value(bags, index) else { continue }
            OpenSSLErrorQueue.clear()
            switch PKCS12_SAFEBAG_get_nid(bag) {
            case NID_keyBag:
                guard let info = PKCS12_SAFEBAG_get0_p8inf(bag) else {
                    throw OpenSSLErrorQueue.error(.malformedInput, "a key bag of the PKCS#12 file cannot be decoded")
                }
                contents.keys.append((try key(from: info), friendlyName(bag), localKeyID(bag)))
                contents.plaintextKeys += 1
            case NID_pkcs8ShroudedKeyBag:
                var algorithmPointer: UnsafePointer<X509_ALGOR>?
                if let sig = PKCS12_SAFEBAG_get0_pkcs8(bag) { X509_SIG_get0(sig, &algorithmPointer, nil) }
                let algorithm = describe(algorithmPointer)
                if algorithm?.oid == cryptoProKeyBagOID { throw cryptoProExport() }
                if let algorithm { contents.keyEncryption.append(algorithm) }
                try checkIterations(algorithm?.iterations, what: "key encryption")
                try spend(algorithm?.iterations, on: "key encryption", total: &contents.iterationsSpent)
                guard let info = password.with({ PKCS12_decrypt_skey_ex(bag, $0, $1, nil, nil) }) else {
                    record(failure: classify(OpenSSLErrorQueue.drainEntries(), algorithm: algorithm), into: &contents)
                    continue
                }
                defer { PKCS8_PRIV_KEY_INFO_free(info) }
                contents.decryptedParts += 1
                contents.keys.append((try key(from: info), friendlyName(bag), localKeyID(bag)))
            case NID_certBag:
                guard PKCS12_SAFEBAG_get_bag_nid(bag) == NID_x509Certificate else { continue }
                guard let x509 = PKCS12_SAFEBAG_get1_cert(bag) else {
                    throw OpenSSLErrorQueue.error(
                        .malformedInput,
                        "a certificate in the PKCS#12 file cannot be decoded"
                    )
                }
                let handle = X509Handle(takingOwnershipOf: x509)
                try checkPublicKeyDecodes(x509)
                contents.certificates.append((try Certificate(handle: handle), friendlyName(bag), localKeyID(bag)))
            case NID_safeContentsBag:
                guard let nested = PKCS12_SAFEBAG_get0_safes(bag) else { continue }
                try walkBags(nested, password: password, into: &contents, depth: depth + 1)
            default:
                continue  // secret and CRL bags carry nothing a signer needs
            }
        }
    }

    /// Refuses, as `.malformedInput`, a certificate whose public key is of an algorithm OpenSSL
    /// knows but whose bytes do not decode (a changed byte), which ``Certificate`` would otherwise
    /// report as an unsupported algorithm.
    private static func checkPublicKeyDecodes(_ x509: OpaquePointer) throws {
        OpenSSLErrorQueue.clear()
        guard X509_get0_pubkey(x509) == nil else { return }
        let entries = OpenSSLErrorQueue.drainEntries()
        var object: OpaquePointer?
        if let publicKey = X509_get_X509_PUBKEY(x509) { _ = X509_PUBKEY_get0_param(&object, nil, nil, nil, publicKey) }
        let decodeFailure = entries.contains {
            $0.library == ERR_LIB_ASN1 || $0.library == ERR_LIB_EC || $0.library == ERR_LIB_RSA
                || ($0.library == ERR_LIB_EVP && $0.reason == EVP_R_DECODE_ERROR)
        }
        guard let object, OBJ_obj2nid(object) != NID_undef, !GOSTEngine.isGOSTOID(oid(object)), decodeFailure else {
            return  // Certificate reports it (unsupported algorithm, or GOST without the engine)
        }
        throw CertificateProviderError(
            .malformedInput,
            "the \(objectName(object: object)) public key of a certificate in the PKCS#12 file is corrupt",
            openSSLErrors: entries.map(\.text)
        )
    }

    private static func key(from info: OpaquePointer) throws -> EVPKeyHandle {
        OpenSSLErrorQueue.clear()
        guard let key = EVP_PKCS82PKEY(info) else {
            var object: OpaquePointer?
            _ = PKCS8_pkey_get0(&object, nil, nil, nil, info)
            let entries = OpenSSLErrorQueue.drainEntries()
            let name = object.map { objectName(object: $0) } ?? "an unknown algorithm"
            if let object, GOSTEngine.isGOSTOID(oid(object)), !GOSTEngine.isAvailable {
                throw GOSTEngine.unavailableError("the PKCS#12 file's \(name) private key")
            }
            // OpenSSL 3's decoder adds a generic "unsupported" to every key it cannot decode; an
            // algorithm it knows whose bytes fail to decode is a corrupt key, not an unsupported one.
            let decodeFailure = entries.contains {
                $0.library == ERR_LIB_ASN1 || $0.library == ERR_LIB_EC || $0.library == ERR_LIB_RSA
                    || ($0.library == ERR_LIB_EVP && $0.reason == EVP_R_DECODE_ERROR)
            }
            let unknown = object.map({ OBJ_obj2nid($0) == NID_undef }) ?? true
            if unknown || (isUnsupported(entries) && !decodeFailure) {
                throw CertificateProviderError(
                    .unsupportedAlgorithm,
                    "the PKCS#12 file holds a \(name) private key, which this OpenSSL cannot load",
                    openSSLErrors: entries.map(\.text)
                )
            }
            throw CertificateProviderError(
                .malformedInput,
                "the \(name) private key in the PKCS#12 file is corrupt",
                openSSLErrors: entries.map(\.text)
            )
        }
        return EVPKeyHandle(takingOwnershipOf: key)
    }

    /// The algorithm CryptoPro CSP writes on the key bags of its own PFX exports.
    static let cryptoProKeyBagOID = "1.2.840.113549.1.12.1.80"

    /// The error for a CryptoPro CSP PFX export, whose key protection no open tool reads.
    private static func cryptoProExport() -> CertificateProviderError {
        CertificateProviderError(
            .unsupportedAlgorithm,
            "this PFX was exported by CryptoPro CSP in its own format: the private key is protected with CryptoPro's "
                + "undocumented algorithm (OID \(cryptoProKeyBagOID)), which neither OpenSSL nor any other open tool "
                + "can read. Convert it into a standard GOST PKCS#12 (TC26 PBES2, as `openssl pkcs12 -engine gost "
                + "-export` writes): export the key again from CryptoPro CSP choosing the TC26/PKCS#12-compatible "
                + "format where your CSP version offers it, or convert the key container with a converter that "
                + "writes PKCS#12 for OpenSSL's gost engine; then open or import the new file"
        )
    }

    /// Whether an encryption or MAC algorithm involves GOST (its OID, cipher or PRF in 1.2.643).
    static func usesGOST(_ algorithm: PKCS12File.Algorithm) -> Bool {
        if GOSTEngine.isGOSTOID(algorithm.oid) { return true }
        return [algorithm.cipher, algorithm.pseudoRandomFunction, algorithm.name].compactMap { $0 }.contains { name in
            guard let object = OBJ_txt2obj(name, 0) else {
                ERR_clear_error()
                return false
            }
            defer { ASN1_OBJECT_free(object) }
            return GOSTEngine.isGOSTOID(oid(object))
        }
    }

    /// Refuses iteration counts no tool writes before a key derivation spends minutes on them.
    static func checkIterations(_ iterations: Int?, what: String) throws {
        guard let iterations, iterations > PKCS12File.maximumIterations else { return }
        throw CertificateProviderError.malformedInput(
            "the PKCS#12 \(what) asks for \(iterations) key-derivation iterations (at most "
                + "\(PKCS12File.maximumIterations) accepted): the file is corrupt or hostile"
        )
    }

    /// Adds one key derivation to the open's total and refuses the file once the total passes
    /// ``PKCS12File/maximumIterations``: each count may be within the limit while many parts, keys
    /// or password forms together would still keep the CPU busy for tens of seconds.
    static func spend(_ iterations: Int?, on what: String, total: inout Int) throws {
        total += max(iterations ?? 1, 1)
        guard total > PKCS12File.maximumIterations else { return }
        throw CertificateProviderError.malformedInput(
            "the PKCS#12 file asks for more than \(PKCS12File.maximumIterations) key-derivation iterations in total "
                + "(reached at its \(what)): the file is corrupt or hostile"
        )
    }

    // MARK: Building the result

    private static func makeFile(
        _ contents: Contents,
        mac: (algorithm: PKCS12File.Algorithm, iterations: Int?)?,
        macVerified: Bool
    ) throws -> PKCS12File {
        let certificates = contents.certificates.map(\.certificate)
        var keys: [PKCS12File.KeyEntry] = []
        for entry in contents.keys {
            let key = LocalSigningKey(handle: entry.key)
            let matching = contents.certificates.filter { key.matches($0.certificate) }
            let byID = entry.localKeyID.flatMap { id in matching.first { $0.localKeyID == id } }
            let certificate = byID ?? matching.first
            keys.append(
                PKCS12File.KeyEntry(
                    key: key,
                    friendlyName: entry.friendlyName ?? certificate?.friendlyName,
                    localKeyID: entry.localKeyID,
                    certificate: certificate?.certificate
                )
            )
        }
        let protection = PKCS12File.Protection(
            macAlgorithm: mac?.algorithm,
            macIterations: mac?.iterations,
            isMACVerified: macVerified,
            keyEncryption: contents.keyEncryption,
            contentEncryption: contents.contentEncryption,
            plaintextKeyCount: contents.plaintextKeys
        )
        return PKCS12File(keys: keys, certificates: certificates, protection: protection)
    }

    // MARK: Passwords

    static func passwordCandidates(_ password: Secret?) -> [PasswordForm] {
        guard let password else { return [.absent, .given(Secret(bytes: []))] }
        if password.isEmpty { return [.given(password), .absent] }
        var forms: [PasswordForm] = [.given(password)]
        let isASCII = password.withUnsafeBytes { $0.allSatisfy { $0 < 0x80 } }
        if !isASCII, let broken = openSSL10Form(password) { forms.append(.given(broken)) }
        return forms
    }

    /// The password as OpenSSL 1.0 wrote non-ASCII passwords: each byte taken as one BMP character,
    /// re-expressed as UTF-8 so that OpenSSL 3 derives the same key (what `openssl pkcs12` retries).
    private static func openSSL10Form(_ password: Secret) -> Secret? {
        password.withCString { cString -> Secret? in
            var length: Int32 = 0
            guard let unicode = OPENSSL_asc2uni(cString, Int32(password.count), nil, &length) else {
                ERR_clear_error()
                return nil
            }
            defer {
                OPENSSL_cleanse(unicode, Int(length))
                COpenSSLShims_OPENSSL_free(unicode)
            }
            guard let utf8 = OPENSSL_uni2utf8(unicode, length) else {
                ERR_clear_error()
                return nil
            }
            let count = strlen(utf8)
            defer {
                OPENSSL_cleanse(utf8, count)
                COpenSSLShims_OPENSSL_free(utf8)
            }
            return Secret(bytes: UnsafeRawBufferPointer(start: utf8, count: count))
        }
    }

    // MARK: Error classification

    private static let unsupportedEVPReasons: Set<Int32> = [
        EVP_R_UNKNOWN_CIPHER, EVP_R_UNKNOWN_DIGEST, EVP_R_UNKNOWN_PBE_ALGORITHM, EVP_R_UNSUPPORTED_ALGORITHM,
        EVP_R_UNSUPPORTED_CIPHER, EVP_R_UNSUPPORTED_KEYLENGTH, EVP_R_UNSUPPORTED_KEY_DERIVATION_FUNCTION,
        EVP_R_UNSUPPORTED_PRF, EVP_R_UNSUPPORTED_PRIVATE_KEY_ALGORITHM, EVP_R_UNSUPPORTED_SALT_TYPE,
        EVP_R_UNSUPPORTED_KEY_SIZE,
    ]
    /// `ERR_R_UNSUPPORTED` and `ERR_R_FETCH_FAILED` (268 and 269 with `ERR_RFLAG_COMMON` = 2 << 18);
    /// the macros are not importable.
    private static let commonUnsupportedReasons: Set<Int32> = [268 | (2 << 18), 269 | (2 << 18)]

    static func isUnsupported(_ entries: [OpenSSLErrorQueue.Entry]) -> Bool {
        entries.contains { entry in
            commonUnsupportedReasons.contains(entry.reason)
                || (entry.library == ERR_LIB_EVP && unsupportedEVPReasons.contains(entry.reason))
                || (entry.library == ERR_LIB_PKCS12 && entry.reason == PKCS12_R_UNKNOWN_DIGEST_ALGORITHM)
        }
    }

    /// `PROV_R_BAD_DECRYPT` from `openssl/proverr.h`, which the C module does not include.
    private static let providerBadDecrypt: Int32 = 100

    private static func classify(
        _ entries: [OpenSSLErrorQueue.Entry],
        algorithm: PKCS12File.Algorithm?
    ) -> (PartFailure, [String]) {
        let texts = entries.map(\.text)
        if isUnsupported(entries) { return (.unsupported(algorithm?.description ?? "an unknown algorithm"), texts) }
        // A bad padding after decryption, or garbage that does not decode, is what a wrong key gives.
        let badDecrypt = entries.contains {
            ($0.library == ERR_LIB_PROV && $0.reason == providerBadDecrypt)
                || ($0.library == ERR_LIB_PKCS12
                    && ($0.reason == PKCS12_R_PKCS12_CIPHERFINAL_ERROR || $0.reason == PKCS12_R_DECODE_ERROR))
                || $0.library == ERR_LIB_ASN1
        }
        return (badDecrypt ? .wrongKey : .malformed(texts), texts)
    }

    /// A `.malformedInput` saying what the bytes look like instead.
    static func notPKCS12(_ bytes: [UInt8], openSSLErrors: [String]) -> CertificateProviderError {
        // `openssl pkcs12 -nodes` output starts with "Bag Attributes" lines before the first block.
        let prefix = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if prefix.contains("-----BEGIN ") {
            return CertificateProviderError(
                .malformedInput,
                "this is a PEM file, not a PKCS#12 file; combine the key and certificate with `openssl pkcs12 -export`",
                openSSLErrors: openSSLErrors
            )
        }
        if bytes.count < 1_048_576, (try? Certificate(derEncoded: bytes)) != nil {
            ERR_clear_error()
            return CertificateProviderError(
                .malformedInput,
                "this is a DER X.509 certificate, not a PKCS#12 file (it holds no private key)",
                openSSLErrors: openSSLErrors
            )
        }
        ERR_clear_error()
        return CertificateProviderError(
            .malformedInput,
            "the data is not a PKCS#12 file, or the file is truncated or corrupt",
            openSSLErrors: openSSLErrors
        )
    }

    // MARK: Chain helpers

    static func issued(_ subject: Certificate, by issuer: Certificate) -> Bool {
        X509_NAME_cmp(X509_get_issuer_name(subject.handle.pointer), X509_get_subject_name(issuer.handle.pointer)) == 0
    }

    static func signatureVerifies(_ subject: Certificate, by issuer: Certificate) -> Bool {
        defer { ERR_clear_error() }
        guard let key = X509_get0_pubkey(issuer.handle.pointer) else { return false }
        return X509_verify(subject.handle.pointer, key) == 1
    }
}
