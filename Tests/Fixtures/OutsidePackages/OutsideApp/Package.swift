// swift-tools-version:6.0
//
// Apps outside swift-certificate-providers, built from its products alone as an app's would be.
// OutsidePackageTests builds and runs them:
// - `sqlite-signer` signs with a PKCS#12 file into an SQLite journal, using only the Signing,
//   PKCS12Provider and SignatureJournal products; its binary must not need libpq.
// - `remote-provider` is a remote provider written here on the public RemoteProviderSupport,
//   HTTPClient and JSON products, signing through the coordinator against the package's emulator.
// - `testing-walkthrough` does what the testing article and the long-term signing article show an
//   app's tests doing, with the testing products: an in-memory journal, scripted calls held at a gate,
//   a stored identity named by parameters, and B-LT signing against in-process TSA/OCSP/CRL services.

import PackageDescription

/// A product of swift-certificate-providers, the only package these apps depend on.
func provided(_ product: String) -> Target.Dependency {
    .product(name: product, package: "swift-certificate-providers")
}

let package = Package(
    name: "OutsideApp",
    dependencies: [
        .package(name: "swift-certificate-providers", path: "../../../..")
    ],
    targets: [
        .executableTarget(
            name: "sqlite-signer",
            dependencies: ["Signing", "PKCS12Provider", "SignatureJournal"].map(provided)
        ),
        .executableTarget(
            name: "testing-walkthrough",
            dependencies: [
                "Signing", "PKCS12Provider", "SignatureJournal", "HTTPClient", "RemoteProviderSupport",
                "CertificateProvidersTesting", "EmulatorKit",
            ].map(provided)
        ),
        .executableTarget(
            name: "remote-provider",
            dependencies: [
                "CertificateProviders", "RemoteProviderSupport", "HTTPClient", "JSON", "Signing", "SignatureJournal",
                "EmulatorKit",
            ].map(provided)
        ),
    ]
)
