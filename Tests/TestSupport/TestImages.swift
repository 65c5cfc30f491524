import Foundation

/// Images made by real tools: a PNG with an alpha channel written by Python's zlib, and a JPEG
/// rendered by poppler's `pdftoppm -jpeg`.
public enum TestImages {
    /// A `size` × `size` RGBA PNG: an opaque red disc; outside it fully transparent black, so a
    /// lost alpha channel would paint the corners black.
    public static func sealPNG(size: Int = 64, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("seal-\(UUID().uuidString).png")
        let script = """
            import struct, sys, zlib
            n = int(sys.argv[2])
            rows = b''
            for y in range(n):
                rows += b'\\x00'
                for x in range(n):
                    inside = (x - n / 2 + 0.5) ** 2 + (y - n / 2 + 0.5) ** 2 <= (n / 2 - 1) ** 2
                    rows += bytes([220, 20, 20, 255]) if inside else bytes([0, 0, 0, 0])
            def chunk(kind, data):
                return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
            png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', n, n, 8, 6, 0, 0, 0))
            png += chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')
            open(sys.argv[1], 'wb').write(png)
            """
        _ = try ExternalTool.run("python3", ["-c", script, path, "\(size)"]).requireSuccess()
        return path
    }

    /// A 100 × 60 pixel JPEG, solid blue, rendered by `pdftoppm -jpeg` from a one-page PDF.
    public static func blueJPEG(in directory: TemporaryDirectory) throws -> String {
        let content = "0 0 1 rg 0 0 100 60 re f"
        let draft = try directory.write(
            "blue-draft.pdf",
            text: "%PDF-1.7\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [3 0 R] "
                + "/Count 1>> endobj\n3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 100 60] /Contents 4 0 R>> "
                + "endobj\n4 0 obj <</Length \(content.utf8.count)>> stream\n\(content)\nendstream endobj\n"
                + "trailer <</Root 1 0 R>>\n%%EOF\n"
        )
        let stem = directory.path("blue-\(UUID().uuidString)")
        _ = try ExternalTool.run("pdftoppm", ["-jpeg", "-r", "72", "-singlefile", draft, stem]).requireSuccess()
        return stem + ".jpg"
    }
}
