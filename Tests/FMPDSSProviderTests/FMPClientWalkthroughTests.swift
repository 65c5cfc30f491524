import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("FMPClient: the HHFWDss walk-through over real loopback HTTP")
struct FMPClientWalkthroughTests {
    @Test("auth, certificates, signs, sign → 121, signs, remove, signs")
    func walkthrough() async throws {
        try await withEmulator { emulator, url in
            let client = makeClient(url)
            let auth = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
            #expect(auth.envelope.status == "ok")
            #expect(auth.envelope.http.status == 200)
            #expect(auth.envelope.result.raw["token"] == "<redacted>")
            #expect(auth.value.environment == StandardSeed.environment)
            #expect(FMPClient.responseStatus(from: auth.envelope) == "ok")

            let certificates = try await client.certificates(dssPassword: Secret(StandardSeed.dssPassword))
            // The GOST certificates follow the sample's two when the gost engine is there.
            let gost =
                GOSTEngine.isAvailable ? [StandardSeed.gostCertificateID, StandardSeed.gost512CertificateID] : []
            #expect(
                certificates.value.map(\.id) == [StandardSeed.certificateID, StandardSeed.secondCertificateID] + gost
            )
            let first = try #require(certificates.value.first)
            #expect(first.hasPIN)
            #expect(first.certificate.subject.contains("Леонид Тестов"))
            #expect(first.certificate.issuer == sharedSeed.certificateAuthority.subject)
            #expect(certificates.value[1].hasPIN == false)
            #expect(certificates.envelope.result.raw["certificates"]?.arrayValue?.count == 2 + gost.count)

            let empty = try await client.signs()
            #expect(empty.value.isEmpty)
            #expect(empty.envelope.result.raw == ["signs": []])

            let signed = try await signSample(client)
            #expect(signed.value == 121)
            #expect(FMPClient.signatureID(from: signed.envelope) == 121)
            #expect(signed.envelope.result.raw == ["signature_id": 121])

            let listed = try await client.signs()
            let signature = try #require(listed.value.first)
            #expect(listed.value.count == 1)
            #expect(signature.id == 121)
            #expect(signature.resource == StandardSeed.resource)
            #expect(signature.table == StandardSeed.table)
            #expect(signature.column == StandardSeed.column)
            #expect(signature.hhiveID == 1)
            #expect(signature.certificateID == 12831)
            #expect(signature.createdAt != nil)
            #expect(try opensslVerify(signature.signature, emulator: emulator) == StandardSeed.cellValue)

            let removed = try await client.removeSign(id: 121)
            #expect(removed.envelope.status == "ok")
            #expect(removed.envelope.result.raw == [:])
            #expect(try await client.signs().value.isEmpty)
            #expect(routeLog(emulator) == ["obtain", "certificates", "signs", "sign", "signs", "remove", "signs"])
        }
    }
}
