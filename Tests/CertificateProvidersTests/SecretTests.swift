import CertificateProviders
import TestSupport
import Testing

@Suite struct SecretTests {
    @Test func neverShowsItsValue() {
        let secret = Secret("пароль-123")
        let texts = [
            secret.description, secret.debugDescription, "\(secret)", String(describing: secret),
            String(reflecting: secret),
        ]
        for text in texts {
            #expect(!text.contains("пароль"))
            #expect(!text.contains("123"))
            #expect(text.contains("redacted"))
        }
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("пароль"))
        let parameters: ProviderParameters = ["password": .secret(secret), "user": .string("Leonid")]
        #expect(!parameters.description.contains("пароль"))
        #expect(parameters.description.contains("Leonid"))
    }

    @Test func bytesAndComparison() {
        let secret = Secret("пароль")
        #expect(secret.count == "пароль".utf8.count)
        #expect(secret.withUnsafeBytes { Array($0) } == Array("пароль".utf8))
        #expect(secret.withCString { String(cString: $0) } == "пароль")
        #expect(secret == Secret("пароль"))
        #expect(secret != Secret("пароли"))
        #expect(Secret("").isEmpty)
        #expect(Secret("abc\n").trimmingTrailingNewline() == Secret("abc"))
        #expect(Secret("abc\r\n").trimmingTrailingNewline() == Secret("abc"))
        var source: [UInt8] = Array("wipe me".utf8)
        let wiped = Secret(wiping: &source)
        #expect(source.isEmpty)
        #expect(wiped == Secret("wipe me"))
    }
}
