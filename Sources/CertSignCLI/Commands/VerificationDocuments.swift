import CertificateProviders
import Foundation
import Signing

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// The signer's certificate in `verify`.
struct SignerCertificateDocument: Encodable {
    var subject: String
    var issuer: String
    var serialNumber: String
    var sha256Fingerprint: String
    var keyAlgorithm: String
    enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, issuer, serialNumber, sha256Fingerprint, keyAlgorithm
    }
}

/// A signer's timestamp in `verify`.
struct SignerTimestampDocument: Encodable {
    var time: String
    var valid: Bool
    var indication: String
    var subIndication: String?
    var tsa: String?
    var failure: FailureDocument?
    enum CodingKeys: String, CodingKey, CaseIterable { case time, valid, indication, subIndication, tsa, failure }

    init(_ stamp: VerifiedTimestamp) {
        time = Format.isoDate(stamp.time)
        valid = stamp.isValid
        indication = stamp.indication.rawValue
        subIndication = stamp.subIndication?.rawValue
        tsa = stamp.tsa?.subject
        failure = stamp.failure.map(FailureDocument.init)
    }
}

/// A signer's revocation status in `verify`: the summary, then each certificate of the signer's
/// and the TSA's paths (trust anchors excepted).
struct RevocationDocument: Encodable {
    var status: String
    var source: String
    var revocationTime: String?
    var certificates: [CertificateRevocationDocument]?
    enum CodingKeys: String, CodingKey, CaseIterable { case status, source, revocationTime, certificates }

    init(_ revocation: RevocationStatus) {
        status = revocation.state.rawValue
        source = revocation.source
        revocationTime = revocation.revocationTime.map(Format.isoDate)
        certificates =
            revocation.certificates.isEmpty ? nil : revocation.certificates.map(CertificateRevocationDocument.init)
    }
}

/// One certificate's revocation status in `verify`.
struct CertificateRevocationDocument: Encodable {
    var subject: String
    var sha256Fingerprint: String
    var role: String
    var status: String
    var source: String
    var revocationTime: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, sha256Fingerprint, role, status, source, revocationTime
    }

    init(_ entry: CertificateRevocationStatus) {
        subject = entry.certificate.subject
        sha256Fingerprint = entry.certificate.sha256FingerprintHex
        role = entry.role.rawValue
        status = entry.status.state.rawValue
        source = entry.status.source
        revocationTime = entry.status.revocationTime.map(Format.isoDate)
    }
}

/// SIGNER in `verify`.
struct SignerDocument: Encodable {
    var valid: Bool
    var indication: String
    var subIndication: String?
    var chainChecked: Bool
    var format: String
    var chain: [String]
    var signer: SignerCertificateDocument?
    var signingTime: String?
    var digest: String?
    var signatureAlgorithm: String?
    var checkedAt: String?
    var timestamp: SignerTimestampDocument?
    var revocation: RevocationDocument?
    var failure: FailureDocument?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case valid, indication, subIndication, chainChecked, format, chain, signer, signingTime, digest
        case signatureAlgorithm, checkedAt, timestamp, revocation, failure
    }

    init(_ signer: SignerVerification) {
        // `valid` is true exactly when the indication is PASSED.
        valid = signer.indication == .passed
        indication = signer.indication.rawValue
        subIndication = signer.subIndication?.rawValue
        chainChecked = signer.chainChecked
        format = signer.format.rawValue
        chain = signer.chain.map(\.subject)
        if let certificate = signer.signerCertificate {
            self.signer = SignerCertificateDocument(
                subject: certificate.subject,
                issuer: certificate.issuer,
                serialNumber: certificate.serialNumber,
                sha256Fingerprint: certificate.sha256FingerprintHex,
                keyAlgorithm: certificate.publicKeyAlgorithm.rawValue
            )
        }
        signingTime = signer.signingTime.map(Format.isoDate)
        digest = signer.digestAlgorithm?.rawValue ?? signer.digestAlgorithmName
        signatureAlgorithm = signer.signatureAlgorithmName
        checkedAt = signer.checkedAt.map(Format.isoDate)
        timestamp = signer.timestamp.map(SignerTimestampDocument.init)
        revocation = signer.revocation.map(RevocationDocument.init)
        failure = signer.failure.map(FailureDocument.init)
    }
}

/// `verify` of a CMS signature: the verdict, the first signer's fields at the top level (as before
/// several signers were reported), and `signers` with each one.
struct VerificationDocument: Encodable, Sendable {
    var valid: Bool
    var indication: String
    var subIndication: String?
    var chainChecked: Bool
    var detached: Bool
    var validationTime: String
    var signature: String?
    var content: String?
    var signer: SignerCertificateDocument?
    var signingTime: String?
    var digest: String?
    var signatureAlgorithm: String?
    var format: String?
    var chain: [String]?
    var checkedAt: String?
    var timestamp: SignerTimestampDocument?
    var revocation: RevocationDocument?
    var failure: FailureDocument?
    var signers: [SignerDocument]
    /// CAdES-LTA past validation: the time the first archive timestamp proves, at which it verified.
    var pastValidationTime: String?
    /// With `--trusted-list`: each valid signer's qualification (QESig, AdESig-QC, …).
    var qualifications: [QualificationDocument]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case valid, indication, subIndication, chainChecked, detached, validationTime, signature, content, signer,
            signingTime, digest
        case signatureAlgorithm, format, chain, checkedAt, timestamp, revocation, failure, signers
        case pastValidationTime, qualifications
    }

    init(_ result: VerificationResult) {
        // `valid` is true exactly when the indication is PASSED.
        valid = result.indication == .passed
        indication = result.indication.rawValue
        subIndication = result.subIndication?.rawValue
        chainChecked = result.chainChecked
        detached = result.isDetached
        validationTime = Format.isoDate(result.validationTime)
        signers = result.signers.map(SignerDocument.init)
        pastValidationTime = result.pastValidationTime.map(Format.isoDate)
        if let first = signers.first {
            signer = first.signer
            signingTime = first.signingTime
            digest = first.digest
            signatureAlgorithm = first.signatureAlgorithm
            format = first.format
            chain = first.chain
            checkedAt = first.checkedAt
            timestamp = first.timestamp
            revocation = first.revocation
            failure = first.failure
        } else {
            chain = result.chain.map(\.subject)
        }
        if let overall = result.format { format = overall.rawValue }
        if let overall = result.failure { failure = FailureDocument(overall) }
    }
}
