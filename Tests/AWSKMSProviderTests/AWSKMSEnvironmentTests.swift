import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// What every AWS tool reads, honoured by `certsign sign --provider aws-kms` against moto: the
/// endpoint variables, the region variables, and the shared credentials and config files of
/// `AWS_PROFILE`, with the precedence AWS tools use (parameter, then environment, then files).
@Suite("aws-kms reads AWS_ENDPOINT_URL(_KMS), AWS_REGION and the shared files", .serialized, .enabled(if: CLI.isBuilt))
struct AWSKMSEnvironmentTests {
    /// A HOME with no ~/.aws, so the test runner's own files never count.
    static func emptyHome(_ store: TemporaryDirectory) throws -> String {
        let home = store.path("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return home
    }

    func sign(
        _ moto: MotoKMS,
        _ store: TemporaryDirectory,
        _ parameters: [String],
        _ environment: [String: String]
    )
        throws -> ExternalTool.Result
    {
        let document = try store.write("contract.txt", text: "Договор № 12\n")
        var arguments = [
            "sign", document, "--force", "--provider", "aws-kms", "--param", "keyID=\(moto.keys["p256"]!)",
        ]
        arguments += ["--param", "certificate=\(try moto.certificate(for: "p256"))"]
        for parameter in parameters { arguments += ["--param", parameter] }
        let result = try CLI.run(arguments, store: store, environment: environment)
        if result.succeeded { try moto.expectVerifies(document) }
        return result
    }

    @Test("AWS_ENDPOINT_URL_KMS, then AWS_ENDPOINT_URL, name the endpoint; the endpointURL parameter beats both")
    func endpoints() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let closed = "http://127.0.0.1:9/"
        var environment = [
            "HOME": try Self.emptyHome(store), "AWS_ACCESS_KEY_ID": moto.accessKeyID,
            "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey, "AWS_REGION": moto.region,
            "AWS_ENDPOINT_URL_KMS": moto.url.absoluteString, "AWS_ENDPOINT_URL": closed,
        ]
        let serviceSpecific = try sign(moto, store, [], environment)
        #expect(serviceSpecific.succeeded, "\(serviceSpecific.errorOutput)")
        environment["AWS_ENDPOINT_URL_KMS"] = nil
        environment["AWS_ENDPOINT_URL"] = moto.url.absoluteString
        let general = try sign(moto, store, [], environment)
        #expect(general.succeeded, "\(general.errorOutput)")
        environment["AWS_ENDPOINT_URL_KMS"] = closed
        let explicit = try sign(moto, store, ["endpointURL=\(moto.url.absoluteString)"], environment)
        #expect(explicit.succeeded, "\(explicit.errorOutput)")
    }

    @Test("AWS_PROFILE: credentials from the shared credentials file, region from the config file; AWS_* beat them")
    func profiles() throws {
        let moto = try MotoKMS()
        let store = try TemporaryDirectory()
        let credentials = try store.write(
            "credentials",
            text: """
                [default]
                aws_access_key_id = AKIADEFAULTWRONG
                aws_secret_access_key = wrong-default-secret

                # the profile the test uses
                [work]
                aws_access_key_id = \(moto.accessKeyID)
                aws_secret_access_key = \(moto.secretAccessKey)

                """
        )
        let config = try store.write("config", text: "[profile work]\nregion = \(moto.region)\n")
        var environment = [
            "HOME": try Self.emptyHome(store), "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_CONFIG_FILE": config,
            "AWS_PROFILE": "work", "AWS_ENDPOINT_URL_KMS": moto.url.absoluteString,
        ]
        let fromFiles = try sign(moto, store, [], environment)
        #expect(fromFiles.succeeded, "\(fromFiles.errorOutput)")
        #expect(!(fromFiles.output + fromFiles.errorOutput).contains(moto.secretAccessKey))

        // The default profile's wrong keys lose to the environment's right ones.
        environment["AWS_PROFILE"] = nil
        environment["AWS_ACCESS_KEY_ID"] = moto.accessKeyID
        environment["AWS_SECRET_ACCESS_KEY"] = moto.secretAccessKey
        let fromEnvironment = try sign(moto, store, ["region=\(moto.region)"], environment)
        #expect(fromEnvironment.succeeded, "\(fromEnvironment.errorOutput)")

        environment["AWS_PROFILE"] = "absent"
        let missing = try sign(moto, store, ["region=\(moto.region)"], environment)
        #expect(missing.status == 1)
        #expect(missing.errorOutput.contains("AWS_PROFILE names the profile 'absent'"), "\(missing.errorOutput)")
    }
}
