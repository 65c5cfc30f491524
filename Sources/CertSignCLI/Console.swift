import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes, and what it can ask: abstracted so tests run commands in-process.
final class Console: @unchecked Sendable {
    // Used by one command at a time; the progress state is only touched from the running command.
    let environment: [String: String]
    private let standardInput: FileHandle
    private let standardOutput: FileHandle
    private let standardError: FileHandle
    private var lastProgressDraw: UInt64 = 0
    private var progressVisible = false
    /// Whether anything was written to standard output (so a failure under `--json` adds no second document).
    private(set) var wroteStandardOutput = false

    init(
        environment: [String: String],
        standardInput: FileHandle = .standardInput,
        standardOutput: FileHandle = .standardOutput,
        standardError: FileHandle = .standardError
    ) {
        self.environment = environment
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        errorIsTerminal = isatty(standardError.fileDescriptor) == 1
    }

    /// Whether standard input is a terminal (so a password prompt is possible).
    var inputIsTerminal: Bool { isatty(standardInput.fileDescriptor) == 1 }
    /// Whether standard error is a terminal (so a progress bar is drawn); asked once, when the
    /// console is made, not per progress call (each `isatty` is an `ioctl(TCGETS)`).
    let errorIsTerminal: Bool

    func out(_ text: String) {
        clearProgress()
        wroteStandardOutput = true
        standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Writes bytes as they are to standard output (a signature for `--out -`).
    func outBytes(_ bytes: [UInt8]) {
        clearProgress()
        wroteStandardOutput = true
        standardOutput.write(Data(bytes))
    }

    func err(_ text: String) {
        clearProgress()
        standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Reads all of standard input (for `--password-stdin`); the caller wipes the data.
    func readStandardInput() -> Data { standardInput.readDataToEndOfFile() }

    /// Reads the next bytes of standard input (up to `count`); nil or empty at its end.
    func readStandardInput(upToCount count: Int) throws -> Data? { try standardInput.read(upToCount: count) }

    /// Asks for a secret on the terminal with echo off.
    /// - Throws: `UsageError`-free `.passwordRequired` when no terminal is attached.
    func promptSecret(_ prompt: String) throws -> Secret {
        let descriptor = standardInput.fileDescriptor
        guard isatty(descriptor) == 1 else {
            throw CertificateProviderError(
                .passwordRequired,
                "\(prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": "))) is needed: use --password-env "
                    + "VAR, --password-file PATH or --password-stdin"
            )
        }
        // Echo goes off (dropping anything typed before the prompt) BEFORE the prompt appears, so
        // nothing typed after the prompt is echoed or discarded; as glibc's getpass does.
        var saved = termios()
        tcgetattr(descriptor, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(descriptor, TCSAFLUSH, &silent)
        defer {
            tcsetattr(descriptor, TCSANOW, &saved)
            standardError.write(Data("\n".utf8))
        }
        clearProgress()
        standardError.write(Data(prompt.utf8))
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != 0x0A, byte != 0x0D else { break }
            bytes.append(byte)
        }
        return Secret(wiping: &bytes)
    }

    /// Asks a yes/no question on the terminal (standard error) and reads the answer from standard
    /// input: true only for "y" or "yes" (any case); anything else, or end of input, is no.
    func confirm(_ question: String) -> Bool {
        clearProgress()
        standardError.write(Data(question.utf8))
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(standardInput.fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != 0x0A, byte != 0x0D else { break }
            bytes.append(byte)
        }
        let answer = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes"
    }

    /// Draws a progress bar on standard error when it is a terminal (at most ten times a second):
    /// bytes, or `done/total counting` (e.g. documents) when `counting` names what is counted.
    func progress(_ label: String, done: Int64, total: Int64, counting: String? = nil) {
        guard errorIsTerminal, total > 0 else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard done >= total || now - lastProgressDraw > 100_000_000 else { return }
        lastProgressDraw = now
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let amount = counting.map { "\(done)/\(total) \($0)" } ?? "\(Format.bytes(done))/\(Format.bytes(total))"
        let text = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(amount)"
        standardError.write(Data(text.utf8))
        progressVisible = true
    }

    /// Erases a drawn progress bar.
    func clearProgress() {
        guard progressVisible else { return }
        standardError.write(Data("\r\u{1B}[K".utf8))
        progressVisible = false
    }
}
