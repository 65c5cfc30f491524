import CertificateProviders
import Foundation

/// A state kept across runs (``DSSEmulator/Configuration/stateDirectory``) and certificates that
/// name the emulator's own revocation routes (``DSSEmulator/Configuration/issuesRevocationURLs``).
extension DSSEmulator {
    /// The store and CA services of the state in `directory`, made from `seed` (or the standard
    /// seed) when it holds none yet.
    static func openState(in directory: String, seed: EmulatorSeed?) throws -> (EmulatorStore, EmulatorPKI) {
        let file: EmulatorStateFile
        if let saved = try EmulatorStateFile.load(from: directory) {
            file = saved
        } else {
            let seed = try seed ?? EmulatorSeed.standard()
            file = try EmulatorStateFile.create(
                in: directory,
                try EmulatorStateDocument(seed: seed, pki: try EmulatorPKI(seed: seed))
            )
        }
        let document = file.current
        let seed = try document.makeSeed()
        let store = EmulatorStore(
            seed: seed,
            signatures: document.storedSignatures,
            nextSignatureID: document.nextSignatureID,
            stateFile: file
        )
        let pki = try EmulatorPKI(
            seed: seed,
            timestampIdentity: try document.makeTimestampIdentity(),
            knownSerials: document.knownSerials,
            baseURL: document.baseURL.flatMap(URL.init(string:))
        )
        return (store, pki)
    }

    /// Binds `server`: with a state, port 0 and a port remembered from the last run, that port
    /// first (so the URLs in the certificates stay valid), any free one when it is taken.
    func bind(_ server: MicroHTTPServer) throws -> UInt16 {
        if configuration.port == 0, let last = store.stateFile?.current.port, last != 0,
            let port = try? server.start(host: configuration.host, port: last)
        {
            return port
        }
        return try server.start(host: configuration.host, port: configuration.port)
    }

    /// After binding: gives the certificates the revocation URLs of `url` when they name others,
    /// and records the port and URL in the state.
    func started(at url: URL, port: UInt16) throws {
        let urls = EmulatorPKI.RevocationURLs(baseURL: url)
        let reissue = configuration.issuesRevocationURLs && pki.revocationURLs != urls
        if reissue {
            let users = try store.seed.users.map { user in
                var user = user
                user.certificates = try user.certificates.map { record in
                    var record = record
                    record.identity =
                        try pki.reissue(record.identity, extensions: EmulatorPKI.signerExtensions, urls: urls)
                        ?? record.identity
                    return record
                }
                return user
            }
            try pki.reissueTimestampCertificate(urls: urls)
            store.replaceUsers(users)
        }
        try store.stateFile?.update { document in
            document.port = port
            guard reissue else { return }
            document.baseURL = url.absoluteString
            try document.setUsers(store.seed.users)
            document.timestampAuthority = try EmulatorStateDocument.encode(pki.timestampIdentity)
            document.knownSerials = pki.knownSerials.sorted()
        }
    }
}
