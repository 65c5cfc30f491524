import CSCProvider
import CertificateProviders
import EmulatorKit
import Foundation
import HTTPClient

/// A CSC API v2 client on an emulator with a token and one SAD authorized for every `signHash` of the
/// suite (the bench's emulator lets one authorization sign that many), shared by the bench rows.
struct CSCBenchSession: Sendable {
    let client: CSCClient
    let transport: CurlTransport
    let bearer: String
    /// The SAD every `signHash` round trip sends (ours, the C libcurl loop's and wrk's).
    let sad: Secret
    /// The `credentials/list` URL.
    let listingURL: String
    /// The `signatures/signHash` URL.
    let signingURL: String
    /// The credential: Leonid's P-256 key (PIN protected, SCAL 1).
    static let credentialID = String(StandardSeed.certificateID)
    /// The one SHA-256 digest each `signHash` signs.
    static let digest = DigestAlgorithm.sha256.hash(Array("certsign-bench".utf8))
    /// ECDSA with SHA-256.
    static let signAlgorithm = "1.2.840.10045.4.3.2"

    /// Fetches a token (through `credentials/list`) and authorizes the credential once.
    init(base: URL, transport: CurlTransport) async throws {
        client = CSCClient(
            configuration: .init(
                baseURL: base,
                clientID: StandardSeed.username,
                clientSecret: Secret(StandardSeed.password)
            ),
            transport: transport
        )
        self.transport = transport
        _ = try await client.listCredentials()
        guard let token = await client.currentToken else { throw BenchError("CSC bench: no token after a call") }
        bearer = token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        sad = try await client.authorize(
            credentialID: Self.credentialID,
            numSignatures: Int(Int32.max),
            pin: Secret(StandardSeed.certificatePIN)
        ).sad
        listingURL = base.absoluteString + "csc/v2/credentials/list"
        signingURL = base.absoluteString + "csc/v2/signatures/signHash"
    }

    /// One `signatures/signHash` of ``digest``.
    @Sendable func sign() async throws {
        _ = try await client.signHash(
            credentialID: Self.credentialID,
            sad: sad,
            hashes: [Self.digest],
            hashAlgorithm: .sha256,
            signAlgorithm: Self.signAlgorithm
        )
    }

    /// The `signHash` request's JSON body, as the client sends it (the emulator's SAD for this run).
    var signBody: String {
        let sadText = sad.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let members = [
            #""SAD":"\#(sadText)""#, #""credentialID":"\#(Self.credentialID)""#,
            #""hashAlgorithmOID":"\#(DigestAlgorithm.sha256.oid)""#,
            #""hashes":["\#(Data(Self.digest).base64EncodedString())"]"#, #""signAlgo":"\#(Self.signAlgorithm)""#,
        ]
        return "{" + members.joined(separator: ",") + "}"
    }
}

extension CSCBenchSession: BearerBenchSession {
    static let name = "csc"
    static let noteName = "CSC"
    static let listing = (label: "CSC credentials/list", route: "credentials/list")
    static let listingBody: String? = "{}"
    static let signing = (label: "CSC signatures/signHash (1 SHA-256 digest, P-256)", route: "signatures/signHash")

    func list() async throws { _ = try await client.listCredentials() }

    func describe(_ emulator: BenchEmulator) -> String {
        "CSC: emulator \(emulator.placement) on \(emulator.base.absoluteString); client = CSCClient over "
            + "CurlTransport; credentials/list without details; signHash with one SAD authorized for the whole run"
    }
}
