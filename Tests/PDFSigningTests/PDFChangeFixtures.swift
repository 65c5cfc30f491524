import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// pyHanko as the second judge of the change-analysis tests, and the legitimate updates it makes
/// (a certification signature with DocMDP, a FieldMDP-locked signature, a DSS update, a document
/// timestamp).
enum PDFChangeFixtures {
    /// pyHanko's `validate_pdf_signature` status of one signature.
    struct Verdict: Sendable, CustomStringConvertible {
        let field: String
        /// `modification_level` (`NONE`, `LTA_UPDATES`, `FORM_FILLING`, `ANNOTATIONS`, `OTHER`).
        let level: String?
        let docMDPOK: Bool?
        let bottomLine: Bool?
        /// pyHanko refused to validate it (its exception).
        let error: String?
        /// Whether pyHanko accepts what changed after it (`docmdp_ok` not false).
        var changesAcceptable: Bool { error == nil && docMDPOK != false }
        var description: String {
            error.map { "\(field): error \($0)" }
                ?? "\(field): \(level ?? "-") docmdp_ok=\(docMDPOK.map(String.init) ?? "None") "
                + "bottom_line=\(bottomLine.map(String.init) ?? "-")"
        }
    }

    /// pyHanko's verdict on every signature of `path`, with `root` trusted.
    static func pyhankoVerdicts(
        _ path: String,
        root: Certificate,
        in directory: TemporaryDirectory
    ) throws
        -> [Verdict]
    {
        let ca = try directory.write("verdict-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let result = try ExternalTool.run("python3", ["-c", verdictScript, ca, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        let line = result.output.split(separator: "\n").last.map(String.init) ?? "[]"
        let items = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [[String: Any]])
        return items.map {
            Verdict(
                field: $0["field"] as? String ?? "",
                level: $0["level"] as? String,
                docMDPOK: $0["docmdp_ok"] as? Bool,
                bottomLine: $0["bottom_line"] as? Bool,
                error: $0["error"] as? String
            )
        }
    }

    /// The legitimate updates pyHanko makes.
    enum Update: CustomStringConvertible {
        /// A certification signature in field `field` with DocMDP `/P permission`.
        case certify(permission: Int, field: String)
        /// An approval signature in a new field `field` locking form field `locked` (FieldMDP
        /// `/Include`).
        case lock(field: String, locked: String)
        /// A `/DSS` with the signer's certificate, for the first signature.
        case dss
        /// A document timestamp by a local TSA (`certificate`, `key`: PEM files, RSA).
        case timestamp(certificate: String, key: String)

        var description: String {
            switch self {
            case .certify(let permission, let field): return "certify:\(permission):\(field)"
            case .lock(let field, let locked): return "lock:\(field):\(locked)"
            case .dss: return "dss"
            case .timestamp(let certificate, let key): return "timestamp:\(certificate):\(key)"
            }
        }
    }

    /// Applies `update` to `input` with pyHanko, signing (when it signs) with `identity`.
    static func pyhanko(
        _ update: Update,
        _ input: String,
        output: String,
        identity: SigningIdentity,
        in directory: TemporaryDirectory
    ) throws {
        let files = try PDFFixtures.pyhankoFiles(identity, prefix: "update", in: directory)
        let result = try ExternalTool.run(
            "python3",
            ["-c", updateScript, update.description, input, output, files.key, files.certificate, files.chain],
            environment: ["KEY_PASSWORD": PDFFixtures.pyhankoKeyPassword]
        )
        try #require(result.status == 0, "pyHanko \(update): \(result.errorOutput)")
    }

    /// An RSA TSA certificate (critical timeStamping EKU, self-signed) and key, PEM files.
    static func timestampAuthority(in directory: TemporaryDirectory) throws -> (certificate: String, key: String) {
        let certificate = directory.path("tsa-cert.pem")
        let key = directory.path("tsa-key.pem")
        let result = try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "30",
                "-subj", "/CN=Change Test TSA", "-addext", "extendedKeyUsage=critical,timeStamping",
            ]
        )
        try #require(result.status == 0, "openssl: \(result.errorOutput)")
        return (certificate, key)
    }

    private static let verdictScript = #"""
        import sys, json
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.pdf_utils.reader import PdfFileReader
        from pyhanko.sign.validation import validate_pdf_signature
        from pyhanko_certvalidator import ValidationContext
        vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
        with open(sys.argv[2], 'rb') as f:
            out = []
            try:
                reader = PdfFileReader(f, strict=False)
                signatures = reader.embedded_signatures
            except Exception as e:
                # pyHanko refuses the file as a whole (one field for all of it).
                print(json.dumps([{'field': '*', 'error': type(e).__name__ + ': ' + str(e)[:200]}]))
                sys.exit(0)
            for sig in signatures:
                try:
                    status = validate_pdf_signature(sig, vc)
                    level = status.modification_level.name if status.modification_level is not None else None
                    out.append({'field': sig.field_name, 'level': level, 'docmdp_ok': status.docmdp_ok,
                                'bottom_line': status.bottom_line, 'coverage': status.coverage.name})
                except Exception as e:
                    out.append({'field': sig.field_name, 'error': type(e).__name__ + ': ' + str(e)[:200]})
            print(json.dumps(out))
        """#

    private static let updateScript = #"""
        import sys
        from pyhanko.sign import signers, fields, timestamps
        from pyhanko.sign.fields import MDPPerm, SigSeedSubFilter, FieldMDPSpec, FieldMDPAction, SigFieldSpec
        from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
        from pyhanko.pdf_utils.reader import PdfFileReader
        from pyhanko.keys import load_cert_from_pemder, load_private_key_from_pemder
        mode, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
        key, cert = sys.argv[4], sys.argv[5]
        import os
        password = os.environ.get('KEY_PASSWORD')
        signer = signers.SimpleSigner.load(key, cert, ca_chain_files=tuple(sys.argv[6:7]),
                                           key_passphrase=password.encode() if password else None)
        with open(source, 'rb') as f, open(target, 'wb') as out:
            writer = IncrementalPdfFileWriter(f)
            parts = mode.split(':')
            if parts[0] == 'certify':
                meta = signers.PdfSignatureMetadata(field_name=parts[2], subfilter=SigSeedSubFilter.PADES, certify=True,
                                                    docmdp_permissions=MDPPerm(int(parts[1])))
                signers.sign_pdf(writer, meta, signer=signer, output=out)
            elif parts[0] == 'lock':
                fields.append_signature_field(writer, SigFieldSpec(parts[1], field_mdp_spec=FieldMDPSpec(
                    FieldMDPAction.INCLUDE, [parts[2]])))
                meta = signers.PdfSignatureMetadata(field_name=parts[1], subfilter=SigSeedSubFilter.PADES)
                signers.sign_pdf(writer, meta, signer=signer, output=out)
            elif parts[0] == 'dss':
                from pyhanko.sign.validation.dss import DocumentSecurityStore
                reader = PdfFileReader(f)
                sig = reader.embedded_signatures[0]
                DocumentSecurityStore.supply_dss_in_writer(writer, sig.pkcs7_content, certs=[load_cert_from_pemder(cert)])
                writer.write(out)
            elif parts[0] == 'timestamp':
                tsa = timestamps.DummyTimeStamper(tsa_cert=load_cert_from_pemder(parts[1]),
                                                  tsa_key=load_private_key_from_pemder(parts[2], None))
                signers.PdfTimeStamper(tsa).timestamp_pdf(writer, 'sha256', output=out)
            else:
                raise SystemExit('unknown mode ' + mode)
        """#
}
