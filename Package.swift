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
        // Certificate requests (PKCS#10) for any SigningKey, and a small CA for tests and tools.
        .library(name: "CertificateIssuing", targets: ["CertificateIssuing"]),
        // products
        .library(name: "PKCS12Provider", targets: ["PKCS12Provider"]),
        .library(name: "Signing", targets: ["Signing"]),
        .library(name: "CMS", targets: ["CMS"]),
        .library(name: "Validation", targets: ["Validation"]),
        // The signature journal (SQLite today), on its own so that other backends can follow.
        .library(name: "SignatureJournal", targets: ["SignatureJournal"]),
        // The journal's PostgreSQL backend (libpq): many workers on many machines, one journal.
        .library(name: "SignatureJournalPostgres", targets: ["SignatureJournalPostgres"]),
        .library(name: "HTTPClient", targets: ["HTTPClient"]),
        // The wire JSON (JSONValue, its parser and writer) the remote providers' envelopes carry.
        .library(name: "JSON", targets: ["JSON"]),
        // What the remote providers are made of, for a provider written outside this package.
        .library(name: "RemoteProviderSupport", targets: ["RemoteProviderSupport"]),
        .library(name: "FMPDSSProvider", targets: ["FMPDSSProvider"]),
        .library(name: "CryptoProDSSProvider", targets: ["CryptoProDSSProvider"]),
        .library(name: "CSCProvider", targets: ["CSCProvider"]),
        .library(name: "VaultTransitProvider", targets: ["VaultTransitProvider"]),
        .library(name: "AWSKMSProvider", targets: ["AWSKMSProvider"]),
        // The DSS emulator as a library, for apps' integration tests (like NIO's NIOTestUtils): never link it
        // from app code; `certsign` does not, it runs the certsign-emulator executable beside it.
        .library(name: "EmulatorKit", targets: ["EmulatorKit"]),
        .library(name: "PKCS11Provider", targets: ["PKCS11Provider"]),
        .library(name: "PDFSigning", targets: ["PDFSigning"]),
        // ETSI TS 119 102-2 validation reports (XML through libxml2): an app that only verifies does not link it.
        .library(name: "ValidationReporting", targets: ["ValidationReporting"]),
        // EU trusted lists (ETSI TS 119 612: the LOTL and member states' TLs) as trust anchors (libxmlsec1).
        .library(name: "TrustedLists", targets: ["TrustedLists"]),
        // Test doubles and an in-memory test PKI for apps' test targets (never link it from app code).
        .library(name: "CertificateProvidersTesting", targets: ["CertificateProvidersTesting"]),
        .executable(name: "certsign", targets: ["certsign"]),
        .executable(name: "certsign-emulator", targets: ["certsign-emulator"]),
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
        // Linux system calls Glibc does not declare for Swift (renameat2, syncfs, prctl).
        .target(
            name: "CSystemShims",
            path: "Sources/CSystemShims"
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
            name: "CPostgres",
            path: "Sources/CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
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

        // Package-only: every OpenSSL handle class (X509, EVP_PKEY, BIO), the error queue, GOST engine
        // set-up, RSA padding and raw signature checks. The modules above reach OpenSSL through it; it
        // knows none of them, so it throws an error of its own that they convert.
        .target(
            name: "OpenSSLWrappers",
            dependencies: ["COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CLibXML2",
            path: "Sources/CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "CLibXML2Shims",
            dependencies: ["CLibXML2"],
            path: "Sources/CLibXML2Shims"
        ),
        // Signature appearances: HarfBuzz shapes and subsets, FreeType reads font metrics, libpng and
        // libjpeg read images (through CPDFAppearanceShims, which also reaches zlib).
        .systemLibrary(
            name: "CHarfBuzz",
            path: "Sources/CHarfBuzz",
            pkgConfig: "harfbuzz-subset",
            providers: [.apt(["libharfbuzz-dev"])]
        ),
        .systemLibrary(
            name: "CFreeType",
            path: "Sources/CFreeType",
            pkgConfig: "freetype2",
            providers: [.apt(["libfreetype-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            path: "Sources/CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(
            name: "CJPEG",
            path: "Sources/CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        .target(
            name: "CPDFAppearanceShims",
            dependencies: ["CPNG", "CJPEG"],
            path: "Sources/CPDFAppearanceShims",
            // zlib compresses the streams (libpng's pkg-config names it only for static links).
            linkerSettings: [.linkedLibrary("z")]
        ),
        // libxmlsec1 (Debian libxmlsec1-dev) with its OpenSSL back end. Its pkg-config cflags are -D
        // defines SwiftPM refuses from a .pc file, so the shim sets them (they must match the library's
        // build: xmlSecSize is an unsigned int, the crypto back end linked, not loaded) and finds
        // /usr/include/xmlsec1/xmlsec through its xmlsec1/xmlsec link; libxml2's path comes from CLibXML2.
        .systemLibrary(
            name: "CXMLSec",
            path: "Sources/CXMLSec",
            providers: [.apt(["libxmlsec1-dev"])]
        ),
        .target(
            name: "CXMLSecShims",
            dependencies: ["CXMLSec", "CLibXML2", "COpenSSL"],
            path: "Sources/CXMLSecShims",
            exclude: ["xmlsec1"],
            cSettings: [
                .headerSearchPath("xmlsec1"),
                .define("XMLSEC_CRYPTO_OPENSSL", to: "1"),
                .define("XMLSEC_NO_CRYPTO_DYNAMIC_LOADING", to: "1"),
                .define("XMLSEC_NO_SIZE_T"),
                .define("XMLSEC_OPENSSL3_ENGINES", to: "1"),
                .define("XMLSEC_NO_GOST", to: "1"),
                .define("XMLSEC_NO_GOST2012", to: "1"),
                .define("__XMLSEC_FUNCTION__", to: "__func__"),
            ],
            // A C target's system-library dependency brings no link flags without pkg-config.
            linkerSettings: [.linkedLibrary("xmlsec1-openssl"), .linkedLibrary("xmlsec1")]
        ),

        // MARK: Core
        // The shape every error type shares (a code and a reason): a leaf, so the HTTP client, the
        // JSON reader and the core use it without depending on each other.
        .target(
            name: "CodedErrors",
            swiftSettings: swiftSettings
        ),
        // `Secret` alone: a leaf below the core and the HTTP client, which both carry secrets.
        .target(
            name: "Secrets",
            dependencies: ["OpenSSLWrappers"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CertificateProviders",
            dependencies: ["CodedErrors", "OpenSSLWrappers", "Secrets"],
            swiftSettings: swiftSettings
        ),
        // Package-only: the file-system steps (atomic writes, private directories, syncfs) and the
        // private-file store the remote providers keep their sessions in. The core knows no files.
        .target(
            name: "Durability",
            dependencies: ["CertificateProviders", "CSystemShims"],
            swiftSettings: swiftSettings
        ),
        // Issues CAs, keys and certificates with OpenSSL (the emulator, `certsign demo`, TestPKI).
        .target(
            name: "CertificateIssuing",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers"],
            swiftSettings: swiftSettings
        ),
        // Test support, a product of its own for apps' test targets: link it from test targets (and
        // certsign-bench) only; `make check-test-support` fails if any other product reaches it.
        .target(
            name: "CertificateProvidersTesting",
            dependencies: ["CertificateProviders", "CertificateIssuing", "Signing", "SignatureJournal"],
            swiftSettings: swiftSettings
        ),

        // MARK: Providers (one folder each under Providers/)
        // providers
        .target(
            name: "PKCS12Provider",
            dependencies: ["CertificateProviders", "Durability", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers"],
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
            dependencies: ["CertificateProviders", "Durability", "JSON", "HTTPClient", "RemoteProviderSupport"],
            path: "Providers/FMP",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CryptoProDSSProvider",
            dependencies: ["CertificateProviders", "Durability", "JSON", "HTTPClient", "RemoteProviderSupport"],
            path: "Providers/CryptoProDSS",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CSCProvider",
            dependencies: ["CertificateProviders", "JSON", "HTTPClient", "RemoteProviderSupport"],
            path: "Providers/CSC",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VaultTransitProvider",
            dependencies: ["CertificateProviders", "JSON", "HTTPClient", "RemoteProviderSupport"],
            path: "Providers/VaultTransit",
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AWSKMSProvider",
            dependencies: [
                "CertificateProviders", "JSON", "HTTPClient", "RemoteProviderSupport", "COpenSSL", "OpenSSLWrappers",
            ],
            path: "Providers/AWSKMS",
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PKCS11Provider",
            dependencies: [
                "CertificateProviders", "CPKCS11", "CPKCS11Shims", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers",
            ],
            path: "Providers/PKCS11",
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: Signing, remote, CLI
        // modules over the core: Signing, HTTPClient, CertificateIssuing, EmulatorKit, PDFSigning, the CLI
        // The signature journal: what was signed, when, with which certificate (SQLite or PostgreSQL).
        .target(
            name: "SignatureJournal",
            dependencies: ["CertificateProviders", "COpenSSL", "CSQLite", "CSQLiteShims"],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL backend of the journal (libpq), a product of its own so that an app on SQLite
        // does not link libpq.
        .target(
            name: "SignatureJournalPostgres",
            dependencies: ["SignatureJournal", "CertificateProviders", "CPostgres"],
            swiftSettings: swiftSettings
        ),
        // CMS SignedData: the one builder, the parser, signature and archive timestamp tokens, the
        // validation data a SignedData carries.
        .target(
            name: "CMS",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers"],
            swiftSettings: swiftSettings
        ),
        // Verifying signatures: policy, results, chains, revocation (OCSP, CRL), timestamps, long-term
        // material. It never reaches the journal, SQLite or libpq, so an app that only verifies links none.
        .target(
            name: "Validation",
            dependencies: ["CertificateProviders", "CMS", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers"],
            swiftSettings: swiftSettings
        ),
        // ETSI TS 119 102-2 validation reports of verification results, written with libxml2.
        .target(
            name: "ValidationReporting",
            dependencies: ["CertificateProviders", "CodedErrors", "Validation", "CLibXML2Shims"],
            swiftSettings: swiftSettings
        ),
        // EU trusted lists: ETSI TS 119 612 LOTL and TLs read with libxml2, their XML signatures checked
        // with libxmlsec1, their services turned into trust anchors at a given time.
        .target(
            name: "TrustedLists",
            dependencies: [
                "CertificateProviders", "CodedErrors", "Validation", "CXMLSecShims", "COpenSSL", "COpenSSLShims",
                "OpenSSLWrappers",
                "HTTPClient", "Durability",
            ],
            swiftSettings: swiftSettings
        ),
        // The signing coordinator, its strategies and batching, and the journal wiring.
        .target(
            name: "Signing",
            dependencies: ["CertificateProviders", "CMS", "Validation", "Durability", "SignatureJournal", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
        // Package-only: draws visible signature appearances (text shaped with HarfBuzz in an embedded
        // font subset, PNG and JPEG images) as PDF objects; PDFSigning places them.
        .target(
            name: "PDFAppearance",
            dependencies: ["CertificateProviders", "CHarfBuzz", "CFreeType", "CPDFAppearanceShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PDFSigning",
            dependencies: ["Signing", "CertificateProviders", "Durability", "CQPDF", "PDFAppearance"],
            swiftSettings: swiftSettings
        ),
        // The wire JSON: JSONValue, its strict parser and its writer (clients, the emulator, the CLI).
        .target(
            name: "JSON",
            dependencies: ["CodedErrors"],
            swiftSettings: swiftSettings
        ),
        // The base of the remote providers (FMP, CryptoPro, CSC): session capability, parameters, TLS wiring.
        .target(
            name: "RemoteProviderSupport",
            dependencies: ["CertificateProviders", "HTTPClient", "JSON", "COpenSSL", "OpenSSLWrappers"],
            swiftSettings: swiftSettings
        ),
        // The one list of the built-in providers (the CLI and the contract tests use it). Not a
        // product: apps register the providers they pick, each through its own register(in:).
        .target(
            name: "BuiltInProviders",
            dependencies: [
                "CertificateProviders", "PKCS12Provider", "FMPDSSProvider", "CryptoProDSSProvider", "CSCProvider",
                "PKCS11Provider", "VaultTransitProvider", "AWSKMSProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HTTPClient",
            dependencies: [
                "CodedErrors", "Secrets", "JSON", "COpenSSL", "CCurl", "CCurlShims", "OpenSSLWrappers",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "EmulatorKit",
            dependencies: [
                "CertificateProviders", "Durability", "CertificateIssuing", "JSON", "CMS", "Validation", "CMicroHTTPD",
                "CMicroHTTPDShims",
                "COpenSSL", "COpenSSLShims", "OpenSSLWrappers",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CertSignCLI",
            dependencies: [
                // Providers only through BuiltInProviders: the tool names none of them.
                "CertificateProviders", "Durability", "Signing", "SignatureJournal",
                "SignatureJournalPostgres", "JSON",
                "HTTPClient",
                "CertificateIssuing",
                "CSystemShims", "PDFSigning", "BuiltInProviders", "RemoteProviderSupport", "ValidationReporting",
                "TrustedLists",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign",
            dependencies: ["CertSignCLI"],
            swiftSettings: swiftSettings
        ),
        // The emulator as a program: `certsign emulator …` and `certsign demo` run the one installed beside
        // certsign. It shares certsign's command line (options, help, --json, errors) through CertSignCLI.
        .executableTarget(
            name: "certsign-emulator",
            dependencies: ["CertSignCLI", "EmulatorKit", "CertificateProviders"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign-bench",
            dependencies: [
                "CertificateProviders", "PKCS12Provider", "COpenSSL", "Signing", "SignatureJournal",
                "CertificateProvidersTesting", "TestSupport",
                "JSON", "HTTPClient", "FMPDSSProvider", "EmulatorKit", "CryptoProDSSProvider", "CSCProvider",
                "PKCS11Provider", "PDFSigning", "TrustedLists",
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
            dependencies: [
                "CertificateProviders", "CertificateProvidersTesting", "CertificateIssuing", "CodedErrors",
                "EmulatorKit",
                "HTTPClient", "FMPDSSProvider", "CSystemShims",
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CertificateProvidersTests",
            dependencies: [
                "CertificateProviders", "CertificateProvidersTesting", "COpenSSL", "COpenSSLShims", "OpenSSLWrappers",
            ],
            swiftSettings: swiftSettings
        ),
        // tests
        // Fuzzing (Tests/Fuzz/README.md): `make fuzz` builds certsign-fuzz with -sanitize=fuzzer,address into
        // .build/fuzz; a plain build makes the same binary as a replay tool (no fuzzer runtime needed).
        .target(
            name: "CertSignFuzzTargets",
            dependencies: [
                "CertificateProviders", "PKCS12Provider", "Signing", "JSON", "HTTPClient", "FMPDSSProvider",
                "CryptoProDSSProvider", "EmulatorKit", "COpenSSL", "PDFSigning",
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
                "certsign", "PKCS12Provider", "Signing", "SignatureJournal", "SignatureJournalPostgres",
                "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CertSignCLITests",
            dependencies: [
                "CertSignCLI", "certsign", "certsign-emulator", "CertificateProvidersTesting", "EmulatorKit", "JSON",
                // The parameter-schema contract test registers every provider of BuiltInProviders.all.
                "BuiltInProviders", "PKCS12Provider", "PKCS11Provider", "FMPDSSProvider", "CryptoProDSSProvider",
                "CSCProvider", "VaultTransitProvider", "AWSKMSProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PKCS12ProviderTests",
            dependencies: [
                "PKCS12Provider", "pkcs12-store-tool", "CertificateProviders", "CertificateProvidersTesting",
                "COpenSSL", "Signing", "SignatureJournal",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SigningTests",
            dependencies: [
                "Signing", "SignatureJournal", "SignatureJournalPostgres", "Durability", "journal-stress",
                "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        // Helper process for SigningTests' multi-process journal tests (built by `swift build --build-tests`).
        .executableTarget(
            name: "journal-stress",
            dependencies: [
                "Signing", "SignatureJournal", "SignatureJournalPostgres", "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            path: "Tests/JournalStressTool",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPClientTests",
            dependencies: [
                "JSON", "HTTPClient", "RemoteProviderSupport", "EmulatorKit", "CertificateProviders",
                "CertificateProvidersTesting",
                "PKCS12Provider",
                "FMPDSSProvider", "CryptoProDSSProvider",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JSONTests",
            dependencies: ["JSON", "CertificateProviders"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmulatorKitTests",
            dependencies: [
                "EmulatorKit", "JSON", "HTTPClient", "CertificateProviders", "CertificateProvidersTesting",
                "RemoteProviderSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TimestampRevocationTests",
            dependencies: [
                "Signing", "EmulatorKit", "HTTPClient", "CertificateProviders", "CertificateProvidersTesting",
                "PDFSigning", "RemoteProviderSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FMPDSSProviderTests",
            dependencies: [
                "FMPDSSProvider", "EmulatorKit", "JSON", "HTTPClient", "RemoteProviderSupport", "CertificateProviders",
                "CertificateProvidersTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PKCS11ProviderTests",
            dependencies: [
                "PKCS11Provider", "certsign", "pkcs11-fork-check", "Signing", "SignatureJournal",
                "CertificateProviders",
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
                "PDFSigning", "PDFAppearance", "Signing", "CertificateProviders", "CertificateProvidersTesting",
                "EmulatorKit", "HTTPClient", "CryptoProDSSProvider", "CSCProvider", "RemoteProviderSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CryptoProDSSProviderTests",
            dependencies: [
                "CryptoProDSSProvider", "EmulatorKit", "JSON", "HTTPClient", "CertificateProviders",
                "RemoteProviderSupport",
                "CertificateProvidersTesting",
                "certsign",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CSCProviderTests",
            dependencies: [
                "CSCProvider", "EmulatorKit", "Signing", "SignatureJournal", "SignatureJournalPostgres", "JSON",
                "HTTPClient", "RemoteProviderSupport", "CertificateProviders",
                "CertificateProvidersTesting",
                "certsign",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VaultTransitProviderTests",
            dependencies: [
                "VaultTransitProvider", "HTTPClient", "CertificateProviders", "CertificateProvidersTesting",
                "certsign",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AWSKMSProviderTests",
            dependencies: [
                "AWSKMSProvider", "Signing", "JSON", "HTTPClient", "RemoteProviderSupport", "CertificateProviders",
                "CertificateProvidersTesting", "certsign",
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrustedListsTests",
            dependencies: ["TrustedLists", "Validation", "CertificateProviders", "certsign"],
            swiftSettings: swiftSettings
        ),
    ]
)

// Every test target links the shared test helpers (Tests/TestSupport).
for target in package.targets where target.type == .test {
    target.dependencies.append("TestSupport")
}
