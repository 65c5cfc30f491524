import CertificateProviders
import Foundation
import PKCS11Provider

/// `certsign tokens`: what a PKCS#11 module offers, with the `pkcs11:` URI of each key to sign with.
extension Commands {
    static let tokenCommands: [CommandDescriptor] = [tokens]

    /// `certsign tokens [--module PATH]`.
    struct TokensOptions: CommandOptions {
        var module: String?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.module,
                    "--module",
                    "PATH",
                    "the PKCS#11 module",
                    type: .file,
                    default: "p11-kit-proxy.so: every module p11-kit knows"
                )
            ]
        }
    }

    static let tokens = CommandDescriptor(
        words: ["tokens"],
        summary: "list PKCS#11 slots, tokens and their key/certificate pairs with pkcs11: URIs",
        discussion: """
            Lists every slot with a token (label, manufacturer, model, serial, flags) and each certificate
            that has a key with the same CKA_ID, with the URI to give to
            'certsign sign DOC --provider pkcs11 --param uri=URI --param-env pin=VAR'. No login is made:
            certificates and public keys are public objects.
            """,
        examples: ["certsign tokens --module /usr/lib/softhsm/libsofthsm2.so"]
    ) { (options: TokensOptions, context) in
        let inventory = try PKCS11TokenInventory(modulePath: options.module)
        let json = inventory.tokens.map { token in
            TokensDocument.Token(
                slot: token.slotID,
                slotDescription: token.slotDescription,
                label: token.label,
                manufacturer: token.manufacturer,
                model: token.model,
                serialNumber: token.serialNumber,
                flags: token.flags,
                uri: token.uri,
                keys: token.keys.map { key in
                    TokensDocument.Key(
                        label: key.label,
                        id: Format.hex(key.id),
                        subject: key.certificate.subject,
                        notValidAfter: Format.isoDate(key.certificate.notValidAfter),
                        keyAlgorithm: key.certificate.publicKeyAlgorithm.rawValue,
                        privateKeyVisible: key.privateKeyVisible,
                        uri: key.uri
                    )
                }
            )
        }
        var lines: [String] = []
        for token in inventory.tokens {
            lines.append("slot \(token.slotID) (\(token.slotDescription)): token '\(token.label)'")
            lines.append(
                "  manufacturer: \(token.manufacturer)   model: \(token.model)   serial: \(token.serialNumber)"
            )
            lines.append("  flags: \(token.flags.joined(separator: ", "))")
            lines.append("  uri: \(token.uri)")
            if token.keys.isEmpty { lines.append("  no certificate with a key on this token") }
            for key in token.keys {
                lines.append(
                    "  key '\(key.label)' \(key.certificate.publicKeyAlgorithm) "
                        + "\(key.certificate.publicKeySize)-bit: \(key.certificate.subject), valid until "
                        + "\(Format.localDate(key.certificate.notValidAfter))"
                )
                lines.append("    \(key.uri)")
            }
        }
        context.emit(
            encoding: TokensDocument(tokens: json),
            human: lines.isEmpty ? "no tokens in the PKCS#11 module" : lines.joined(separator: "\n")
        )
        return CertSign.exitSuccess
    }
}
