public import CertificateProviders

extension ValidationReport {
    /// A trust service of an EU trusted list (ETSI TS 119 612) that anchored a chain of a signature:
    /// the signer's (a CA service) or its timestamp's (a TSA/QTST service). The report names it in
    /// the signature's `AssociatedValidationReportData`: the anchor as `TrustAnchor`, the service as
    /// `AdditionalValidationReportData/ReportData` whose `Value` holds TS 119 612's
    /// `ServiceTypeIdentifier`, `ServiceName` and `SchemeTerritory`.
    public struct TrustService: Sendable, Hashable {
        /// Which chain the service anchored: an open set, compared by value.
        public struct Purpose: Hashable, Sendable, CustomStringConvertible {
            /// The `ReportData/Type` URI the report gives it.
            public let typeURI: String
            /// Creates a purpose.
            public init(typeURI: String) { self.typeURI = typeURI }
            /// The type URI.
            public var description: String { typeURI }

            /// The signer's chain.
            public static let signature = Purpose(typeURI: "urn:certsign:reportdata:trusted-list-service:signature")
            /// The signature timestamp's TSA.
            public static let timestamp = Purpose(typeURI: "urn:certsign:reportdata:trusted-list-service:timestamp")
        }

        /// Which chain it anchored.
        public var purpose: Purpose
        /// The service's name (`ServiceName`).
        public var name: String
        /// The service's type (`ServiceTypeIdentifier` URI).
        public var typeURI: String
        /// The territory of the trusted list it is in (`SchemeTerritory`).
        public var territory: String
        /// The certificate of the service that ended the chain, when known (also a validation object).
        public var anchor: Certificate?

        /// Creates a reference to a service.
        public init(purpose: Purpose, name: String, typeURI: String, territory: String, anchor: Certificate?) {
            self.purpose = purpose
            self.name = name
            self.typeURI = typeURI
            self.territory = territory
            self.anchor = anchor
        }
    }
}
