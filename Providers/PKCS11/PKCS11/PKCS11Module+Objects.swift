internal import CPKCS11
internal import CPKCS11Shims

extension PKCS11Module {
    /// The objects of `objectClass` with the given label and/or ID (`C_FindObjects*`).
    func findObjects(
        session: CK_SESSION_HANDLE,
        objectClass: CK_OBJECT_CLASS,
        label: String? = nil,
        id: [UInt8]? = nil
    ) throws -> [CK_OBJECT_HANDLE] {
        var values: [[UInt8]] = [withUnsafeBytes(of: objectClass) { Array($0) }]
        var types: [CK_ATTRIBUTE_TYPE] = [CK_ATTRIBUTE_TYPE(CKA_CLASS)]
        if let label {
            values.append(Array(label.utf8))
            types.append(CK_ATTRIBUTE_TYPE(CKA_LABEL))
        }
        if let id {
            values.append(id)
            types.append(CK_ATTRIBUTE_TYPE(CKA_ID))
        }
        // Copy every value into memory that stays put for the three calls.
        let buffers = values.map { value -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(value.count, 1), alignment: 8)
            buffer.copyBytes(from: value)
            return buffer
        }
        defer { for buffer in buffers { buffer.deallocate() } }
        var template = zip(types, zip(buffers, values)).map { type, pair in
            CK_ATTRIBUTE(type: type, pValue: pair.0.baseAddress, ulValueLen: CK_ULONG(pair.1.count))
        }
        try call("C_FindObjectsInit") { $0.C_FindObjectsInit?(session, &template, CK_ULONG(template.count)) }
        var found: [CK_OBJECT_HANDLE] = []
        var batch = [CK_OBJECT_HANDLE](repeating: 0, count: 32)
        var failure: PKCS11Failure?
        while true {
            var count: CK_ULONG = 0
            let rv = self.rv { $0.C_FindObjects?(session, &batch, CK_ULONG(batch.count), &count) }
            guard rv == CK_RV(CKR_OK) else {
                failure = PKCS11Failure(function: "C_FindObjects", rv: rv)
                break
            }
            if count == 0 { break }
            found += batch.prefix(Int(count))
        }
        let finalRV = self.rv { $0.C_FindObjectsFinal?(session) }
        if let failure { throw failure }
        try check(finalRV, "C_FindObjectsFinal")
        return found
    }

    /// The value of one attribute; nil when the object does not have it, or it is sensitive.
    func attribute(session: CK_SESSION_HANDLE, object: CK_OBJECT_HANDLE, _ type: CK_ATTRIBUTE_TYPE) throws -> [UInt8]? {
        var template = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        let rv = self.rv { $0.C_GetAttributeValue?(session, object, &template, 1) }
        if rv == CK_RV(CKR_ATTRIBUTE_TYPE_INVALID) || rv == CK_RV(CKR_ATTRIBUTE_SENSITIVE) { return nil }
        try check(rv, "C_GetAttributeValue")
        if template.ulValueLen == CPKCS11Shims_unavailable_information() { return nil }
        var value = [UInt8](repeating: 0, count: Int(template.ulValueLen))
        if value.isEmpty { return [] }
        try value.withUnsafeMutableBytes { raw in
            template.pValue = raw.baseAddress
            try call("C_GetAttributeValue") { $0.C_GetAttributeValue?(session, object, &template, 1) }
        }
        return Array(value.prefix(Int(template.ulValueLen)))
    }

    /// A `CK_ULONG` attribute (CKA_KEY_TYPE, …), nil when absent.
    func ulongAttribute(
        session: CK_SESSION_HANDLE,
        object: CK_OBJECT_HANDLE,
        _ type: CK_ATTRIBUTE_TYPE
    ) throws -> CK_ULONG? {
        guard let bytes = try attribute(session: session, object: object, type),
            bytes.count == MemoryLayout<CK_ULONG>.size
        else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: CK_ULONG.self) }
    }

    /// A `CK_BBOOL` attribute, false when absent.
    func boolAttribute(session: CK_SESSION_HANDLE, object: CK_OBJECT_HANDLE, _ type: CK_ATTRIBUTE_TYPE) throws -> Bool {
        guard let bytes = try attribute(session: session, object: object, type), let first = bytes.first else {
            return false
        }
        return first != 0
    }

    /// The label (CKA_LABEL) as text.
    func label(session: CK_SESSION_HANDLE, object: CK_OBJECT_HANDLE) throws -> String {
        String(
            decoding: try attribute(session: session, object: object, CK_ATTRIBUTE_TYPE(CKA_LABEL)) ?? [],
            as: UTF8.self
        )
    }
}
