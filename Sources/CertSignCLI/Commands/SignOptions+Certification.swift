import PDFSigning

extension Commands.SignOptions {
    /// `--certify 1|2|3`: a certification signature.
    static var certificationOptions: [OptionBinding<Self>] {
        let levels = PDFDocMDPPermission.allCases.map { String($0.rawValue) }
        return [
            .value(
                \.certify,
                "--certify",
                "1|2|3",
                "PAdES: a certification signature (the PDF's first signature) allowing later revisions no\n"
                    + "changes (1), form filling and signing (2), or also annotations (3)",
                type: .choice(levels)
            ) { text in
                guard let permission = Int(text).flatMap(PDFDocMDPPermission.init(rawValue:)) else {
                    throw InvalidValue(message: "unknown --certify '\(text)' (\(Help.alternatives(levels)))")
                }
                return permission
            }
        ]
    }

    /// `--certify` goes with PAdES only.
    func validateCertification() throws {
        if certify != nil, format != .pades {
            throw InvalidValue(
                message: "--certify goes with --format pades (a certification signature lives in the PDF)"
            )
        }
    }
}
