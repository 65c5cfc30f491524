import CertificateIssuing
import CertificateProviders
import Foundation

/// What `state.json` in an emulator's state directory holds (see ``EmulatorStateFile``): the CA and
/// every key and certificate it issued (PEM), the users with their passwords and PINs, the cells,
/// the stored signatures, and the base URL the certificates' revocation URLs name.
///
/// These are the emulator's own published test credentials and throwaway keys; the file is still
/// written 0600 in a 0700 directory.
struct EmulatorStateDocument: Codable, Sendable {
    /// The format this code writes and reads.
    static let currentVersion = 1

    /// A certificate, the chain above it and its private key, as PEM.
    struct KeyedCertificate: Codable, Sendable {
        var certificate: String
        var chain: [String]
        var key: String
    }

    /// One DSS certificate of a user.
    struct CertificateRecord: Codable, Sendable {
        var id: Int
        var identity: KeyedCertificate
        var pin: String?
    }

    /// One platform user.
    struct User: Codable, Sendable {
        var username: String
        var password: String
        var environment: String
        var project: String
        var dssPassword: String
        var certificates: [CertificateRecord]
    }

    /// One stored signature.
    struct Signature: Codable, Sendable {
        var id: Int
        var owner: String
        var cell: EmulatorSeed.ResourceCell
        var certificateID: Int
        var createdAt: Date
        var cms: Data

        init(_ stored: EmulatorStore.StoredSignature) {
            (id, owner, cell) = (stored.id, stored.owner, stored.cell)
            (certificateID, createdAt, cms) = (stored.certificateID, stored.createdAt, Data(stored.cms))
        }

        var storedSignature: EmulatorStore.StoredSignature {
            .init(
                id: id,
                owner: owner,
                cell: cell,
                certificateID: certificateID,
                createdAt: createdAt,
                cms: Array(cms)
            )
        }
    }

    var version = Self.currentVersion
    /// The base URL the certificates' AIA OCSP and CRL DP name; nil when they name none.
    var baseURL: String?
    /// The port of the last run (tried first when the next run asks for any port).
    var port: UInt16?
    var authority: KeyedCertificate
    var timestampAuthority: KeyedCertificate
    var tlsServer: KeyedCertificate?
    var users: [User]
    var cells: [EmulatorSeed.ResourceCell]
    var firstSignatureID: Int
    var nextSignatureID: Int
    var signatures: [Signature]
    /// Serials of every certificate the CA issued in earlier runs (OCSP still answers `good`).
    var knownSerials: [String]
    /// The signing operations that wait for a person (``EmulatorApprovals``); nil in states written
    /// before the emulator had them.
    var approvals: [EmulatorApprovals.Operation]?

    /// The state of a new emulator.
    /// - Throws: `.invalidParameter` when a key is not a local one (it cannot be written down).
    init(seed: EmulatorSeed, pki: EmulatorPKI) throws {
        authority = try Self.encode(
            SigningIdentity(certificate: pki.authority.certificate, chain: [], key: pki.authority.key)
        )
        timestampAuthority = try Self.encode(pki.timestampIdentity)
        tlsServer = try seed.tlsServerIdentity.map(Self.encode)
        users = []
        cells = seed.cells
        firstSignatureID = seed.firstSignatureID
        nextSignatureID = seed.firstSignatureID
        signatures = []
        knownSerials = pki.knownSerials.sorted()
        try setUsers(seed.users)
    }

    /// Replaces the users (after their certificates were re-issued).
    mutating func setUsers(_ seedUsers: [EmulatorSeed.User]) throws {
        users = try seedUsers.map { user in
            User(
                username: user.username,
                password: Self.text(user.password),
                environment: user.environment,
                project: user.project,
                dssPassword: Self.text(user.dssPassword),
                certificates: try user.certificates.map {
                    CertificateRecord(id: $0.id, identity: try Self.encode($0.identity), pin: $0.pin.map(Self.text))
                }
            )
        }
    }

    /// The seed this state describes.
    func makeSeed() throws -> EmulatorSeed {
        let authority = try Self.decode(self.authority)
        guard let key = authority.key as? LocalSigningKey else {
            throw CertificateProviderError(.storeCorrupted, "the CA key is not a local key")
        }
        return EmulatorSeed(
            certificateAuthority: authority.certificate,
            users: try users.map { user in
                EmulatorSeed.User(
                    username: user.username,
                    password: Secret(user.password),
                    environment: user.environment,
                    project: user.project,
                    dssPassword: Secret(user.dssPassword),
                    certificates: try user.certificates.map {
                        .init(id: $0.id, identity: try Self.decode($0.identity), pin: $0.pin.map { Secret($0) })
                    }
                )
            },
            cells: cells,
            firstSignatureID: firstSignatureID,
            tlsServerIdentity: try tlsServer.map(Self.decode),
            certificateAuthorityKey: key
        )
    }

    /// The TSA identity this state keeps.
    func makeTimestampIdentity() throws -> SigningIdentity { try Self.decode(timestampAuthority) }

    /// The stored signatures as the store keeps them.
    var storedSignatures: [EmulatorStore.StoredSignature] { signatures.map(\.storedSignature) }

    /// Replaces the stored signatures.
    mutating func setSignatures(_ stored: [EmulatorStore.StoredSignature], nextID: Int) {
        signatures = stored.sorted { $0.id < $1.id }.map(Signature.init)
        nextSignatureID = nextID
    }

    /// An identity as PEM.
    static func encode(_ identity: SigningIdentity) throws -> KeyedCertificate {
        guard let key = identity.key as? LocalSigningKey else {
            throw CertificateProviderError.invalidParameter(
                "the emulator can keep its state only for local keys; '\(identity.certificate.subject)' has another"
            )
        }
        return KeyedCertificate(
            certificate: identity.certificate.pemRepresentation,
            chain: identity.chain.map(\.pemRepresentation),
            key: try key.pemRepresentation(password: nil)
        )
    }

    private static func decode(_ record: KeyedCertificate) throws -> SigningIdentity {
        SigningIdentity(
            certificate: try Certificate(pemEncoded: record.certificate),
            chain: try record.chain.map(Certificate.init(pemEncoded:)),
            key: try LocalSigningKey(pemEncoded: record.key)
        )
    }

    /// The emulator's published test credentials as text (they are written to the state file).
    private static func text(_ secret: Secret) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
