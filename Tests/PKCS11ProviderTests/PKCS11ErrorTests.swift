import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS11Provider
import TestSupport
import Testing

/// Wrong and locked PINs, missing tokens, keys, certificates and modules: typed errors that name what
/// was looked for, and PIN tries that are never wasted.
@Suite(
    "PKCS#11 errors on SoftHSM2",
    .enabled(if: SoftHSMFixture.isAvailable, "softhsm2, opensc or openssl is not installed")
)
struct PKCS11ErrorTests {
    @Test("wrong PIN → .wrongPassword, exactly one failed login (token flags read before and after by pkcs11-tool)")
    func wrongPIN() async throws {
        let fixture = try SoftHSMFixture.shared()
        let before = try fixture.tokenFlags(SoftHSMFixture.Token.wrongPIN)
        #expect(!before.contains("user PIN count low"), "\(before)")
        let provider = try PKCS11CertificateProvider(parameters: [
            PKCS11CertificateProvider.ParameterKey.module: .string(SoftHSMFixture.softHSMModule)
        ])
        let error = await PKCS11Testing.error {
            _ = try await provider.initialize(options: [
                PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=wrong-pin;object=eckey"),
                PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret("0000")),
            ])
        }
        #expect(error?.code == .wrongPassword)
        #expect(error?.reason.contains("CKR_PIN_INCORRECT") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("will not be retried") == true)
        #expect(
            error?.reason.contains("CKF_USER_PIN_COUNT_LOW") == true,
            "the token's PIN state is reported: \(String(describing: error))"
        )
        #expect(error?.reason.contains("0000") == false)
        let after = try fixture.tokenFlags(SoftHSMFixture.Token.wrongPIN)
        #expect(after.contains("user PIN count low"), "SoftHSM marks a failed login: \(after)")
        #expect(try provider.storedCertificate() == nil)
        // The right PIN still works (one failure does not lock SoftHSM) and clears the mark.
        _ = try await provider.initialize(options: [
            PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=wrong-pin;object=eckey"),
            PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(SoftHSMFixture.pin)),
        ])
        #expect(!(try fixture.tokenFlags(SoftHSMFixture.Token.wrongPIN)).contains("user PIN count low"))
    }

    @Test("a locked PIN → .pinLocked, before any login attempt")
    func lockedPIN() async throws {
        let fixture = try SoftHSMFixture.shared()
        #expect(try fixture.tokenFlags(SoftHSMFixture.Token.locked).contains("user PIN locked"))
        let error = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:token=locked;object=eckey")
        }
        #expect(error?.code == .pinLocked)
        #expect(error?.reason.contains("no login was tried") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("'locked'") == true)
    }

    @Test("no PIN and no PIN pad → .passwordRequired")
    func noPIN() async throws {
        let error = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:token=no-pin;object=eckey", pin: nil)
        }
        #expect(error?.code == .passwordRequired)
    }

    @Test("no such token → .tokenNotFound naming the URI's token attributes")
    func noToken() async throws {
        let error = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:token=no-such-token;object=rsakey")
        }
        #expect(error?.code == .tokenNotFound)
        #expect(error?.reason.contains("token=no-such-token") == true, "\(String(describing: error))")
        let serialError = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:serial=0000000000000000;object=rsakey")
        }
        #expect(serialError?.code == .tokenNotFound)
        #expect(serialError?.reason.contains("serial=0000000000000000") == true)
    }

    @Test("no such key → .noPrivateKey naming the object or id")
    func noKey() async throws {
        let byLabel = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:token=signer;object=missing-key")
        }
        #expect(byLabel?.code == .noPrivateKey)
        #expect(byLabel?.reason.contains("object=missing-key") == true, "\(String(describing: byLabel))")
        let byID = await PKCS11Testing.error { _ = try await PKCS11Testing.provider("pkcs11:token=signer;id=%7F%01") }
        #expect(byID?.code == .noPrivateKey)
        #expect(byID?.reason.contains("id=%7F%01") == true, "\(String(describing: byID))")
    }

    @Test("a key without certificate → .certificateNotFound naming the key")
    func keyWithoutCertificate() async throws {
        let error = await PKCS11Testing.error {
            _ = try await PKCS11Testing.provider("pkcs11:token=signer;object=nocert")
        }
        #expect(error?.code == .certificateNotFound)
        #expect(
            error?.reason.contains("'nocert'") == true && error?.reason.contains("id 04") == true,
            "\(String(describing: error))"
        )
    }

    @Test("several keys match → .invalidParameter listing them")
    func ambiguous() async throws {
        let error = await PKCS11Testing.error { _ = try await PKCS11Testing.provider("pkcs11:token=signer") }
        #expect(error?.code == .invalidParameter)
        #expect(error?.reason.contains("rsakey") == true)
    }

    @Test(
        "a module path that is not a PKCS#11 module → .moduleNotLoadable naming the path",
        arguments: ["/usr/lib/x86_64-linux-gnu/libz.so.1", "/etc/hostname", "/nonexistent/libpkcs11.so"]
    )
    func notAModule(path: String) async throws {
        let provider = try PKCS11CertificateProvider(parameters: [
            PKCS11CertificateProvider.ParameterKey.module: .string(path)
        ])
        let error = await PKCS11Testing.error {
            _ = try await provider.initialize(options: [
                PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:token=signer;object=rsakey"),
                PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret("1234")),
            ])
        }
        #expect(error?.code == .moduleNotLoadable)
        #expect(error?.reason.contains(path) == true, "\(String(describing: error))")
    }

    @Test("a PIN inside the URI is refused and not echoed")
    func pinInURI() async throws {
        let error = await PKCS11Testing.error { _ = try PKCS11URI("pkcs11:token=signer;object=rsakey?pin-value=98765") }
        #expect(error?.code == .invalidParameter)
        #expect(error?.reason.contains("98765") == false)
        let inPath = await PKCS11Testing.error { _ = try PKCS11URI("pkcs11:token=signer;pin-value=98765") }
        #expect(inPath?.code == .invalidParameter && inPath?.reason.contains("98765") == false)
        let provider = try PKCS11CertificateProvider()
        let viaParameters = await PKCS11Testing.error {
            try provider.setParameters([
                PKCS11CertificateProvider.ParameterKey.uri: .string("pkcs11:object=x?pin-value=98765")
            ])
        }
        #expect(viaParameters?.code == .invalidParameter)
    }

    @Test("unknown parameters are rejected by name")
    func unknownParameter() async throws {
        let error = await PKCS11Testing.error {
            _ = try PKCS11CertificateProvider(parameters: ["password": .string("x")])
        }
        #expect(error?.code == .invalidParameter && error?.reason.contains("'password'") == true)
    }
}

@Suite("PKCS#11 URIs (RFC 7512)")
struct PKCS11URITests {
    @Test("a bad parameter is refused alike at init, setParameters and initialize(options:)")
    func validationMoment() async throws {
        let reason = try await expectRefusedAtEveryMoment([
            PKCS11CertificateProvider.ParameterKey.uri: .string("https://token.example/key")
        ]) {
            try PKCS11CertificateProvider(parameters: $0)
        }
        #expect(
            reason
                == "parameter 'uri': 'https://token.example/key' is not a pkcs11: URI (RFC 7512), e.g. "
                + "pkcs11:token=test;object=rsakey"
        )
    }

    @Test("the keys live in PKCS11CertificateProvider.ParameterKey with the --param words stored parameters use")
    func parameterKeyWords() {
        typealias Key = PKCS11CertificateProvider.ParameterKey
        let keys = [Key.uri, Key.module, Key.pin, Key.scheme]
        #expect(keys.map(\.rawValue) == ["uri", "module", "pin", "scheme"])
        #expect(Set(keys) == PKCS11CertificateProvider.schema.keys && Key.all == Set(keys))
    }

    @Test("attributes, percent-decoding and the id as bytes")
    func parse() throws {
        let uri = try PKCS11URI(
            "pkcs11:token=My%20Token;manufacturer=SoftHSM%20project;serial=abc123;model=SoftHSM%20v2;object=sign%3Bkey;id=%01%A0;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so"
        )
        #expect(uri.token == "My Token")
        #expect(uri.manufacturer == "SoftHSM project")
        #expect(uri.serial == "abc123")
        #expect(uri.model == "SoftHSM v2")
        #expect(uri.object == "sign;key")
        #expect(uri.id == [0x01, 0xA0])
        #expect(uri.type == "private")
        #expect(uri.modulePath == "/usr/lib/softhsm/libsofthsm2.so")
        #expect(try PKCS11URI(uri.description) == uri)
        #expect(try PKCS11URI("pkcs11:object=%D0%BA%D0%BB%D1%8E%D1%87").object == "ключ")
    }

    @Test(
        "bad URIs are .invalidParameter",
        arguments: [
            "token=x", "pkcs11:token=%2", "pkcs11:token=%zz", "pkcs11:colour=blue",
            "pkcs11:type=secret", "pkcs11:token", "pkcs11:object=%FF%FE",
        ]
    )
    func bad(text: String) {
        #expect(throws: CertificateProviderError.self) { try PKCS11URI(text) }
    }
}

@Suite("PKCS#11 return values")
struct CKRMappingTests {
    @Test("every CKR_* value of the header becomes a typed error whose reason names it")
    func everyValueNamed() {
        #expect(CKRNames.byValue.count >= 90)
        for (value, name) in CKRNames.byValue where value != 0 {
            let error = CKRNames.providerError(value)
            #expect(error.reason.contains(name), "\(name): \(error.reason)")
            #expect(!error.code.rawValue.isEmpty)
        }
        #expect(CKRNames.name(0x8000_0012) == "CKR_VENDOR_DEFINED+0x12")
    }

    @Test(
        "the codes tell the caller what to do",
        arguments: [
            ("CKR_PIN_INCORRECT", "wrongPassword"), ("CKR_PIN_LOCKED", "pinLocked"),
            ("CKR_TOKEN_NOT_PRESENT", "tokenNotFound"),
            ("CKR_MECHANISM_INVALID", "unsupportedAlgorithm"), ("CKR_FUNCTION_CANCELED", "cancelled"),
            ("CKR_KEY_FUNCTION_NOT_PERMITTED", "unsupportedOperation"),
            ("CKR_DATA_LEN_RANGE", "invalidParameter"), ("CKR_DEVICE_ERROR", "tokenFailure"),
            ("CKR_PIN_EXPIRED", "authenticationFailed"),
        ]
    )
    func codes(name: String, code: String) throws {
        let value = try #require(CKRNames.byValue.first { $0.value == name }?.key)
        #expect(CKRNames.providerError(value).code.rawValue == code)
    }
}
