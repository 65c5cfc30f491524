import BuiltInProviders
import CertificateProviders
import Foundation
import TestSupport
import Testing

@testable import CertSignCLI

/// The commands providers add (`BuiltInProvider.commands`) are `certsign` commands like the others:
/// found by their words, with every option they declare (a secret as its three sources, parameters as
/// `--param…`), and run through the tool's parser.
@Suite struct ProviderCommandTests {
    @Test("every provider command is a certsign command with the options it declares")
    func providerCommandsAreCommands() throws {
        let commands = BuiltInProviders.all.flatMap { $0.commands }
        #expect(!commands.isEmpty)
        for command in commands {
            let (descriptor, length) = try #require(Commands.find(command.words), "\(command.words)")
            #expect(length == command.words.count && descriptor.summary == command.summary)
            let names = Set(descriptor.options.map(\.name))
            for option in command.options {
                switch option.kind {
                case .secret(let standardInput):
                    #expect(names.isSuperset(of: ["env", "file"].map { "--\(option.name)-\($0)" }))
                    #expect(names.contains("--\(option.name)-stdin") == standardInput)
                case .value, .flag:
                    #expect(names.contains("--\(option.name)"), "\(command.words): --\(option.name)")
                }
            }
            #expect(names.contains("--param") == command.takesParameters)
            #expect(Commands.listing(Commands.all).contains(command.summary))
        }
    }

    @Test("the dss commands are FMP DSS's: declared by the provider, bridged with the same options and usage")
    func dssCommandsComeFromTheProvider() throws {
        let fmp = try #require(BuiltInProviders.all.first { $0.commandGroup == "dss" })
        #expect(
            fmp.commands.map(\.words) == [
                ["dss", "login"], ["dss", "certificates"], ["dss", "sign"], ["dss", "signs"], ["dss", "remove"],
            ]
        )
        let remove = try #require(Commands.find(["dss", "remove"])?.0)
        #expect(remove.usage.contains("certsign dss remove ID"), "\(remove.usage)")
        #expect(remove.storeUse == .reads)
        let certificates = try #require(Commands.find(["dss", "certificates"])?.0)
        // The DSS password has no --dss-password-stdin: the declared secret says so.
        #expect(Set(certificates.options.map(\.name)) == ["--dss-password-env", "--dss-password-file"])
        let login = try #require(Commands.find(["dss", "login"])?.0)
        #expect(login.options.filter(\.isRequired).map(\.name) == ["--host", "--environment", "--project", "--user"])
    }

    @Test("identity … and sign --identity/--p12 are the PKCS#12 provider's commands and key sources")
    func identityStoreComesFromTheProvider() throws {
        let pkcs12 = try #require(BuiltInProviders.all.first { !$0.keySources.isEmpty })
        #expect(
            pkcs12.commands.map(\.words) == [
                ["identity", "import"], ["identity", "list"], ["identity", "show"], ["identity", "delete"],
                ["identity", "export"],
            ]
        )
        #expect(pkcs12.keySources.map(\.name) == ["identity", "p12"])
        // sign lists each key source beside --provider, as alternatives of one group.
        let keyOptions = Commands.sign.options.filter { $0.group == "key" }
        #expect(keyOptions.map(\.name) == ["--identity", "--p12", "--provider"])
        #expect(
            Commands.sign.usage.contains("[--identity ALIAS | --p12 FILE | --provider ID]"),
            "\(Commands.sign.usage)"
        )
        // What --provider ID --param file=… would store is the provider's answer, not a branch of the tool.
        let store = try TemporaryDirectory()
        let context = ProviderContext(storeDirectory: store.url)
        #expect(try pkcs12.provisioning(for: ["file": .string("a.p12")], context: context)?.replacesEntry == false)
        #expect(
            try pkcs12.provisioning(for: ["file": .string("a.p12"), "inMemory": .boolean(true)], context: context)
                == nil
        )
        #expect(try pkcs12.provisioning(for: [:], context: context) == nil)
    }

    @Test("a provider command's usage error exits 64 with its usage line; a secret on the command line is refused")
    func usageErrors() throws {
        let store = try TemporaryDirectory()
        let missing = try CLI.run(["csc", "credentials", "--param", "url=https://127.0.0.1:1"], store: store)
        #expect(missing.status == 64)
        #expect(missing.errorOutput.contains("--param url=… and --param clientID=… are required"))
        #expect(missing.errorOutput.contains("certsign csc credentials"))
        let unknown = try CLI.run(["csc", "credentials", "--colour", "red"], store: store)
        #expect(unknown.status == 64 && unknown.errorOutput.contains("unknown option --colour"))
    }
}
