import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite struct IdentityCommandTests {
    @Test func importListShowExportDelete() throws {
        let fixture = try CLIFixture()
        let secretEnv = ["P12_PASSWORD": fixture.password]
        let imported = try fixture.run(
            [
                "--json", "identity", "import", fixture.p12Path, "--alias", "подписант", "--password-env",
                "P12_PASSWORD",
            ],
            environment: secretEnv
        )
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let importedJSON = try #require(try CLI.json(imported)["imported"] as? [String: Any])
        #expect(importedJSON["alias"] as? String == "подписант")
        #expect(importedJSON["subject"] as? String == "CN=Подписант CLI,O=ООО Ромашка")
        #expect(importedJSON["chain"] as? [String] == ["CN=CLI Test Root,O=Тест"])

        // A second import under the same alias is refused; --replace-identity replaces.
        let again = try fixture.run(
            ["identity", "import", fixture.p12Path, "--alias", "подписант", "--password-env", "P12_PASSWORD"],
            environment: secretEnv
        )
        #expect(again.status == 1)
        #expect(again.errorOutput.contains("подписант"))
        #expect(
            try fixture.run(
                [
                    "identity", "import", fixture.p12Path, "--alias", "подписант", "--replace-identity",
                    "--password-env",
                    "P12_PASSWORD",
                ],
                environment: secretEnv
            ).status == 0
        )

        let list = try fixture.run(["--json", "identity", "list"])
        #expect(list.status == 0)
        let identities = try #require(try CLI.json(list)["identities"] as? [[String: Any]])
        #expect(identities.count == 1)
        for field in [
            "alias", "subject", "issuer", "serialNumber", "notValidBefore", "notValidAfter", "sha256Fingerprint",
            "keyAlgorithm", "keySize", "chainLength", "importedAt",
        ] {
            #expect(identities[0][field] != nil, "identity list lacks \(field)")
        }
        #expect(identities[0]["sha256Fingerprint"] as? String == fixture.signer.certificate.sha256FingerprintHex)
        let human = try fixture.run(["identity", "list"])
        #expect(human.output.contains("CN=Подписант CLI,O=ООО Ромашка"))
        #expect(human.output.contains("ALIAS"))

        let show = try fixture.run(["--json", "identity", "show", "подписант"])
        #expect((try CLI.json(show)["identity"] as? [String: Any])?["keyAlgorithm"] as? String == "EC P-256")
        #expect(try fixture.run(["identity", "show", "nobody"]).status == 1)

        // Export with the password from a file; openssl opens the result.
        let passwordFile = try fixture.directory.write("pass.txt", text: fixture.password + "\n")
        let exported = fixture.directory.path("exported.p12")
        let export = try fixture.run([
            "identity", "export", "подписант", "--out", exported, "--password-file", passwordFile,
        ])
        #expect(export.status == 0, "\(export.errorOutput)")
        let opened = try ExternalTool.run(
            "openssl",
            ["pkcs12", "-in", exported, "-noout", "-passin", "env:P"],
            environment: ["P": fixture.password]
        )
        #expect(opened.succeeded, "\(opened.errorOutput)")
        // Exporting over an existing file is refused.
        #expect(
            try fixture.run(["identity", "export", "подписант", "--out", exported, "--password-file", passwordFile])
                .status == 1
        )
        #expect(try fixture.run(["identity", "export", "подписант", "--password-file", passwordFile]).status == 64)
        // A relative --out is reported as the absolute path it was written to.
        let relative = try CLI.run(
            ["identity", "export", "подписант", "--out", "relative.p12", "--password-file", passwordFile],
            store: fixture.store,
            directory: fixture.directory.url
        )
        #expect(relative.status == 0, "\(relative.errorOutput)")
        let absolute = fixture.directory.url.appendingPathComponent("relative.p12").standardizedFileURL.path
        #expect(relative.output.contains("to \(absolute)"), "\(relative.output)")

        #expect(try fixture.run(["identity", "delete", "подписант"]).status == 0)
        let deletedAgain = try fixture.run(["identity", "delete", "подписант"])
        #expect(deletedAgain.status == 1)
        #expect(deletedAgain.errorOutput.contains("identity list"))
    }

    @Test func storeFilesArePrivate() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.importIdentity(alias: "a"))
        let identities = fixture.store.url.appendingPathComponent("identities").path
        let mode = (try FileManager.default.attributesOfItem(atPath: identities)[.posixPermissions] as? NSNumber)?
            .intValue
        #expect(mode == 0o700)
    }
}

@Suite struct SignCommandTests {
    @Test func signWithStoredIdentityAndVerify() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        #expect(try fixture.importIdentity(alias: "ivanov"))
        let invoice = try fixture.document("счёт.txt", "Счёт № 1\n")
        let signed = try fixture.run(
            ["--json", "sign", invoice, "--identity", "ivanov", "--password-stdin"],
            input: fixture.password + "\n"
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let signedJSON = try CLI.json(signed)
        #expect(signedJSON["signed"] as? Int == 1)
        let result = try #require((signedJSON["results"] as? [[String: Any]])?.first)
        #expect(result["signature"] as? String == invoice + ".p7s")
        #expect(result["format"] as? String == "cades")
        #expect(result["detached"] as? Bool == true)
        #expect(try fixture.opensslVerifies(invoice + ".p7s", content: invoice))

        // certsign verify: good, tampered, wrong CA; each with the right exit code and reason.
        let good = try fixture.run(["--json", "verify", invoice + ".p7s", "--ca", fixture.rootPath])
        #expect(good.status == 0, "\(good.output) \(good.errorOutput)")
        let goodJSON = try CLI.json(good)
        #expect(goodJSON["valid"] as? Bool == true)
        #expect(goodJSON["chainChecked"] as? Bool == true)
        #expect((goodJSON["signer"] as? [String: Any])?["subject"] as? String == "CN=Подписант CLI,O=ООО Ромашка")
        #expect(goodJSON["format"] as? String == "cades")
        #expect(goodJSON["signingTime"] as? String != nil)

        let tampered = try fixture.document("tampered.txt", "Счёт № 2\n")
        let changed = try fixture.run([
            "--json", "verify", invoice + ".p7s", "--content", tampered, "--ca", fixture.rootPath,
        ])
        #expect(changed.status == 1)
        #expect((try CLI.json(changed)["failure"] as? [String: Any])?["code"] as? String == "contentChanged")

        let otherCA = try fixture.directory.write("other.pem", text: try TestPKI().root.certificate.pemRepresentation)
        // Not proven bad, but not trusted either: INDETERMINATE, exit 2.
        let untrusted = try fixture.run(["verify", invoice + ".p7s", "--ca", otherCA])
        #expect(untrusted.status == 2)
        #expect(untrusted.output.hasPrefix("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — "), "\(untrusted.output)")
        #expect(!untrusted.output.contains("--no-chain-check"), "\(untrusted.output)")

        // The signature and document verify; who signed is not checked: INDETERMINATE, exit 2.
        let signatureOnly = try fixture.run(["verify", invoice + ".p7s", "--no-chain-check"])
        #expect(signatureOnly.status == 2)
        #expect(
            signatureOnly.output.hasPrefix("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — ")
                && signatureOnly.output.contains("(--no-chain-check)"),
            "\(signatureOnly.output)"
        )
        // No anchor option: the system's roots, which do not hold the fixture's CA.
        let systemTrust = try fixture.run(["verify", invoice + ".p7s"])
        #expect(
            systemTrust.status == 2 && systemTrust.output.hasPrefix("INDETERMINATE: NO_CERTIFICATE_CHAIN_FOUND — "),
            "\(systemTrust.output)"
        )

        // The journal lists it; remove takes it out.
        let list = try CLI.json(try fixture.run(["--json", "signatures", "list"]))
        let entries = try #require(list["signatures"] as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = entries[0]
        #expect(entry["document"] as? String == "счёт.txt")
        #expect(entry["location"] as? String == "journal")
        #expect(entry["signatureFile"] as? String == invoice + ".p7s")
        let id = try #require(entry["id"] as? String)
        #expect(try fixture.run(["signatures", "remove", id]).status == 0)
        #expect(try fixture.run(["signatures", "remove", id]).status == 1)
        #expect(
            (try CLI.json(try fixture.run(["--json", "signatures", "list"]))["signatures"] as? [Any])?.isEmpty == true
        )
    }

    @Test func signWithP12FileAndFormats() throws {
        let fixture = try CLIFixture()
        let passwordFile = try fixture.directory.write("p12.pass", text: fixture.password)
        let document = try fixture.document("report.xml", "<report>данные</report>\n")
        let outDir = try TemporaryDirectory()
        let attached = try fixture.run([
            "sign", document, "--p12", fixture.p12Path, "--password-file", passwordFile,
            "--attached", "--format", "cms", "--digest", "sha512", "--out-dir", outDir.url.path,
        ])
        #expect(attached.status == 0, "\(attached.errorOutput)")
        let output = outDir.path("report.xml.p7s")
        #expect(try fixture.opensslVerifies(output, content: nil, cades: false))
        let explicit = fixture.directory.path("explicit.sig")
        #expect(
            try fixture.run([
                "sign", document, "--p12", fixture.p12Path, "--password-file", passwordFile, "--out", explicit,
            ]).status == 0
        )
        #expect(try fixture.opensslVerifies(explicit, content: document))
        // --p12 leaves nothing in the user's store.
        #expect(
            (try CLI.json(try fixture.run(["--json", "identity", "list"]))["identities"] as? [Any])?.isEmpty == true
        )
    }

    @Test func batchKeepsGoingPastAFailingDocument() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.importIdentity(alias: "batch"))
        let first = try fixture.document("one.txt", "1")
        let third = try fixture.document("three.txt", "3")
        let missing = fixture.directory.path("two.txt")
        let result = try fixture.run(
            ["--json", "sign", first, missing, third, "--identity", "batch", "--password-env", "P"],
            environment: ["P": fixture.password]
        )
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("two.txt"))
        let json = try CLI.json(result)
        #expect(json["signed"] as? Int == 2)
        #expect(json["failed"] as? Int == 1)
        #expect(try fixture.opensslVerifies(first + ".p7s", content: first))
        #expect(try fixture.opensslVerifies(third + ".p7s", content: third))
        #expect(!FileManager.default.fileExists(atPath: missing + ".p7s"))
    }
}

@Suite struct BadInputTests {
    @Test func failuresHaveClearMessagesAndExitCodes() throws {
        let fixture = try CLIFixture()
        let env = ["P": fixture.password]
        func expectFailure(_ arguments: [String], _ status: Int32, _ fragment: String, input: String? = nil) throws {
            let result = try fixture.run(arguments, environment: env, input: input)
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(
                result.errorOutput.lowercased().contains(fragment.lowercased()),
                "\(arguments): \(result.errorOutput)"
            )
            #expect(result.errorOutput.split(separator: "\n").count <= 3, "too long: \(result.errorOutput)")
        }
        try expectFailure(
            ["identity", "import", fixture.directory.path("absent.p12"), "--password-env", "P"],
            1,
            "does not exist"
        )
        try expectFailure(
            ["identity", "import", fixture.directory.url.path, "--password-env", "P"],
            1,
            "is a directory"
        )
        let unreadable = fixture.directory.path("unreadable.p12")
        if geteuid() == 0 {
            // root reads any file regardless of its mode: a symlink loop is a file nobody can open.
            try FileManager.default.createSymbolicLink(atPath: unreadable, withDestinationPath: unreadable)
        } else {
            try fixture.directory.write("unreadable.p12", [1, 2, 3])
            chmod(unreadable, 0)
        }
        try expectFailure(["identity", "import", unreadable, "--password-env", "P"], 1, "cannot be read")
        let corrupt = try fixture.directory.write(
            "corrupt.p12",
            Array(try fixture.directory.read("signer.p12").prefix(300))
        )
        try expectFailure(["identity", "import", corrupt, "--password-env", "P"], 1, "error")
        try expectFailure(["identity", "import", fixture.p12Path, "--password-stdin"], 1, "password", input: "wrong")
        try expectFailure(["sign", fixture.p12Path, "--provider", "no.such.provider"], 1, "no provider is registered")
        try expectFailure(
            ["sign", fixture.p12Path, "--provider", "cryptopro-dss", "--param", "novalue"],
            64,
            "KEY=VALUE"
        )
        try expectFailure(["sign", fixture.p12Path, "--provider", "cryptopro-dss", "--param", "pin=123"], 64, "secret")
        try expectFailure(["sign", fixture.p12Path], 64, "--identity")
        try expectFailure(["sign", "--identity", "x"], 64, "missing argument")
        try expectFailure(["sign", fixture.p12Path, "--identity", "nobody", "--password-env", "P"], 1, "no identity")
        try expectFailure(
            ["identity", "import", fixture.p12Path, "--password-env", "UNSET_VARIABLE_FOR_TEST"],
            1,
            "is not set"
        )
        try expectFailure(["identity", "import", fixture.p12Path], 1, "password")
        let garbage = try fixture.run(["verify", corrupt, "--no-chain-check"])
        #expect(garbage.status == 1)
        #expect(garbage.output.hasPrefix("FAILED: FORMAT_FAILURE — "), "\(garbage.output)")
    }
}
