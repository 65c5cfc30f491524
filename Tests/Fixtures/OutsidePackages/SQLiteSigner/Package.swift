// swift-tools-version:6.0
//
// An app outside swift-certificate-providers that signs with a PKCS#12 file into an SQLite journal,
// using only the Signing, PKCS12Provider and SignatureJournal products. OutsidePackageTests builds it
// and checks that its binary does not need libpq: a journal on SQLite links no PostgreSQL client.

import PackageDescription

let package = Package(
    name: "SQLiteSigner",
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
        )
    ]
)
