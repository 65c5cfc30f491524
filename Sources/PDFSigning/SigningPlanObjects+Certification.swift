import CertificateProviders

/// A certification signature: the catalog's `/Perms /DocMDP` names the new signature dictionary,
/// whose `/Reference` carries the DocMDP transform (``SigningPlanObjects/docMDPReference(_:)``).
extension SigningPlanObjects {
    /// Points the catalog's `/Perms /DocMDP` at the signature being made (other `/Perms` entries,
    /// such as usage rights, are kept); the catalog is rewritten in the update.
    /// - Throws: ``CertificateProviderError/Code/pdfCertificationNotFirst`` when the document has a
    ///   signature (or a document timestamp) already: certification must be the first.
    mutating func certify(_ permission: PDFDocMDPPermission) throws {
        let signed = PDFFields(document: document).all.filter { $0.isSignature && document.key($0.handle, "/V") != nil }
        let certified = document.key(document.root, "/Perms").flatMap { document.key($0, "/DocMDP") } != nil
        if let first = signed.first {
            throw CertificateProviderError(
                .pdfCertificationNotFirst,
                "'\(input)' is signed already (field '\(first.name)'): a certification signature "
                    + "(\(permission)) must be the document's first signature; sign it without certification, "
                    + "or certify the unsigned original"
            )
        }
        if certified {
            throw CertificateProviderError(
                .pdfCertificationNotFirst,
                "'\(input)' is certified already (its catalog's /Perms names a DocMDP signature): a certification "
                    + "signature must be the document's first signature"
            )
        }
        let root = document.root
        let permissions = document.newDictionary()
        if let existing = document.key(root, "/Perms") {
            for key in document.keys(existing) {
                if let value = document.key(existing, key) { document.set(permissions, key, value) }
            }
        }
        document.set(permissions, "/DocMDP", document.newName(SigningPlan.signaturePlaceholder))
        document.set(root, "/Perms", permissions)
        rewritesCatalog = true
    }

    /// The signature dictionary's `/Reference` entry for a certification signature: one signature
    /// reference dictionary with the DocMDP transform and its permission.
    static func docMDPReference(_ permission: PDFDocMDPPermission) -> String {
        "/Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams << /Type /TransformParams "
            + "/P \(permission.rawValue) /V /1.2 >> >>]"
    }
}
