// swift-tools-version:6.0
//
// swift-certificate-providers: one protocol for "where do my signing certificate and key come
// from", real implementations of it, and a signing coordinator that turns any of them into
// standard, verifiable signatures. See README.md and ARCHITECTURE notes in the README.

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
        // products: more libraries are added here by their issues
        .library(name: "Signing", targets: ["Signing"]),
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
        // system libraries: more C libraries are added here by their issues
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

        // MARK: Core
        .target(
            name: "CertificateProviders",
            dependencies: ["COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CertificateProvidersTesting",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),

        // MARK: Providers (one folder each under Providers/)
        // providers: provider targets are added here by their issues

        // MARK: Signing, remote, CLI
        // modules: Signing, RemoteSigning, DSSEmulator, CertSignCLI are added here by their issues
        .target(
            name: "Signing",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims", "CSQLite", "CSQLiteShims"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign",
            dependencies: ["CertificateProviders"],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "certsign-bench",
            dependencies: ["CertificateProviders", "Signing", "CertificateProvidersTesting"],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "CertificateProvidersTests",
            dependencies: ["CertificateProviders", "CertificateProvidersTesting", "COpenSSL", "COpenSSLShims"],
            swiftSettings: swiftSettings
        ),
        // tests: more test targets are added here by their issues
        .testTarget(
            name: "SigningTests",
            dependencies: ["Signing", "CertificateProviders", "CertificateProvidersTesting"],
            swiftSettings: swiftSettings
        ),
        // Helper process for SigningTests' multi-process journal tests (built by `swift build --build-tests`).
        .executableTarget(
            name: "journal-stress",
            dependencies: ["Signing", "CertificateProviders", "CertificateProvidersTesting"],
            path: "Tests/JournalStressTool",
            swiftSettings: swiftSettings
        ),
    ]
)
