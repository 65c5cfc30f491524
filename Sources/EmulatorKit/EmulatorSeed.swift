import CertificateIssuing
public import CertificateProviders

/// The data a ``DSSEmulator`` starts with: users, their DSS certificates with keys and PINs, the
/// platform resource cells they can sign, and the first signature id.
///
/// Keys and certificates are made at run time with `CertificateIssuer` (the emulator is a development server).
/// Build one seed and hand it to several emulators to save key generation time in tests; each
/// emulator keeps its own tokens and signatures.
public struct EmulatorSeed: Sendable {
    /// One DSS certificate held by the server for a user.
    public struct CertificateRecord: Sendable {
        /// The DSS certificate id (`certificate_id`).
        public var id: Int
        /// The certificate, its chain and its private key (the key never leaves the server).
        public var identity: SigningIdentity
        /// The PIN protecting the key, or nil when the key has none (`has_pin: false`).
        public var pin: Secret?

        /// Creates a record.
        public init(id: Int, identity: SigningIdentity, pin: Secret?) {
            self.id = id
            self.identity = identity
            self.pin = pin
        }
    }

    /// One platform user.
    public struct User: Sendable {
        /// The login name.
        public var username: String
        /// The platform password.
        public var password: Secret
        /// The environment the user belongs to.
        public var environment: String
        /// The project the user belongs to.
        public var project: String
        /// The DSS password that unlocks the user's certificates.
        public var dssPassword: Secret
        /// The user's certificates.
        public var certificates: [CertificateRecord]

        /// Creates a user.
        public init(
            username: String,
            password: Secret,
            environment: String,
            project: String,
            dssPassword: Secret,
            certificates: [CertificateRecord]
        ) {
            self.username = username
            self.password = password
            self.environment = environment
            self.project = project
            self.dssPassword = dssPassword
            self.certificates = certificates
        }
    }

    /// One cell of a platform resource table that can be signed (Codable: an emulator's state file keeps it).
    public struct ResourceCell: Sendable, Hashable, Codable {
        /// The resource name (`GetBudgetPlanning`).
        public var resource: String
        /// The table (`ПланированиеБюджета`).
        public var table: String
        /// The column (`Номер`).
        public var column: String
        /// The row (`hhive_id`).
        public var row: Int
        /// The cell's value; its UTF-8 bytes are what gets signed.
        public var value: String

        /// Creates a cell.
        public init(resource: String, table: String, column: String, row: Int, value: String) {
            self.resource = resource
            self.table = table
            self.column = column
            self.row = row
            self.value = value
        }
    }

    /// The certificate authority that issued every user certificate.
    public var certificateAuthority: Certificate
    /// The CA's private key, when the seed has it: the emulator then signs its OCSP responses and
    /// CRL with it and issues its TSA certificate under it. Without it the emulator makes a
    /// separate CA for those services.
    public var certificateAuthorityKey: LocalSigningKey?
    /// The users.
    public var users: [User]
    /// The signable cells.
    public var cells: [ResourceCell]
    /// The id the first signature gets; later ones count up from it.
    public var firstSignatureID: Int
    /// The identity the emulator presents when it serves HTTPS (``DSSEmulator/Configuration/tls``),
    /// or nil; ``standard()`` issues one under ``certificateAuthority`` naming `localhost`,
    /// `127.0.0.1` and `::1`.
    public var tlsServerIdentity: SigningIdentity?

    /// Creates a seed.
    public init(
        certificateAuthority: Certificate,
        users: [User],
        cells: [ResourceCell],
        firstSignatureID: Int,
        tlsServerIdentity: SigningIdentity? = nil,
        certificateAuthorityKey: LocalSigningKey? = nil
    ) {
        self.certificateAuthority = certificateAuthority
        self.certificateAuthorityKey = certificateAuthorityKey
        self.users = users
        self.cells = cells
        self.firstSignatureID = firstSignatureID
        self.tlsServerIdentity = tlsServerIdentity
    }

    /// The HHFWDss sample's data (see ``StandardSeed``), plus more certificates for Leonid and a
    /// second user (`Maria`) so that isolation between users can be tested. Keys: EC P-256 for
    /// 12831 and 12900, RSA-2048 for 12832, GOST R 34.10-2012 256-bit for 12833 and 12901 and
    /// 512-bit for 12834 (when the gost engine is available; without it the GOST certificates are
    /// left out); a fresh CA per call.
    /// - Throws: `.cryptoFailure` when OpenSSL cannot make the keys or certificates.
    public static func standard() throws -> EmulatorSeed {
        let pki = try CertificateIssuer(rootSubject: "CN=DSS Emulator Root CA,O=swift-certificate-providers")
        let leonid = User(
            username: StandardSeed.username,
            password: Secret(StandardSeed.password),
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            dssPassword: Secret(StandardSeed.dssPassword),
            certificates: try SeededCertificate.issue(
                [
                    .init(
                        StandardSeed.certificateID,
                        "CN=Леонид Тестов,O=ООО Ромашка,L=Москва,C=RU",
                        .p256,
                        pin: StandardSeed.certificatePIN
                    ),
                    .init(StandardSeed.secondCertificateID, "CN=Леонид Тестов (RSA),O=ООО Ромашка,C=RU", .rsa2048),
                    .init(
                        StandardSeed.gostCertificateID,
                        "CN=Леонид Тестов (ГОСТ),O=ООО Ромашка,C=RU",
                        .gost256,
                        pin: StandardSeed.certificatePIN
                    ),
                    .init(
                        StandardSeed.gost512CertificateID,
                        "CN=Леонид Тестов (ГОСТ 512),O=ООО Ромашка,C=RU",
                        .gost512
                    ),
                ],
                by: pki
            )
        )
        let maria = User(
            username: "Maria",
            password: Secret("456456"),
            environment: StandardSeed.environment,
            project: StandardSeed.project,
            dssPassword: Secret("Qwerty456"),
            certificates: try SeededCertificate.issue(
                [
                    .init(12900, "CN=Мария Иванова,O=ООО Ромашка,C=RU", .p256, pin: "456"),
                    .init(12901, "CN=Мария Иванова (ГОСТ),O=ООО Ромашка,C=RU", .gost256, pin: "456"),
                ],
                by: pki
            )
        )
        let cells = [
            ResourceCell(
                resource: StandardSeed.resource,
                table: StandardSeed.table,
                column: StandardSeed.column,
                row: StandardSeed.row,
                value: StandardSeed.cellValue
            ),
            ResourceCell(
                resource: StandardSeed.resource,
                table: StandardSeed.table,
                column: StandardSeed.column,
                row: 2,
                value: "БП-2026-002"
            ),
            ResourceCell(
                resource: StandardSeed.resource,
                table: StandardSeed.table,
                column: "Сумма",
                row: 1,
                value: "1500000.00"
            ),
        ]
        return EmulatorSeed(
            certificateAuthority: pki.root.certificate,
            users: [leonid, maria],
            cells: cells,
            firstSignatureID: StandardSeed.firstSignatureID,
            tlsServerIdentity: try pki.issueTLSServer(subject: "CN=DSS Emulator,O=swift-certificate-providers"),
            certificateAuthorityKey: pki.root.key
        )
    }
}

/// One certificate of the standard seed, before it is issued.
private struct SeededCertificate {
    let id: Int
    let subject: String
    let keyType: LocalSigningKey.GenerationParameters
    let pin: String?

    init(_ id: Int, _ subject: String, _ keyType: LocalSigningKey.GenerationParameters, pin: String? = nil) {
        self.id = id
        self.subject = subject
        self.keyType = keyType
        self.pin = pin
    }

    /// Issues each certificate in order under `pki`; GOST ones only when the gost engine is available.
    static func issue(
        _ certificates: [SeededCertificate],
        by pki: CertificateIssuer
    ) throws -> [EmulatorSeed.CertificateRecord] {
        try certificates.filter { GOSTEngine.isAvailable || !($0.keyType == .gost256 || $0.keyType == .gost512) }.map {
            EmulatorSeed.CertificateRecord(
                id: $0.id,
                identity: try pki.issueLeaf(subject: $0.subject, keyType: $0.keyType),
                pin: $0.pin.map { Secret($0) }
            )
        }
    }
}

/// The HHFWDss sample's values, as the standard seed serves them.
public enum StandardSeed {
    /// The platform user.
    public static let username = "Leonid"
    /// The user's platform password.
    public static let password = "123123"
    /// The environment.
    public static let environment = "Leonid_environment"
    /// The project.
    public static let project = "Leonid_project"
    /// The DSS password.
    public static let dssPassword = "Saprun123"
    /// The certificate the sample signs with (EC P-256, PIN protected).
    public static let certificateID = 12831
    /// Its PIN.
    public static let certificatePIN = "123"
    /// Leonid's second certificate (RSA-2048, no PIN).
    public static let secondCertificateID = 12832
    /// Leonid's GOST R 34.10-2012 256-bit certificate (same PIN as ``certificateID``; needs the gost engine).
    public static let gostCertificateID = 12833
    /// Leonid's GOST R 34.10-2012 512-bit certificate (no PIN; needs the gost engine).
    public static let gost512CertificateID = 12834
    /// The resource the sample signs.
    public static let resource = "GetBudgetPlanning"
    /// Its table.
    public static let table = "ПланированиеБюджета"
    /// Its column.
    public static let column = "Номер"
    /// Its row (`hhive_id`).
    public static let row = 1
    /// The cell's value (what the signature covers, UTF-8).
    public static let cellValue = "БП-2026-001"
    /// The first signature id the server hands out.
    public static let firstSignatureID = 121
}
