// pkcs11-fork-check: a helper process for PKCS11ProviderTests. It logs in to a token, signs, forks,
// and signs again in the child with the identity made before the fork (the module must be
// re-initialised there, and the parent's session handles dropped). Signatures go to files named
// by the arguments; the parent signs once more after the child ended. Exit 0 when all three work.
//
// usage: pkcs11-fork-check MODULE URI OUT-PREFIX   (PIN in $TOKEN_PIN)
import CertificateProviders
import Foundation
import PKCS11Provider

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 4, let pin = ProcessInfo.processInfo.environment["TOKEN_PIN"] else {
    FileHandle.standardError.write(Data("usage: pkcs11-fork-check MODULE URI OUT-PREFIX (PIN in $TOKEN_PIN)\n".utf8))
    exit(64)
}
let digest = DigestAlgorithm.sha256.hash(Array("fork check\n".utf8))

func signOrExit(_ key: PKCS11SigningKey, _ name: String) {
    do {
        let signature = try key.signSynchronously(digest: digest, digestAlgorithm: .sha256, scheme: key.defaultScheme)
        try Data(signature).write(to: URL(fileURLWithPath: arguments[3] + name))
    } catch {
        FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
        exit(1)
    }
}

let provider = try PKCS11CertificateProvider(parameters: [
    PKCS11CertificateProvider.ParameterKey.module: .string(arguments[1])
])
let identity = try await provider.initialize(options: [
    PKCS11CertificateProvider.ParameterKey.uri: .string(arguments[2]),
    PKCS11CertificateProvider.ParameterKey.pin: .secret(Secret(pin)),
])
guard let key = identity.key as? PKCS11SigningKey else { exit(1) }
try Data(identity.certificate.pemRepresentation.utf8).write(to: URL(fileURLWithPath: arguments[3] + "cert.pem"))
signOrExit(key, "parent-before.sig")
let child = fork()
if child == 0 {
    // Only synchronous calls here: the parent's threads (Swift's cooperative pool) do not exist in the child.
    signOrExit(key, "child.sig")
    // What the child's pool did: it must have re-opened (and logged in) once.
    let counters =
        provider.connectionDiagnostics.map {
            "reopens=\($0.reopens) logins=\($0.logins) failedLogins=\($0.failedLogins)"
        } ?? "none"
    try? Data(counters.utf8).write(to: URL(fileURLWithPath: arguments[3] + "child-counters.txt"))
    _exit(0)
}
var status: Int32 = 0
waitpid(child, &status, 0)
guard status == 0 else {
    FileHandle.standardError.write(Data("child failed with status \(status)\n".utf8))
    exit(1)
}
signOrExit(key, "parent-after.sig")
