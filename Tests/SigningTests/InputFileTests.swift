import CertificateProviders
internal import Durability
import Foundation
import TestSupport
import Testing

/// `FileSystem.readInputFile` reads a file the user named in one open, and says what is wrong with a
/// path it cannot read.
@Suite("FileSystem.readInputFile: files, pipes and the paths it refuses")
struct InputFileTests {
    @Test("a regular file, an empty one and one larger than a read chunk come back whole")
    func regularFiles() throws {
        let directory = try TemporaryDirectory()
        for size in [0, 1, 4095, 4096, 70_000, (1 << 20) + 3] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let path = try directory.write("file-\(size)", bytes)
            #expect(try FileSystem.readInputFile(path, what: "test file") == bytes)
        }
    }

    @Test("a named pipe is read to its end")
    func namedPipe() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("pipe")
        #expect(mkfifo(path, 0o600) == 0)
        let payload = Array("подпись через канал\n".utf8) + [UInt8](repeating: 0x41, count: 100_000)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: path)
            handle?.write(Data(payload))
            try? handle?.close()
        }
        writer.start()
        #expect(try FileSystem.readInputFile(path, what: "signature value file") == payload)
    }

    @Test("a missing file, a directory and an unreadable file each get their own message")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("missing.p12")
        expectMessage("the PKCS#12 file \(missing) does not exist") {
            try FileSystem.readInputFile(missing, what: "PKCS#12 file")
        }
        expectMessage("\(directory.url.path) is a directory, not a PKCS#12 file") {
            try FileSystem.readInputFile(directory.url.path, what: "PKCS#12 file")
        }
        if geteuid() != 0 {
            let locked = try directory.write("locked.p12", [1, 2, 3] as [UInt8])
            #expect(chmod(locked, 0) == 0)
            expectMessage("(check its permissions)") { try FileSystem.readInputFile(locked, what: "PKCS#12 file") }
        }
    }

    private func expectMessage(
        _ text: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> [UInt8]
    ) {
        do {
            _ = try body()
            Issue.record("read without an error", sourceLocation: sourceLocation)
        } catch let error as CertificateProviderError {
            #expect(error.code == .fileSystem, sourceLocation: sourceLocation)
            #expect(error.reason.contains(text), "\(error.reason)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }
}
