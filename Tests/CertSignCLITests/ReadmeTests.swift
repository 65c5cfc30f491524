import CSCProvider
import Foundation
import PKCS11Provider
import PKCS12Provider
import TestSupport
import Testing

@testable import CertSignCLI

/// The documents cannot drift from the tool: the usage lines and options of docs/CLI.md, and the JSON
/// field names of docs/JSON.md, are compared with the command declarations and the `Encodable` types.
@Suite struct ReadmeTests {
    /// The package root (the directory holding Package.swift).
    static let root: URL = PackageRoot.url

    /// A document of the package by its path from the root ("" when it cannot be read).
    static func document(_ path: String) -> String {
        (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
    }

    static let readme = document("README.md")

    /// The `--json` reference, moved out of the README.
    static let json = document("docs/JSON.md")

    /// The command reference (every usage line), moved out of the README.
    static let commandReference = document("docs/CLI.md")

    /// The focused documents the README links to, by path from the root (`docs/….md`), sorted.
    static func docs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func usageLinesAreTheGeneratedOnes() throws {
        let reference = Self.commandReference
        let start = try #require(reference.range(of: "\n```\n"), "docs/CLI.md has no usage block")
        let end = try #require(reference.range(of: "```", range: start.upperBound..<reference.endIndex))
        // The first line is the global options' one, as the README shows it.
        let lines = reference[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
        #expect(lines.first.map(Self.readme.contains) == true, "the README shows the first line of docs/CLI.md")
        let documented = Set(lines.dropFirst())
        let generated = Set(Commands.all.map(\.usage))
        #expect(
            documented == generated,
            "docs/CLI.md: \(documented.subtracting(generated)); tool: \(generated.subtracting(documented))"
        )
        #expect(Self.readme.contains("](docs/CLI.md)"))
    }

    @Test func everyOptionInHelpIsInTheCommandReference() {
        for command in Commands.all {
            for option in command.options {
                #expect(
                    Self.commandReference.contains(option.name),
                    "\(command.name) \(option.name) is not in docs/CLI.md"
                )
            }
        }
        for option in Invocation.globalOptions { #expect(Self.readme.contains(option.name)) }
    }

    /// The quoted field names of one row of the "JSON output" table (docs/JSON.md) (values such as `"ok"` are left out).
    static func documentedFields(_ row: String) -> Set<String> {
        var names: Set<String> = []
        let characters = Array(row)
        var index = 0
        while index < characters.count {
            guard characters[index] == "\"" else {
                index += 1
                continue
            }
            guard let close = characters[(index + 1)...].firstIndex(of: "\"") else { break }
            let name = String(characters[(index + 1)..<close])
            let before = String(characters[max(0, index - 2)..<index])
            let isValue = before.hasSuffix(": ") || before.hasSuffix("|")
            if !isValue, name.allSatisfy({ $0.isLetter || $0.isNumber }) { names.insert(name) }
            index = close + 1
        }
        return names
    }

    static func keys<Keys: CodingKey & CaseIterable>(_: Keys.Type) -> Set<String> {
        Set(Keys.allCases.map(\.stringValue))
    }

    @Test func jsonTableMatchesTheEncoders() throws {
        let table = try #require(Self.json.range(of: "| command | document |"))
        let rows = Self.json[table.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("|") }
            .map(String.init)
        func row(_ command: String) throws -> Set<String> {
            let line = try #require(rows.first { $0.hasPrefix("| `\(command)`") }, "no docs/JSON.md row for \(command)")
            return Self.documentedFields(line)
        }
        let signature = Self.keys(SignResultDocument.CodingKeys.self)
            .union(Self.keys(AddedTimestampDocument.CodingKeys.self))
        let expectations: [(String, Set<String>)] = [
            (
                "sessions list",
                Self.keys(SessionsDocument.CodingKeys.self).union(Self.keys(SessionsDocument.Session.CodingKeys.self))
            ),
            ("sessions clear", Self.keys(SessionsClearedDocument.CodingKeys.self)),
            (
                "providers",
                Self.keys(ProvidersDocument.CodingKeys.self).union(
                    Self.keys(ProvidersDocument.Provider.CodingKeys.self)
                )
            ),
            (
                "providers --params ID",
                Self.keys(ProviderParametersDocument.CodingKeys.self)
                    .union(Self.keys(ProviderParametersDocument.Parameter.CodingKeys.self))
            ),
            ("identity import", ["imported", "chain"]),
            (
                "identity list",
                Self.keys(IdentityDocument.CodingKeys.self).subtracting(["chain"]).union(["identities", "identity"])
            ),
            (
                "identity delete",
                Set(["deleted", "exported"]).union(Self.keys(IdentityCommandDocument.Exported.CodingKeys.self))
            ),
            ("sign", Self.keys(SignDocument.CodingKeys.self).union(signature)),
            ("prepare", Self.keys(PrepareDocument.CodingKeys.self).union(Self.keys(PreparedDocument.CodingKeys.self))),
            (
                "complete",
                Self.keys(CompleteDocument.CodingKeys.self).union(Self.keys(CompletedDocument.CodingKeys.self))
            ),
            (
                "pending list`, `pending show ID",
                Self.keys(PendingListDocument.CodingKeys.self).union(Self.keys(PendingEntryDocument.CodingKeys.self))
                    .union(Self.keys(PendingListDocument.Unreadable.CodingKeys.self))
            ),
            ("pending cancel ID", Self.keys(PendingCancelDocument.CodingKeys.self)),
            ("pending resume ID", Self.keys(CompletedDocument.CodingKeys.self).subtracting(["error", "code"])),
            (
                "pending list --journal URL`, `pending show ID --journal URL`, `pending cancel ID --journal URL",
                Self.keys(QueueListDocument.CodingKeys.self).union(Self.keys(QueueItemDocument.CodingKeys.self))
            ),
            ("worker", Self.keys(WorkerSummaryDocument.CodingKeys.self)),
            (
                "sign --no-wait",
                Self.keys(ApprovalOperationsDocument.CodingKeys.self).union(
                    Self.keys(ApprovalOperationDocument.CodingKeys.self)
                )
            ),
            (
                "timestamp",
                Self.keys(TimestampDocument.CodingKeys.self).union(Self.keys(TimestampResultDocument.CodingKeys.self))
                    .union(Self.keys(AddedTimestampDocument.CodingKeys.self))
            ),
            (
                "extend",
                Self.keys(ExtendDocument.CodingKeys.self).union(Self.keys(ExtendResultDocument.CodingKeys.self))
                    .union(Self.keys(AddedTimestampDocument.CodingKeys.self))
            ),
            (
                "verify",
                Self.keys(VerificationDocument.CodingKeys.self).union(Self.keys(SignerDocument.CodingKeys.self))
                    .union(Self.keys(SignerCertificateDocument.CodingKeys.self))
                    .union(Self.keys(SignerTimestampDocument.CodingKeys.self))
                    .union(Self.keys(RevocationDocument.CodingKeys.self))
                    .union(Self.keys(CertificateRevocationDocument.CodingKeys.self))
                    .union(Self.keys(FailureDocument.CodingKeys.self))
                    .union(Self.keys(QualificationDocument.CodingKeys.self))
                    .union(Self.keys(TrustServiceReferenceDocument.CodingKeys.self))
            ),
            (
                "trust show",
                Self.keys(TrustShowDocument.CodingKeys.self).union(Self.keys(TrustedListDocument.CodingKeys.self))
                    .union(Self.keys(TrustedListPointerDocument.CodingKeys.self))
                    .union(Self.keys(TrustServiceDocument.CodingKeys.self))
                    .union(Self.keys(TrustServicePeriodDocument.CodingKeys.self))
            ),
            (
                "trust refresh",
                Self.keys(TrustRefreshDocument.CodingKeys.self).union(
                    Self.keys(TrustRefreshDocument.Entry.CodingKeys.self)
                )
            ),
            (
                "verify SIGNATURE SIGNATURE…",
                Self.keys(VerifyManyDocument.CodingKeys.self).union(Self.keys(VerifyFailedDocument.CodingKeys.self))
            ),
            (
                "verify FILE.pdf",
                Self.keys(PDFVerificationDocument.CodingKeys.self).union(
                    Self.keys(PDFSignatureDocument.CodingKeys.self)
                )
                .union(Self.keys(PDFPlacementDocument.CodingKeys.self))
                .union(Self.keys(PDFChangeDocument.CodingKeys.self))
            ),
            (
                "signatures list",
                Self.keys(SignaturesDocument.CodingKeys.self).subtracting(["removed"]).union(
                    Self.keys(SignatureEntryDocument.CodingKeys.self)
                )
            ),
            ("signatures remove", Set(["removed"]).union(Self.keys(SignaturesDocument.Removed.CodingKeys.self))),
            ("journal verify", Self.keys(JournalVerifyDocument.CodingKeys.self)),
            ("journal head", Self.keys(JournalHeadDocument.CodingKeys.self)),
            ("emulator wait FILE", Self.keys(EmulatorReadyDocument.CodingKeys.self)),
            ("emulator approve ID`, `emulator decline ID", Self.keys(EmulatorDecision.CodingKeys.self)),
            ("journal migrate --to URL", Self.keys(JournalMigrateDocument.CodingKeys.self)),
            (
                "tokens",
                Self.keys(TokensDocument.CodingKeys.self).union(Self.keys(TokensDocument.Token.CodingKeys.self))
                    .union(Self.keys(TokensDocument.Key.CodingKeys.self))
            ),
            (
                "csc credentials",
                Self.keys(CredentialsDocument.CodingKeys.self).union(
                    Self.keys(CredentialsDocument.Credential.CodingKeys.self)
                )
            ),
            ("emulator", Self.keys(EmulatorDocument.CodingKeys.self)),
            ("--version", Self.keys(VersionDocument.CodingKeys.self)),
        ]
        for (command, expected) in expectations {
            let documented = try row(command)
            #expect(
                documented == expected,
                "\(command): docs/JSON.md only \(documented.subtracting(expected)), encoder only \(expected.subtracting(documented))"
            )
        }
        let failure = try #require(rows.first { $0.hasPrefix("| any failure") })
        #expect(
            Self.documentedFields(failure)
                == Self.keys(ErrorDocument.CodingKeys.self).union(Self.keys(ErrorDocument.Body.CodingKeys.self))
        )
    }

    /// One version everywhere an adopter looks: `certsign --version`, the changelog's newest entry and
    /// the README; and a licence file.
    @Test func versionAndLicenceAreStated() throws {
        let root = Self.root
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        // "## Unreleased" collects what main has that the last release has not.
        let newest = try #require(
            changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" }
        )
        #expect(newest.hasPrefix("## \(CertSign.version) "), "CHANGELOG's newest entry is '\(newest)'")
        #expect(Self.readme.contains("Version \(CertSign.version), Apache-2.0"))
        #expect(Self.readme.contains("from: \"\(CertSign.version)\""))
        let licence = try String(contentsOf: root.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
    }

    /// The README's product table ("Adding the package") names every library product Package.swift
    /// declares, and no other.
    @Test func productTableMatchesPackageSwift() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declared = Set(
            manifest.matches(of: /\.library\(name: "(\w+)"/).map { String($0.output.1) }
        )
        let start = try #require(Self.readme.range(of: "| product | what it gives | C libraries |"))
        let table = Self.readme[start.upperBound...].split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }
        let listed = Set(
            table.flatMap { row in
                row.split(separator: "|").first.map { cell in
                    cell.matches(of: /`(\w+)`/).map { String($0.output.1) }
                } ?? []
            }
        )
        #expect(!declared.isEmpty)
        #expect(
            listed == declared,
            "missing: \(declared.subtracting(listed).sorted()), extra: \(listed.subtracting(declared).sorted())"
        )
    }
}
