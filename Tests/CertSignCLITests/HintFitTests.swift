import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// A hint fits the failure it follows: the note about PKCS#12 passwords from Windows only after a
/// `.p12` file refused its password, "move the damaged file aside" never for a database, an expired
/// session says so and how to log in, and a TSA nobody trusts points to `--tsa-ca`.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct HintFitTests {
    static let windows = "PKCS#12 passwords from Windows"

    @Test("the Windows note follows a .p12 file's wrong password, not a store's or the DSS password")
    func windowsNoteOnlyForPKCS12Files() throws {
        let fixture = try CLIFixture()
        let file = try fixture.run(
            ["identity", "import", fixture.p12Path, "--alias", "a", "--password-env", "P"],
            environment: ["P": "not-the-password"]
        )
        #expect(file.status == 1)
        #expect(file.errorOutput.contains(Self.windows), "\(file.errorOutput)")

        #expect(try fixture.importIdentity(alias: "a"))
        let document = try fixture.document("a.txt", "a\n")
        let store = try fixture.run(
            ["sign", document, "--identity", "a", "--password-env", "P"],
            environment: ["P": "not-the-store-password"]
        )
        #expect(store.status == 1)
        #expect(store.errorOutput.contains("hint: check the password"), "\(store.errorOutput)")
        #expect(!store.errorOutput.contains(Self.windows), "\(store.errorOutput)")

        try withEmulatorAndStore { _, url, dssStore in
            try CLI.dssLogin(url, store: dssStore)
            let dss = try CLI.run(
                ["dss", "certificates", "--dss-password-env", "P"],
                store: dssStore,
                environment: ["P": "not-the-dss-password"]
            )
            #expect(dss.status == 1)
            #expect(!dss.errorOutput.contains(Self.windows), "\(dss.errorOutput)")
        }
    }

    @Test("after the emulator restarts, a kept FMP session 'has expired; log in again' with the login command")
    func expiredSessionSaysSo() throws {
        let store = try TemporaryDirectory()
        let first = try DSSEmulator(seed: sharedSeed)
        let url = try first.start()
        try CLI.dssLogin(url, store: store)
        first.stop()
        // The same address, a fresh state: the session's tokens mean nothing to it.
        let second = try DSSEmulator(configuration: .init(port: UInt16(try #require(url.port))))
        try second.start()
        defer { second.stop() }
        let signs = try CLI.run(["dss", "signs"], store: store)
        #expect(signs.status == 1)
        #expect(signs.errorOutput.contains("the session has expired; log in again"), "\(signs.errorOutput)")
        #expect(signs.errorOutput.contains("hint: certsign dss login --host URL"), "\(signs.errorOutput)")
        #expect(!signs.errorOutput.contains("a new login"), "\(signs.errorOutput)")
    }

    @Test("a TSA whose CA is not trusted: the hint names --tsa-ca")
    func untrustedTSANamesTSACA() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a\n")
        try withEmulatorAndStore { emulator, _, _ in
            let tsa = try #require(emulator.timestampURL).absoluteString
            let signed = try fixture.run(
                ["sign", document, "--p12", fixture.p12Path, "--password-env", "P", "--tsa", tsa],
                environment: ["P": fixture.password]
            )
            #expect(signed.status == 1)
            #expect(signed.errorOutput.contains("--tsa-ca FILE"), "\(signed.errorOutput)")
        }
    }

    @Test(
        "a changed PostgreSQL journal: no 'move the damaged file aside'",
        .enabled(if: PostgresCluster.binaryDirectory != nil, "PostgreSQL is not installed")
    )
    func databaseIsNoFile() throws {
        let fixture = try CLIFixture()
        let cluster = try PostgresCluster()
        let journal = ["--journal", cluster.uri()]
        let document = try fixture.document("a.txt", "a\n")
        let signed = try fixture.run(
            journal + ["sign", document, "--p12", fixture.p12Path, "--password-env", "P"],
            environment: cluster.environment.merging(["P": fixture.password]) { $1 }
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        _ = try cluster.psql("UPDATE journal_entries SET document_name = 'forged'")
        let verified = try fixture.run(journal + ["journal", "verify"], environment: cluster.environment)
        #expect(verified.status == 1, "\(verified.output)")
        #expect(!verified.errorOutput.contains("move the damaged file aside"), "\(verified.errorOutput)")
        #expect(verified.errorOutput.contains("restore it from a backup"), "\(verified.errorOutput)")
    }
}
