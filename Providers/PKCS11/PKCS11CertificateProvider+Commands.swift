public import CertificateProviders
import Foundation

extension PKCS11CertificateProvider {
    /// `certsign tokens`: what a PKCS#11 module offers.
    public static var commands: [ProviderCommand] { [tokensCommand] }

    /// Lists the slots, tokens and key/certificate pairs of a module with the `pkcs11:` URI of each key.
    static let tokensCommand = ProviderCommand(
        words: ["tokens"],
        summary: "list PKCS#11 slots, tokens and their key/certificate pairs with pkcs11: URIs",
        discussion: """
            Lists every slot with a token (label, manufacturer, model, serial, flags) and each certificate
            that has a key with the same CKA_ID, with the URI to give to
            'certsign sign DOC --provider pkcs11 --param uri=URI --param-env pin=VAR'. Without a PIN no
            login is made: certificates and public keys are public objects, but a private key without a
            public-key object (as 'pkcs11-tool --write-object' imports one) stays hidden. With
            --pin-env, --pin-file or --pin-stdin the token that needs a login (or the one --token names)
            is logged in to, and its keys are listed too, marking those that ask for the PIN before
            every signature (CKA_ALWAYS_AUTHENTICATE).
            """,
        examples: [
            "certsign tokens --module /usr/lib/softhsm/libsofthsm2.so",
            "certsign tokens --module /usr/lib/softhsm/libsofthsm2.so --token mytoken --pin-env TOKEN_PIN",
        ],
        options: [
            .init(
                "module",
                .value(placeholder: "PATH", type: .file),
                "the PKCS#11 module",
                default: "p11-kit-proxy.so: every module p11-kit knows"
            ),
            .init(
                "token",
                .value(placeholder: "LABEL|URI"),
                "list only this token (its label or a pkcs11: URI); with a PIN, the token it is for"
            ),
            .init(
                "pin",
                .secret(standardInput: true),
                "the token's user PIN (to log in and list private keys without a public-key object)"
            ),
        ]
    ) { invocation in
        let module = invocation.values["module"]
        var token: PKCS11URI?
        if let text = invocation.values["token"] {
            if text.lowercased().hasPrefix("pkcs11:") {
                token = try PKCS11URI(text)
            } else {
                var uri = PKCS11URI()
                uri.token = text
                token = uri
            }
        }
        let inventory = try PKCS11TokenInventory(modulePath: module, token: token, pin: try invocation.secret("pin"))
        return ProviderCommand.Output(
            text: inventory.tokens.isEmpty
                ? "no tokens in the PKCS#11 module"
                : tokenLines(inventory, module: module, dateText: invocation.dateText).joined(separator: "\n"),
            document: TokensDocument(inventory)
        )
    }

    /// The human listing of `certsign tokens`.
    static func tokenLines(
        _ inventory: PKCS11TokenInventory,
        module: String?,
        dateText: (Date) -> String
    ) -> [String] {
        var lines: [String] = []
        for token in inventory.tokens {
            lines.append("slot \(token.slotID) (\(token.slotDescription)): token '\(token.label)'")
            lines.append(
                "  manufacturer: \(token.manufacturer)   model: \(token.model)   serial: \(token.serialNumber)"
            )
            lines.append("  flags: \(token.flags.joined(separator: ", "))\(token.loggedIn ? "   (logged in)" : "")")
            lines.append("  uri: \(token.uri)")
            if token.keys.isEmpty { lines.append("  no certificate with a key on this token") }
            for key in token.keys {
                lines.append(
                    "  key '\(key.label)' \(key.certificate.publicKeyAlgorithm) "
                        + "\(key.certificate.publicKeySize)-bit: \(key.certificate.subject), valid until "
                        + "\(dateText(key.certificate.notValidAfter))"
                        + (key.alwaysAuthenticate ? " [asks for the PIN before each signature]" : "")
                )
                lines.append("    \(key.uri)")
            }
            if token.privateKeysHidden {
                let module = module.map { " --module \($0)" } ?? ""
                lines.append(
                    "  private keys may be hidden: this token shows them only after a login, so a key without a "
                        + "public-key object is not listed; log in to list them: certsign tokens\(module) --token "
                        + "'\(token.label)' --pin-env VAR (or --pin-file PATH, --pin-stdin)"
                )
            }
        }
        return lines
    }
}
