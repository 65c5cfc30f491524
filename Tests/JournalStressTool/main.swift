// journal-stress: a separate process for SigningTests' multi-process journal tests.
//
//   journal-stress insert <journal> <count> <tag>   append <count> records, one transaction each (<journal>:
//                                                   a file, or a postgresql:// URI)
//   journal-stress sign-loop <journal> <directory>  sign documents through a SigningCoordinator and
//                                                   write .p7s files until killed; prints "ready"
//                                                   after the first signature
import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournal
import SignatureJournalPostgres
import Signing

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("journal-stress: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: journal-stress insert|sign-loop …") }

do {
    switch command {
    case "insert":
        guard arguments.count == 4, let count = Int(arguments[2]) else {
            fail("usage: journal-stress insert <journal> <count> <tag>")
        }
        let journal =
            arguments[1].hasPrefix("postgres")
            ? try SignatureJournal(opening: JournalLocation(parsing: arguments[1]))
            : try SignatureJournal(url: URL(fileURLWithPath: arguments[1]))
        let tag = arguments[3]
        for index in 0..<count {
            let record = SignatureRecord(
                providerID: "test.stress",
                signerSubject: "CN=Процесс \(tag)",
                signerFingerprint: "00",
                documentName: "Документ \(tag)-\(index).pdf",
                documentSize: Int64(index),
                documentDigest: DigestAlgorithm.sha256.hash(Array("\(tag)-\(index)".utf8)),
                digestAlgorithm: .sha256,
                format: .cadesBES,
                isDetached: true,
                storage: .inline(Array(repeating: UInt8(index & 0xFF), count: 64))
            )
            try await journal.append(record)
        }
    case "sign-loop":
        guard arguments.count == 3 else { fail("usage: journal-stress sign-loop <journal> <directory>") }
        let pki = try TestPKI()
        let identity = try pki.issueLeaf(subject: "CN=Stress Signer", keyType: .p256)
        var registry = ProviderRegistry()
        try registry.register("test.stress", description: "stress identity") {
            InMemoryCertificateProvider(id: "test.stress", identity: identity, storedFromStart: true)
        }
        let journal = try SignatureJournal(url: URL(fileURLWithPath: arguments[1]))
        let coordinator = SigningCoordinator(registry: registry, journal: journal)
        let document = [UInt8](repeating: 0x5A, count: 256 << 10)
        var index = 0
        while true {
            let output = URL(fileURLWithPath: arguments[2]).appendingPathComponent("signature-\(index % 8).p7s")
            _ = try await coordinator.sign(
                document: .bytes(document, name: "Документ \(index)"),
                provider: "test.stress",
                output: output
            )
            if index == 0 {
                FileHandle.standardOutput.write(Data("ready\n".utf8))
            }
            index += 1
        }
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}
