// pkcs12-store-tool: a tiny executable the PKCS12Provider tests run as separate processes (two
// concurrent imports into one store; opening a file in a process whose OpenSSL lacks the legacy
// provider). Passwords come from the environment, never from argv.
//
//   pkcs12-store-tool import STORE ALIAS FILE   env: PKCS12_PASSWORD, STORE_PASSWORD, START_AFTER (a path to wait for)
//   pkcs12-store-tool open FILE                 env: PKCS12_PASSWORD (unset = no password)
//
// Prints `ok …` and exits 0, or `error CODE: REASON` and exits 1; 64 for usage errors.
import CertificateProviders
import Foundation
import PKCS12Provider

let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment

func secret(_ name: String) -> Secret? { environment[name].map { Secret($0) } }

func waitForStartSignal() {
    guard let path = environment["START_AFTER"] else { return }
    let deadline = Date().addingTimeInterval(30)
    while !FileManager.default.fileExists(atPath: path), Date() < deadline { usleep(1_000) }
}

do {
    switch (arguments.first, arguments.count) {
    case ("import", 4):
        let store = PKCS12IdentityStore(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: arguments[3])))
        let file = try PKCS12File(data: bytes, password: secret("PKCS12_PASSWORD"))
        let identity = try file.identity()
        waitForStartSignal()
        let metadata = try store.import(
            identity,
            alias: arguments[2],
            storePassword: secret("STORE_PASSWORD") ?? Secret("")
        )
        print("ok \(metadata.sha256Fingerprint)")
    case ("open", 2):
        let file = try PKCS12File(contentsOf: arguments[1], password: secret("PKCS12_PASSWORD"))
        print("ok \(try file.identity().certificate.subject)")
    default:
        FileHandle.standardError.write(Data("usage: pkcs12-store-tool import STORE ALIAS FILE | open FILE\n".utf8))
        exit(64)
    }
} catch let error as CertificateProviderError {
    print("error \(error.code): \(error.reason)")
    exit(1)
} catch {
    print("error other: \(error)")
    exit(1)
}
