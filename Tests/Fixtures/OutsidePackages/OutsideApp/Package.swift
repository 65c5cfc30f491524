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

let package = Package(
    name: "OutsideApp",
    dependencies: [
        .package(name: "swift-certificate-providers", path: "../../../..")
    ],
    targets: [
        .executableTarget(
            name: "sqlite-signer",
            dependencies: [
                .product(name: "Signing", package: "swift-certificate-providers"),
                .product(name: "PKCS12Provider", package: "swift-certificate-providers"),
                .product(name: "SignatureJournal", package: "swift-certificate-providers"),
            ]
        ),
        .executableTarget(
            name: "testing-walkthrough",
            dependencies: [
                .product(name: "Signing", package: "swift-certificate-providers"),
                .product(name: "PKCS12Provider", package: "swift-certificate-providers"),
                .product(name: "SignatureJournal", package: "swift-certificate-providers"),
                .product(name: "HTTPClient", package: "swift-certificate-providers"),
                .product(name: "RemoteProviderSupport", package: "swift-certificate-providers"),
                .product(name: "CertificateProvidersTesting", package: "swift-certificate-providers"),
                .product(name: "EmulatorKit", package: "swift-certificate-providers"),
            ]
        ),
        .executableTarget(
            name: "remote-provider",
            dependencies: [
                .product(name: "CertificateProviders", package: "swift-certificate-providers"),
                .product(name: "RemoteProviderSupport", package: "swift-certificate-providers"),
                .product(name: "HTTPClient", package: "swift-certificate-providers"),
                .product(name: "JSON", package: "swift-certificate-providers"),
                .product(name: "Signing", package: "swift-certificate-providers"),
                .product(name: "SignatureJournal", package: "swift-certificate-providers"),
                .product(name: "EmulatorKit", package: "swift-certificate-providers"),
            ]
        ),
    ]
)
