import CertificateProviders
import Foundation
import PKCS11Provider

/// `certsign tokens`: what a PKCS#11 module offers, with the `pkcs11:` URI of each key to sign with.
extension Commands {
    static let tokenCommands: [CommandDescriptor] = [tokens]

    /// `certsign tokens [--module PATH] [--token LABEL|URI] [--pin-env VAR | --pin-file PATH | --pin-stdin]`.
    struct TokensOptions: CommandOptions {
        var module: String?
        var token: PKCS11URI?
        var pin = SecretInput()

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.module,
                    "--module",
                    "PATH",
                    "the PKCS#11 module",
                    type: .file,
                    default: "p11-kit-proxy.so: every module p11-kit knows"
                ),
                .value(
                    \.token,
                    "--token",
                    "LABEL|URI",
                    "list only this token (its label or a pkcs11: URI); with a PIN, the token it is for"
                ) { text in
                    if text.lowercased().hasPrefix("pkcs11:") { return try PKCS11URI(text) }
                    var uri = PKCS11URI()
                    uri.token = text
                    return uri
                },
            ]
            options += .secretSources(
                \.pin,
                "pin",
                "the token's user PIN (to log in and list private keys without a public-key object)",
                standardInput: true
            )
            return options
        }
    }

    static let tokens = CommandDescriptor(
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
        ]
    ) { (options: TokensOptions, context) in
        let pin = try context.optionalSecret(options.pin)
        let inventory = try PKCS11TokenInventory(modulePath: options.module, token: options.token, pin: pin)
        context.emit(
            encoding: TokensDocument(inventory),
            human: inventory.tokens.isEmpty
                ? "no tokens in the PKCS#11 module" : tokenLines(inventory, options: options).joined(separator: "\n")
        )
        return CertSign.exitSuccess
    }

    /// The human listing of `certsign tokens`.
    private static func tokenLines(_ inventory: PKCS11TokenInventory, options: TokensOptions) -> [String] {
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
                        + "\(Format.localDate(key.certificate.notValidAfter))"
                        + (key.alwaysAuthenticate ? " [asks for the PIN before each signature]" : "")
                )
                lines.append("    \(key.uri)")
            }
            if token.privateKeysHidden {
                let module = options.module.map { " --module \($0)" } ?? ""
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

extension TokensDocument {
    /// The `--json` document of a token listing.
    init(_ inventory: PKCS11TokenInventory) {
        tokens = inventory.tokens.map { token in
            Token(
                slot: token.slotID,
                slotDescription: token.slotDescription,
                label: token.label,
                manufacturer: token.manufacturer,
                model: token.model,
                serialNumber: token.serialNumber,
                flags: token.flags,
                loggedIn: token.loggedIn,
                privateKeysHidden: token.privateKeysHidden,
                uri: token.uri,
                keys: token.keys.map { key in
                    Key(
                        label: key.label,
                        id: Format.hex(key.id),
                        subject: key.certificate.subject,
                        notValidAfter: Format.isoDate(key.certificate.notValidAfter),
                        keyAlgorithm: key.certificate.publicKeyAlgorithm.rawValue,
                        privateKeyVisible: key.privateKeyVisible,
                        alwaysAuthenticate: key.alwaysAuthenticate,
                        uri: key.uri
                    )
                }
            )
        }
    }
}
