import CertificateProviders
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

/// Numeric fields arrive as numbers or as numeric strings (the HHFWDss sample
/// sends `"hhive_id": "1"` and `"certificate_id": "12831"`), as a Django REST Framework server takes them.
@Suite struct NumericFieldTests {
    @Test("the seed's own request with numeric strings signs; numbers sign; non-numeric strings are invalid_field")
    func numericStrings() async throws {
        try await withRawClient { _, client in
            let token = try await client.login()
            func sign(hhive: String, certificate: String) async throws -> HTTPResponse {
                try await client.json(
                    .post,
                    "\(dss)/sign/",
                    token: token,
                    """
                    {"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":\(hhive),\
                    "password":"Saprun123","certificate_id":\(certificate),"certificate_pin":"123"}
                    """
                )
            }
            let strings = try await sign(hhive: "\"1\"", certificate: "\"12831\"")
            #expect(strings.status == 200, "\(String(decoding: strings.body, as: UTF8.self))")
            #expect(try strings.json(context: "sign")["signature_id"]?.intValue == 121)
            #expect(try await sign(hhive: "1", certificate: "12831").status == 200)
            #expect(try await sign(hhive: "\" 2 \"", certificate: "12831").status == 200)
            expectEnvelope(try await sign(hhive: "\"one\"", certificate: "12831"), 400, "invalid_field")
            expectEnvelope(try await sign(hhive: "1", certificate: "\"12831abc\""), 400, "invalid_field")
            expectEnvelope(try await sign(hhive: "\"\"", certificate: "12831"), 400, "invalid_field")
            expectEnvelope(try await sign(hhive: "true", certificate: "12831"), 400, "invalid_field")
        }
    }

    @Test("the seed's request exactly as HHFWDss sends it: params as the string \"{}\" (let params = \"{}\") signs")
    func paramsAsString() async throws {
        try await withRawClient { _, client in
            let token = try await client.login()
            let seed = try await client.json(
                .post,
                "\(dss)/sign/",
                token: token,
                """
                {"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":"{}","column":"Номер",\
                "hhive_id":"1","password":"Saprun123","certificate_id":"12831","certificate_pin":"123"}
                """
            )
            #expect(seed.status == 200, "\(String(decoding: seed.body, as: UTF8.self))")
            #expect(try seed.json(context: "sign")["signature_id"]?.intValue == 121)
        }
    }
}
