internal import COpenSSL
internal import COpenSSLShims

extension EVPKeyHandle {
    /// A new RSA key of `bits` bits, or nil when OpenSSL refused (the error queue says why).
    package static func generateRSA(bits: Int) -> EVPKeyHandle? {
        COpenSSLShims_EVP_RSA_gen(UInt32(bits)).map { EVPKeyHandle(takingOwnershipOf: $0) }
    }

    /// A new EC key on `curve` (`P-256`, …), or nil when OpenSSL refused (the error queue says why).
    package static func generateEC(curve: String) -> EVPKeyHandle? {
        COpenSSLShims_EVP_EC_gen(curve).map { EVPKeyHandle(takingOwnershipOf: $0) }
    }

    /// Which step of GOST key generation OpenSSL refused.
    package enum GOSTGenerationFailure: Error {
        /// The gost engine is not loaded.
        case engineUnavailable
        /// OpenSSL has no context for GOST keys of that size.
        case noContext
        /// Key generation could not start.
        case initialization
        /// The parameter set is not one of the engine's.
        case unknownParameterSet
        /// The generation itself.
        case generation
    }

    /// A new GOST R 34.10-2012 key of `bits` (256 or 512) on the engine's parameter set `parameterSet`
    /// (`A`, `B`, `TCA`, …).
    /// - Throws: which step failed (the error queue says why).
    package static func generateGOST(bits: Int, parameterSet: String) throws(GOSTGenerationFailure) -> EVPKeyHandle {
        guard GOSTEngineLoader.load() else { throw .engineUnavailable }
        guard
            let context = EVP_PKEY_CTX_new_id(bits == 512 ? NID_id_GostR3410_2012_512 : NID_id_GostR3410_2012_256, nil)
        else { throw .noContext }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .initialization }
        guard EVP_PKEY_CTX_ctrl_str(context, "paramset", parameterSet) > 0 else { throw .unknownParameterSet }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(context, &key) == 1, let key else { throw .generation }
        return EVPKeyHandle(takingOwnershipOf: key)
    }

    /// Reads the first PEM private key of `pem` (PKCS#8, traditional RSA/EC, encrypted or not).
    /// - Parameter password: the NUL-terminated password of an encrypted key; nil never prompts on
    ///   the terminal (an encrypted key then fails).
    /// - Returns: the key, or nil when there is none or the password does not decrypt it (the error
    ///   queue says why).
    /// - Throws: `OpenSSLError` when the input is too large for a memory BIO.
    package static func privateKey(pem: [UInt8], password: UnsafePointer<CChar>?) throws -> EVPKeyHandle? {
        GOSTEngineLoader.load()
        let key: OpaquePointer? = try MemoryBIO.withReadBIO(pem) { bio in
            if let password {
                return PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: password))
            }
            // An empty passphrase callback result stops OpenSSL from prompting on the terminal.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        return key.map { EVPKeyHandle(takingOwnershipOf: $0) }
    }

    /// Reads a DER private key (unencrypted PKCS#8, or a traditional RSA/EC key), or nil when the
    /// bytes are none (the error queue says why).
    package static func privateKey(der: [UInt8]) -> EVPKeyHandle? {
        GOSTEngineLoader.load()
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        return key.map { EVPKeyHandle(takingOwnershipOf: $0) }
    }

    /// The private key as PKCS#8 PEM, encrypted with AES-256-CBC when a password (NUL-terminated,
    /// with its length in bytes) is given, or nil when OpenSSL could not encode it (the error queue
    /// says why).
    /// - Throws: `OpenSSLError` when no memory BIO could be allocated.
    package func pkcs8PEM(password: (cString: UnsafePointer<CChar>, count: Int)?) throws -> [UInt8]? {
        var written: Int32 = 0
        let bytes = try MemoryBIO.collecting { bio in
            if let password {
                written = PEM_write_bio_PKCS8PrivateKey(
                    bio,
                    pointer,
                    EVP_aes_256_cbc(),
                    password.cString,
                    Int32(password.count),
                    nil,
                    nil
                )
            } else {
                written = PEM_write_bio_PKCS8PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
            }
        }
        return written == 1 ? bytes : nil
    }

    /// The public key as PEM (`-----BEGIN PUBLIC KEY-----`); empty when OpenSSL could not encode it.
    package var publicKeyPEM: [UInt8] {
        (try? MemoryBIO.collecting { bio in _ = PEM_write_bio_PUBKEY(bio, pointer) }) ?? []
    }
}
