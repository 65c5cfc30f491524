// swift-tools-version:6.0
//
// swift-certificate-providers: one protocol for "where do my signing certificate and key come
// from", real implementations of it, and a signing coordinator that turns any of them into
// standard, verifiable signatures. See README.md.

import PackageDescription

/// Settings every Swift target of this package shares: Swift 6 language mode comes from the tools
/// version; these upcoming features match swift-certificates.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "swift-certificate-providers",
    products: [
        .library(name: "CertificateProviders", targets: ["CertificateProviders"]),
        // products
        .library(name: "PKCS12Provider", targets: ["PKCS12Provider"]),
        .library(name: "Signing", targets: ["Signing"]),
        .library(name: "RemoteSigning", targets: ["RemoteSigning"]),
        .library(name: "FMPDSSProvider", targets: ["FMPDSSProvider"]),
        .library(name: "CryptoProDSSProvider", targets: ["CryptoProDSSProvider"]),
        .library(name: "CSCProvider", targets: ["CSCProvider"]),
        .library(name: "DSSEmulator", targets: ["DSSEmulator"]),
        .library(name: "PKCS11Provider", targets: ["PKCS11Provider"]),
        .library(name: "PDFSigning", targets: ["PDFSigning"]),
        // Test doubles and an in-memory test PKI for apps' test targets (never link it from app code).
        .library(name: "CertificateProvidersTesting", targets: ["CertificateProvidersTesting"]),
        .executable(name: "certsign", targets: ["certsign"]),
    ],
    targets: [
        // MARK: C libraries (Debian packages through pkg-config)
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "COpenSSLShims",
            dependencies: ["COpenSSL"],
            path: "Sources/COpenSSLShims",
            cSettings: [.define("OPENSSL_API_COMPAT", to: "30000")]
        ),
        // system libraries (Debian packages through pkg-config) and their C shims
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "CCurlShims",
            dependencies: ["CCurl", "COpenSSL"],
            path: "Sources/CCurlShims",
            cSettings: [.define("OPENSSL_API_COMPAT", to: "30000")]
        ),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "CSQLiteShims",
            dependencies: ["CSQLite"],
            path: "Sources/CSQLiteShims"
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            path: "Sources/CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(
            name: "CMicroHTTPDShims",
            dependencies: ["CMicroHTTPD"],
            path: "Sources/CMicroHTTPDShims",
            // GnuTLS (libmicrohttpd's TLS library) checks the emulator's TLS client certificates.
            linkerSettings: [.linkedLibrary("gnutls")]
        ),

        .systemLibrary(
            name: "CPKCS11",
            path: "Sources/CPKCS11",
            pkgConfig: "p11-kit-1",
            providers: [.apt(["libp11-kit-dev"])]
        ),
        .target(
            name: "CPKCS11Shims",
            dependencies: ["CPKCS11"],
            path: "Sources/CPKCS11Shims",
            linkerSettings: [.linkedLibrary("dl")]
        ),

        .systemLibrary(
            name: "CQPDF",
            path: "Sources/CQPDF",
            pkgConfig: "libqpdf",
            providers: [.apt(["libqpdf-dev"])]
        ),

        // MARK: Core
        .target(
            name: "CertificateProviders",
            dependencies: ["COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        // Package-only: the file-system steps (atomic writes, private directories, syncfs) and the
        // private-file store the remote providers keep their sessions in. The core knows no files.
        .target(
            name: "Durability",
            dependencies: ["CertificateProviders", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        // Issues CAs, keys and certificates with OpenSSL (the emulator, `certsign demo`, TestPKI).
        .target(
            name: "CertificateIssuing",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        // Test support, a product of its own for apps' test targets: link it from test targets (and
        // certsign-bench) only; `make check-test-support` fails if any other product reaches it.
        .target(
            name: "CertificateProvidersTesting",
            dependencies: ["CertificateProviders", "CertificateIssuing"],
            swiftSettings: swiftSettings
        ),

        // MARK: Providers (one folder each under Providers/)
        // providers
        .target(
            name: "PKCS12Provider",
            dependencies: ["CertificateProviders", "Durability", "COpenSSL", "COpenSSLShims"],
            path: "Providers/PKCS12/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pkcs12-store-tool",
            dependencies: ["PKCS12Provider", "CertificateProviders"],
            path: "Providers/PKCS12/Tool",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FMPDSSProvider",
            dependencies: ["CertificateProviders", "Durability", "RemoteSigning"],
            path: "Providers/FMP",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CryptoProDSSProvider",
            dependencies: ["CertificateProviders", "Durability", "RemoteSigning"],
            path: "Providers/CryptoProDSS",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CSCProvider",
            dependencies: ["CertificateProviders", "RemoteSigning"],
            path: "Providers/CSC",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PKCS11Provider",
            dependencies: ["CertificateProviders", "CPKCS11", "CPKCS11Shims", "COpenSSL", "COpenSSLShims"],
            path: "Providers/PKCS11",
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: Signing, remote, CLI
        // modules over the core: Signing, RemoteSigning, CertificateIssuing, DSSEmulator, PDFSigning, the CLI
        .target(
            name: "Signing",
            dependencies: [
                "CertificateProviders", "Durability", "COpenSSL", "COpenSSLShims", "CSQLite", "CSQLiteShims",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PDFSigning",
            dependencies: ["Signing", "CertificateProviders", "Durability", "CQPDF"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RemoteSigning",
            dependencies: ["CertificateProviders", "Durability", "COpenSSL", "CCurl", "CCurlShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "DSSEmulator",
            dependencies: [
                "CertificateProviders", "Durability", "CertificateIssuing", "RemoteSigning", "Signing", "CMicroHTTPD",
                "CMicroHTTPDShims",
                "COpenSSL", "COpenSSLShims",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CertSignCLI",
            dependencies: [
                "CertificateProviders", "Durability", "PKCS12Provider", "Signing", "RemoteSigning", "FMPDSSProvider",
                "CryptoProDSSProvider", "CSCProvider", "DSSEmulator", "CertificateIssuing", "PKCS11Provider",
                "COpenSSLShims", "PDFSigning",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign",
            dependencies: ["CertSignCLI"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign-bench",
            dependencies: [
                "CertificateProviders", "PKCS12Provider", "COpenSSL", "Signing", "CertificateProvidersTesting",
                "RemoteSigning", "FMPDSSProvider", "DSSEmulator", "CryptoProDSSProvider", "PKCS11Provider",
                "PDFSigning",
            ],
            swiftSettings: swiftSettings
        ),
        // certsign-bench's big-file child: signs one file in a process that links only Signing.
        .executableTarget(
            name: "certsign-bench-bigfile",
            dependencies: ["CertificateProviders", "Signing"],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        // Helpers every test target shares (emulator, expected errors, the openssl oracle); not a product.
        .target(
            name: "TestSupport",
            dependencies: ["CertificateProviders", "CertificateProvidersTesting", "CertificateIssuing", "DSSEmulator"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CertificateProvidersTests",
            dependencies: ["CertificateProviders", "CertificateProvidersTesting", "COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        // tests
        // Fuzzing (Tests/Fuzz/README.md): `make fuzz` builds certsign-fuzz with -sanitize=fuzzer,address into
        // .build/fuzz; a plain build makes the same binary as a replay tool (no fuzzer runtime needed).
        .target(
            name: "CertSignFuzzTargets",
            dependencies: [
                "CertificateProviders", "PKCS12Provider", "Signing", "RemoteSigning", "FMPDSSProvider",
                "CryptoProDSSProvider", "DSSEmulator", "COpenSSL", "PDFSigning",
            ],
            path: "Tests/Fuzz/Targets",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign-fuzz",
            dependencies: ["CertSignFuzzTargets"],
            path: "Tests/Fuzz/Driver"
        ),
        .testTarget(
            name: "CrashSafetyTests",
            dependencies: [
                "certsign", "PKCS12Provider", "Signing", "CertificateProviders", "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CertSignCLITests",
            dependencies: [
                "CertSignCLI", "certsign", "CertificateProvidersTesting", "DSSEmulator",
                // The parameter-schema contract test makes every provider through its own register(in:).
                "PKCS12Provider", "PKCS11Provider", "FMPDSSProvider", "CryptoProDSSProvider", "CSCProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PKCS12ProviderTests",
            dependencies: [
                "PKCS12Provider", "pkcs12-store-tool", "CertificateProviders", "CertificateProvidersTesting",
                "COpenSSL",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SigningTests",
            dependencies: [
                "Signing", "Durability", "journal-stress", "CertificateProviders", "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        // Helper process for SigningTests' multi-process journal tests (built by `swift build --build-tests`).
        .executableTarget(
            name: "journal-stress",
            dependencies: ["Signing", "CertificateProviders", "CertificateProvidersTesting"],
            path: "Tests/JournalStressTool",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RemoteSigningTests",
            dependencies: [
                "RemoteSigning", "DSSEmulator", "CertificateProviders", "CertificateProvidersTesting", "PKCS12Provider",
                "FMPDSSProvider", "CryptoProDSSProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DSSEmulatorTests",
            dependencies: ["DSSEmulator", "RemoteSigning", "CertificateProviders", "CertificateProvidersTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TimestampRevocationTests",
            dependencies: [
                "Signing", "DSSEmulator", "RemoteSigning", "CertificateProviders", "CertificateProvidersTesting",
                "PDFSigning",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FMPDSSProviderTests",
            dependencies: [
                "FMPDSSProvider", "DSSEmulator", "RemoteSigning", "CertificateProviders", "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PKCS11ProviderTests",
            dependencies: [
                "PKCS11Provider", "certsign", "pkcs11-fork-check", "Signing", "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            exclude: ["FaultModule"],
            swiftSettings: swiftSettings
        ),
        // Helper process for PKCS11ProviderTests' fork test (built by `swift build --build-tests`).
        .executableTarget(
            name: "pkcs11-fork-check",
            dependencies: ["PKCS11Provider", "CertificateProviders"],
            path: "Tests/PKCS11ForkTool",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PDFSigningTests",
            dependencies: [
                "PDFSigning", "Signing", "CertificateProviders", "CertificateProvidersTesting", "DSSEmulator",
                "RemoteSigning", "CryptoProDSSProvider", "CSCProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CryptoProDSSProviderTests",
            dependencies: [
                "CryptoProDSSProvider", "DSSEmulator", "RemoteSigning", "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CSCProviderTests",
            dependencies: [
                "CSCProvider", "DSSEmulator", "Signing", "RemoteSigning", "CertificateProviders",
                "CertificateProvidersTesting",
                "certsign",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// Every test target links the shared test helpers (Tests/TestSupport).
for target in package.targets where target.type == .test {
    target.dependencies.append("TestSupport")
}
