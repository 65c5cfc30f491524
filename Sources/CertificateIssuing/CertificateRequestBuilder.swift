internal import COpenSSL
internal import COpenSSLShims
public import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// Builds PKCS#10 certificate requests (RFC 2986) signed by any ``CertificateProviders/SigningKey``:
/// a key in a key-management service, on a token or in a file. OpenSSL builds the request
/// (`X509_REQ`); its to-be-signed part is hashed here and signed by the key wherever it lives, and the
/// finished request is read back and verified with the public key it carries before it is returned.
///
/// ```swift
/// let pem = try await CertificateRequestBuilder.makeRequest(
///     subject: "CN=Иван Петров,O=ООО Ромашка", subjectAlternativeNames: ["email:ivan@example.ru"], key: key)
/// ```
public enum CertificateRequestBuilder {
    /// A PEM `CERTIFICATE REQUEST` for `key`'s public key.
    /// - Parameters:
    ///   - subject: an RFC 2253 name, `CN=…,O=…` (most significant last; values UTF-8, written as
    ///     UTF8String; commas inside values are not supported).
    ///   - subjectAlternativeNames: `DNS:host`, `email:address`, `IP:address` or `URI:uri` entries,
    ///     requested as one subjectAltName extension (none: no extension).
    ///   - digestAlgorithm: the digest the request is signed with (default SHA-256).
    ///   - key: the key that signs; RSA keys sign with PKCS#1 v1.5, EC keys with ECDSA.
    /// - Throws: `.invalidParameter` for a bad subject or alternative name; `.unsupportedAlgorithm`
    ///   for a key that is neither RSA nor EC; `.cryptoFailure` when the key's signature does not
    ///   verify with its public key; whatever the key's signing call throws.
    public static func makeRequest(
        subject: String,
        subjectAlternativeNames: [String] = [],
        digestAlgorithm: DigestAlgorithm = .sha256,
        key: any SigningKey
    ) async throws -> String {
        let algorithm = key.publicKeyAlgorithm
        guard algorithm.isRSA || algorithm.isEC, !digestAlgorithm.isGOST else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a certificate request is signed with RSA or ECDSA and SHA-2, not \(algorithm) with \(digestAlgorithm)"
            )
        }
        let request = try RequestHandle(subject: subject, names: subjectAlternativeNames, publicKey: key)
        let toBeSigned = try request.toBeSignedDER()
        // The message, not its digest: a KMS that takes the message (AWS KMS `RAW`) signs it as is;
        // other keys hash it here and sign the digest.
        let signature = try await key.signature(
            for: toBeSigned,
            digestAlgorithm: digestAlgorithm,
            scheme: algorithm.isRSA ? .rsaPKCS1v15 : .ecdsa
        )
        let der = try request.finish(signature: signature, digestAlgorithm: digestAlgorithm)
        let lines = stride(from: 0, to: der.count, by: 48).map {
            Data(der[$0..<min($0 + 48, der.count)]).base64EncodedString()
        }
        return "-----BEGIN CERTIFICATE REQUEST-----\n" + lines.joined(separator: "\n")
            + "\n-----END CERTIFICATE REQUEST-----\n"
    }
}

/// Owns one `X509_REQ*` and the public key it carries; frees both in `deinit`.
/// Each method is one synchronous step that clears and drains OpenSSL's error queue itself.
private final class RequestHandle {
    let pointer: OpaquePointer
    let publicKey: OpaquePointer

    init(subject: String, names: [String], publicKey key: any SigningKey) throws {
        OpenSSLErrorQueue.clear()
        let spki = key.publicKeyDERRepresentation
        var cursor = UnsafePointer<UInt8>?.none
        let parsed: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw Self.failure(.malformedInput, "the key's public key cannot be read") }
        guard let request = X509_REQ_new() else {
            EVP_PKEY_free(parsed)
            throw Self.failure(.cryptoFailure, "X509_REQ_new")
        }
        pointer = request
        publicKey = parsed
        let name = try CertificateIssuer.makeName(subject)
        defer { X509_NAME_free(name) }
        guard X509_REQ_set_version(request, 0) == 1, X509_REQ_set_subject_name(request, name) == 1,
            X509_REQ_set_pubkey(request, parsed) == 1
        else { throw Self.failure(.cryptoFailure, "X509_REQ_set_subject_name / set_pubkey") }
        if !names.isEmpty { try addSubjectAlternativeNames(names) }
    }

    deinit {
        X509_REQ_free(pointer)
        EVP_PKEY_free(publicKey)
    }

    private func addSubjectAlternativeNames(_ names: [String]) throws {
        for name in names {
            let kind = name.split(separator: ":", maxSplits: 1).first.map { $0.uppercased() } ?? ""
            guard ["DNS", "EMAIL", "IP", "URI"].contains(kind), name.count > kind.count + 1, !name.contains(",") else {
                throw CertificateProviderError.invalidParameter(
                    "subject alternative name '\(name)' is not DNS:host, email:address, IP:address or URI:uri"
                )
            }
        }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, nil, nil, pointer, nil, 0)
        guard let ext = X509V3_EXT_conf_nid(nil, &context, NID_subject_alt_name, names.joined(separator: ",")) else {
            throw Self.failure(
                .invalidParameter,
                "the subject alternative names \(names.joined(separator: ", ")) are refused"
            )
        }
        defer { X509_EXTENSION_free(ext) }
        var extensions: [OpaquePointer?] = [ext]
        guard COpenSSLShims_X509_REQ_add_extensions(pointer, &extensions, 1) == 1 else {
            throw Self.failure(.cryptoFailure, "X509_REQ_add_extensions")
        }
    }

    /// The DER CertificationRequestInfo, the part the key signs.
    func toBeSignedDER() throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_re_X509_REQ_tbs(pointer, &output)
        guard length > 0, let output else { throw Self.failure(.cryptoFailure, "i2d_re_X509_REQ_tbs") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// Sets the signature and its algorithm, encodes the request, reads it back and verifies it.
    func finish(signature: [UInt8], digestAlgorithm: DigestAlgorithm) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        var signatureNID: Int32 = NID_undef
        guard
            OBJ_find_sigid_by_algs(
                &signatureNID,
                EVP_MD_get_type(try digestAlgorithm.evpMD()),
                EVP_PKEY_get_base_id(publicKey)
            ) == 1, let algorithm = X509_ALGOR_new()
        else { throw Self.failure(.unsupportedAlgorithm, "no signature algorithm for this key and \(digestAlgorithm)") }
        defer { X509_ALGOR_free(algorithm) }
        let parameterType = EVP_PKEY_get_base_id(publicKey) == EVP_PKEY_RSA ? V_ASN1_NULL : V_ASN1_UNDEF
        guard X509_ALGOR_set0(algorithm, OBJ_nid2obj(signatureNID), parameterType, nil) == 1,
            X509_REQ_set1_signature_algo(pointer, algorithm) == 1,
            COpenSSLShims_X509_REQ_set_signature(pointer, signature, Int32(signature.count)) == 1
        else { throw Self.failure(.cryptoFailure, "X509_REQ_set1_signature_algo / set0_signature") }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_REQ(pointer, &output)
        guard length > 0, let output else { throw Self.failure(.cryptoFailure, "i2d_X509_REQ") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        let der = Array(UnsafeBufferPointer(start: output, count: Int(length)))
        var cursor = UnsafePointer<UInt8>?(output)
        guard let reread = d2i_X509_REQ(nil, &cursor, Int(length)) else {
            throw Self.failure(.cryptoFailure, "d2i_X509_REQ")
        }
        defer { X509_REQ_free(reread) }
        guard X509_REQ_verify(reread, publicKey) == 1 else {
            throw Self.failure(
                .cryptoFailure,
                "the signature the key returned does not verify with its public key; no request was written"
            )
        }
        return der
    }

    private static func failure(_ code: CertificateProviderError.Code, _ step: String) -> CertificateProviderError {
        OpenSSLErrorQueue.error(code, "the certificate request could not be built: \(step)")
    }
}
