internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// The validation data inside CMS SignedData (ETSI EN 319 122-1 §5.5.3, B-LT): certificates in
/// `SignedData.certificates`, CRLs in `SignedData.crls`, OCSP responses as RevocationInfoChoice
/// `other` with `id-ri-ocsp-response` (RFC 5940). Certificates and CRLs go through libcrypto's CMS
/// API; OCSP entries, which it cannot read or add, through the shim's ASN.1 template view.
package enum CMSValidationData {
    /// `id-ri-ocsp-response` (RFC 5940): an OCSPResponse as RevocationInfoChoice `other`.
    package static let ocspResponseFormat = "1.3.6.1.5.5.7.16.2"
    /// `id-pkix-ocsp-basic`: a BasicOCSPResponse as RevocationInfoChoice `other` (EU DSS writes it).
    package static let basicOCSPResponseFormat = "1.3.6.1.5.5.7.48.1.1"

    /// What a signature carries.
    package struct Contents {
        /// The DER of each element of `SignedData.certificates`, in order.
        package var certificates: [[UInt8]] = []
        /// The DER of each element of `SignedData.crls` (a CRL, or `[1]` OtherRevocationInfoFormat).
        package var revocationEntries: [[UInt8]] = []
        /// The CRLs (DER).
        package var crls: [[UInt8]] = []
        /// The OCSP responses of `id-ri-ocsp-response` entries (DER OCSPResponse).
        package var ocspResponses: [[UInt8]] = []
        /// The `id-pkix-ocsp-basic` entries, each wrapped by OpenSSL into a successful
        /// OCSPResponse (DER) so they are checked like the others.
        package var basicOCSPResponses: [[UInt8]] = []
    }

    /// A BasicOCSPResponse (DER) as a successful OCSPResponse (DER), by `OCSP_response_create`.
    private static func wrapBasicResponse(_ der: [UInt8]) -> [UInt8]? {
        guard
            let basic = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_OCSP_BASICRESP(nil, &cursor, buffer.count)
            })
        else {
            ERR_clear_error()
            return nil
        }
        defer { OCSP_BASICRESP_free(basic) }
        guard let response = OCSP_response_create(Int32(OCSP_RESPONSE_STATUS_SUCCESSFUL), basic) else { return nil }
        defer { OCSP_RESPONSE_free(response) }
        return try? copyDER { i2d_OCSP_RESPONSE(response, $0) }
    }

    /// Reads the certificates and revocation entries of a DER SignedData.
    /// - Throws: `.malformedInput` when the bytes are not DER CMS SignedData.
    package static func contents(of signature: [UInt8]) throws -> Contents {
        try withView(signature) { view in
            var contents = Contents()
            for index in 0..<COpenSSLShims_SignedDataView_certificate_count(view) {
                contents.certificates.append(
                    try copyDER { COpenSSLShims_SignedDataView_certificate_der(view, index, $0) }
                )
            }
            for index in 0..<COpenSSLShims_SignedDataView_revocation_count(view) {
                let entry = try copyDER { COpenSSLShims_SignedDataView_revocation_der(view, index, $0) }
                contents.revocationEntries.append(entry)
                var format: OpaquePointer?
                var output: UnsafeMutablePointer<UInt8>?
                let length = COpenSSLShims_SignedDataView_other_revocation(view, index, &format, &output)
                if length == 0 {
                    contents.crls.append(entry)
                } else if length > 0, let output {
                    defer { COpenSSLShims_OPENSSL_free(output) }
                    let value = Array(UnsafeBufferPointer(start: output, count: Int(length)))
                    switch objectIdentifier(format) {
                    case ocspResponseFormat: contents.ocspResponses.append(value)
                    case basicOCSPResponseFormat:
                        contents.basicOCSPResponses += wrapBasicResponse(value).map { [$0] } ?? []
                    default: break
                    }
                }
            }
            return contents
        }
    }

    /// Adds the certificates, CRLs and OCSP responses that `signature` does not carry yet.
    /// - Parameters:
    ///   - data: what to add.
    ///   - signature: a DER CMS SignedData.
    /// - Returns: the signature with them (DER); signed content, signed attributes and signature
    ///   values are untouched.
    /// - Throws: `.malformedInput` for a signature that is not SignedData; `.cryptoFailure` when
    ///   OpenSSL refuses an entry.
    package static func embed(_ data: ValidationData, into signature: [UInt8]) throws -> [UInt8] {
        let present = try contents(of: signature)
        let cms = try CMSTimestamping.parse(signature)
        for certificate in data.certificates where !present.certificates.contains(certificate.derRepresentation) {
            guard CMS_add1_cert(cms.pointer, certificate.handle.pointer) == 1 else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the certificate '\(certificate.subject)'")
            }
        }
        for crl in data.crls where !present.crls.contains(crl.derRepresentation) {
            guard CMS_add1_crl(cms.pointer, crl.handle.pointer) == 1 else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the CRL of '\(crl.issuer)'")
            }
        }
        let withCRLs = try cms.derBytes()
        let responses = data.ocspResponses.filter { !present.ocspResponses.contains($0) }
        guard !responses.isEmpty else { return withCRLs }
        return try withView(withCRLs) { view in
            guard let format = OBJ_txt2obj(ocspResponseFormat, 1) else {
                throw OpenSSLErrorQueue.error(.cryptoFailure, "OBJ_txt2obj")
            }
            defer { ASN1_OBJECT_free(format) }
            for response in responses {
                let added = response.withUnsafeBufferPointer {
                    COpenSSLShims_SignedDataView_add_other_revocation(view, format, $0.baseAddress, $0.count)
                }
                guard added == 1 else {
                    throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add an OCSP response to SignedData.crls")
                }
            }
            return try copyDER { COpenSSLShims_SignedDataView_to_der(view, $0) }
        }
    }

    /// Runs `body` with the shim's view of a DER SignedData, freed afterwards.
    private static func withView<T>(_ der: [UInt8], _ body: (OpaquePointer) throws -> T) throws -> T {
        OpenSSLErrorQueue.clear()
        guard
            let view = der.withUnsafeBufferPointer({
                $0.isEmpty ? nil : COpenSSLShims_SignedDataView_d2i($0.baseAddress, $0.count)
            })
        else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the signature is not DER CMS SignedData")
        }
        defer { COpenSSLShims_SignedDataView_free(view) }
        return try body(view)
    }

    /// The bytes an `i2d`-style call writes into a buffer it allocates.
    package static func copyDER(
        _ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32
    ) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = encode(&output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode DER") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The dotted text of an OID.
    package static func objectIdentifier(_ object: OpaquePointer?) -> String? {
        object.flatMap(ASN1Object.dotted)
    }
}
