internal import COpenSSL
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The fuzz targets `certsign-fuzz` runs; `CERTSIGN_FUZZ_TARGET` picks one per process.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `PKCS12File(data:password:)` with the password the seeds were made with.
    case pkcs12RightPassword = "pkcs12-right-password"
    /// `PKCS12File(data:password:)` with a password no seed was made with.
    case pkcs12WrongPassword = "pkcs12-wrong-password"
    /// `Certificate(derEncoded:)` and `Certificate.certificates(derOrPEM:)`.
    case certificate
    /// `CMSVerifier.verify(signature:content:trustAnchors:)`, attached and detached.
    case cmsVerify = "cms-verify"
    /// `FMPClient` decoding a server response body (auth, certificates, sign, signs, remove).
    case fmpClient = "fmp-client"
    /// `CryptoProDSSClient` decoding a server response body (token, certificates, sign).
    case cryptoProClient = "cryptopro-client"
    /// The DSS emulator's FMP routes handling a raw request body.
    case emulatorFMP = "emulator-fmp"
    /// The DSS emulator's CryptoPro routes handling a raw request body.
    case emulatorCryptoPro = "emulator-cryptopro"
    /// `PDFSignatureVerifier.verify(pdfAt:trustAnchors:)`: qpdf's reading, the field walk, ByteRange
    /// sanity, revision markers, then each CMS.
    case pdfVerify = "pdf-verify"
    /// An RFC 3161 TimeStampResp checked by the TSA client, and the same bytes as a timestamp token.
    case timestamp
    /// An OCSP response checked as the revocation checker does.
    case ocspResponse = "ocsp-response"

    /// Runs one input through the target.
    /// - Returns: a one-line outcome, printed per input when `CERTSIGN_FUZZ_VERBOSE` is set.
    @discardableResult
    func run(_ input: [UInt8]) -> String {
        switch self {
        case .pkcs12RightPassword: PKCS12Targets.open(input, password: FuzzSeeds.pkcs12Password)
        case .pkcs12WrongPassword: PKCS12Targets.open(input, password: "not-the-fuzz-password")
        case .certificate: CertificateTargets.parse(input)
        case .cmsVerify: CMSTargets.verify(input)
        case .fmpClient: ClientTargets.fmp(input)
        case .cryptoProClient: ClientTargets.cryptoPro(input)
        case .emulatorFMP: EmulatorTargets.fmp(input)
        case .emulatorCryptoPro: EmulatorTargets.cryptoPro(input)
        case .pdfVerify: PDFTargets.verify(input)
        case .timestamp: ValidationTargets.timestamp(input)
        case .ocspResponse: ValidationTargets.ocsp(input)
        }
    }

    /// Whether to print each input's outcome (`CERTSIGN_FUZZ_VERBOSE`, for checking seeds and crash inputs).
    static let isVerbose = ProcessInfo.processInfo.environment["CERTSIGN_FUZZ_VERBOSE"] != nil

    /// The target named by `CERTSIGN_FUZZ_TARGET`, read once.
    static let selected: FuzzTarget? = ProcessInfo.processInfo.environment["CERTSIGN_FUZZ_TARGET"].flatMap(
        FuzzTarget.init(rawValue:)
    )
}

/// Values the seed corpora (`Tests/Fuzz/make-seeds.sh`) and the targets share.
enum FuzzSeeds {
    /// The password of every seed PKCS#12 file.
    static let pkcs12Password = "fuzz-password"
    /// The content every detached seed signature covers.
    static let cmsContent = Array("certsign fuzz content\n".utf8)
}

/// libFuzzer's setup hook (also called by the replay `main`): checks `CERTSIGN_FUZZ_TARGET` and
/// builds the chosen target's fixtures before the first input, so their cost is not timed.
/// - Returns: 0; exits with status 64 when no valid target is named.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: OpaquePointer?) -> CInt {
    // No OPENSSL_cleanup at exit: it unloads the legacy provider module and leaves that module's
    // allocations unreferenced, which LeakSanitizer's exit check then reports (OpenSSL's own
    // behaviour; a ten-line C program that loads "legacy" shows the same 117 allocations). With
    // this, OpenSSL's global state stays reachable at exit and real leaks still show.
    OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    guard let target = FuzzTarget.selected else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("certsign-fuzz: set CERTSIGN_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(64)
    }
    switch target {
    case .cmsVerify, .pdfVerify: _ = CMSTargets.trustAnchors
    case .emulatorFMP, .emulatorCryptoPro: _ = EmulatorTargets.fixture
    case .timestamp, .ocspResponse: _ = ValidationTargets.fixture
    default: break
    }
    return 0
}

/// libFuzzer's per-input entry point: runs the input through the selected target.
/// - Returns: 0 (every input is kept for the corpus when it adds coverage).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = FuzzTarget.selected else { return 0 }
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let outcome = target.run(input)
    if FuzzTarget.isVerbose { FileHandle.standardError.write(Data("\(target.rawValue): \(outcome)\n".utf8)) }
    return 0
}
