import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import RemoteProviderSupport
import Signing
import TestSupport
import Testing

/// The package's fetcher over its one transport, libcurl (loopback http is allowed).
let loopbackFetcher = TransportBinaryFetcher(transport: CurlTransport())

/// A TSA client for the emulator's `/tsa` (or a fault path under it), trusting the emulator CA.
func emulatorTSA(
    _ emulator: DSSEmulator,
    fault: String? = nil,
    timeout: TimeInterval = 10
) throws -> TimestampAuthorityClient {
    var url = try #require(emulator.timestampURL)
    if let fault { url = url.appendingPathComponent(fault) }
    return TimestampAuthorityClient(
        configuration: .init(url: url, trustAnchors: [emulator.timestampAuthorityCA], timeout: timeout),
        fetcher: loopbackFetcher
    )
}

/// A signer under the emulator's CA (the seed's first certificate).
var emulatorSigner: SigningIdentity { sharedSeed.users[0].certificates[0].identity }

/// Python scripts run with the interpreter that has asn1crypto and pyHanko (interop oracles).
enum Python {
    /// Writes the signature value of SignerInfo `index` to `valuePath` and its first
    /// signature-time-stamp-token (DER) to `tokenPath` (when it has one); prints the token count.
    static let extract = """
        import sys
        from asn1crypto import cms
        info = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())
        signer = info['content']['signer_infos'][int(sys.argv[2])]
        open(sys.argv[3], 'wb').write(signer['signature'].native)
        tokens = [a for a in (signer['unsigned_attrs'].native and signer['unsigned_attrs'] or []) if a['type'].native == 'signature_time_stamp_token']
        if tokens:
            open(sys.argv[4], 'wb').write(tokens[0]['values'][0].dump())
        print(len(tokens))
        """

    /// Inserts the DER token argv[2] as SignerInfo 0's signature-time-stamp-token of argv[1],
    /// writing argv[3].
    static let insert = """
        import sys
        from asn1crypto import cms
        info = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())
        token = cms.ContentInfo.load(open(sys.argv[2], 'rb').read())
        signer = info['content']['signer_infos'][0]
        signer['unsigned_attrs'] = cms.CMSAttributes([cms.CMSAttribute({'type': 'signature_time_stamp_token', 'values': [token]})])
        open(sys.argv[3], 'wb').write(info.dump(force=True))
        """

    /// Validates a detached CMS signature (argv[1]) over argv[2] with pyHanko, trusting the PEM
    /// roots in argv[3]; prints the signature and timestamp verdicts and exits 0 only when both
    /// are intact, valid and trusted. This is what `pyhanko sign validate --detached` runs
    /// (pyhanko-cli is not installed: the library is).
    static let pyHankoValidate = """
        import sys, asyncio
        from asn1crypto import cms, pem, x509
        from pyhanko_certvalidator import ValidationContext
        from pyhanko.sign.validation import async_validate_detached_cms
        roots = []
        for _, _, der in pem.unarmor(open(sys.argv[3], 'rb').read(), multiple=True):
            roots.append(x509.Certificate.load(der))
        context = ValidationContext(trust_roots=roots, allow_fetching=False)
        signed = cms.ContentInfo.load(open(sys.argv[1], 'rb').read())['content']
        status = asyncio.run(async_validate_detached_cms(open(sys.argv[2], 'rb').read(), signed,
                                                         signer_validation_context=context, ts_validation_context=context))
        ts = status.timestamp_validity
        print('signature', status.intact, status.valid, status.trusted, status.bottom_line)
        print('timestamp', ts is not None and ts.intact, ts is not None and ts.valid, ts is not None and ts.trusted,
              ts.timestamp if ts is not None else None)
        sys.exit(0 if status.bottom_line and ts is not None and ts.intact and ts.valid and ts.trusted else 1)
        """

    /// Makes a timestamp token over SHA-256(argv[3]) with pyHanko's test TSA (RSA keys only), signing with the
    /// certificate argv[1] and PKCS#8 key argv[2] whatever their extensions; writes argv[4]. An
    /// optional argv[5] (ISO 8601) fixes the token's time.
    static let dummyTimestamp = """
        import sys, asyncio, hashlib, datetime
        from asn1crypto import x509, keys, pem
        from pyhanko.sign.timestamps.dummy_client import DummyTimeStamper
        cert = x509.Certificate.load(pem.unarmor(open(sys.argv[1], 'rb').read())[2])
        key = keys.PrivateKeyInfo.load(pem.unarmor(open(sys.argv[2], 'rb').read())[2])
        fixed = datetime.datetime.fromisoformat(sys.argv[5].replace('Z', '+00:00')) if len(sys.argv) > 5 else None
        stamper = DummyTimeStamper(tsa_cert=cert, tsa_key=key, fixed_dt=fixed)
        token = asyncio.run(stamper.async_timestamp(hashlib.sha256(open(sys.argv[3], 'rb').read()).digest(), 'sha256'))
        open(sys.argv[4], 'wb').write(token.dump())
        """

    static func run(_ script: String, _ arguments: [String]) throws -> ExternalTool.Result {
        try ExternalTool.run("python3", ["-c", script] + arguments)
    }
}

/// A certificate and key as PEM files for openssl.
func writePEM(
    _ identity: SigningIdentity,
    in directory: TemporaryDirectory,
    name: String
) throws -> (certificate: String, key: String) {
    let key = try #require(identity.key as? LocalSigningKey)
    return (
        try directory.write("\(name).pem", text: identity.certificate.pemRepresentation),
        try directory.write("\(name).key", text: try key.pemRepresentation(password: nil))
    )
}

/// An RSA TSA certificate issued by `pki` (extended key usage timeStamping, critical unless `lax`),
/// written with its key as PEM files for openssl.
func writeTSA(
    _ pki: TestPKI,
    subject: String,
    lax: Bool = false,
    in directory: TemporaryDirectory,
    name: String
) throws -> (certificate: String, key: String) {
    let usage = lax ? "timeStamping" : "critical,timeStamping"
    let tsa = try pki.issueLeaf(subject: subject, keyType: .rsa2048, extensions: [("extendedKeyUsage", usage)])
    return try writePEM(tsa, in: directory, name: name)
}

extension DSSEmulator.Configuration {
    /// Faults on, no request log: this target's default.
    static var timestamping: Self { .init(faultsEnabled: true, requestLogLimit: 0) }
}
