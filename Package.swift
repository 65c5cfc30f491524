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
        .library(name: "PKCS12Provider", targets: ["PKCS12Provider"]),
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
        .target(
            name: "PKCS12Provider",
            dependencies: ["CertificateProviders", "COpenSSL", "COpenSSLShims"],
            path: "Providers/PKCS12/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pkcs12-store-tool",
            dependencies: ["PKCS12Provider", "CertificateProviders"],
            path: "Providers/PKCS12/Tool",
            swiftSettings: swiftSettings
        ),

        // MARK: Signing, remote, CLI
        // modules: Signing, RemoteSigning, DSSEmulator, CertSignCLI are added here by their issues
        .target(
            name: "CertSignCLI",
            dependencies: ["CertificateProviders", "PKCS12Provider"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "certsign",
            dependencies: ["CertSignCLI"],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "certsign-bench",
            dependencies: ["CertificateProviders", "PKCS12Provider", "COpenSSL"],
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
            name: "CertSignCLITests",
            dependencies: ["CertSignCLI", "certsign", "CertificateProvidersTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PKCS12ProviderTests",
            dependencies: ["PKCS12Provider", "pkcs12-store-tool", "CertificateProviders", "CertificateProvidersTesting", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
    ]
)
