import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSigner: image appearances (PNG with its alpha as an SMask, JPEG as DCTDecode)")
struct PDFImageAppearanceTests {
    let signer: CyrillicSigner
    init() throws { signer = try CyrillicSigner() }

    @Test("text+image with a PNG seal, then an image-only JPEG: pdfimages lists them, they render in their boxes")
    func pngAndJPEGAppearances() async throws {
        let (directory, unsigned) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-appearance-image")
        let seal = try TestImages.sealPNG(in: directory)
        let photo = try TestImages.blueJPEG(in: directory)
        let first = directory.path("first.pdf")
        let box = PDFRectangle(x1: 300, y1: 80, x2: 560, y2: 160)
        try await signer.sign(
            unsigned,
            first,
            appearance: .init(placement: .rectangle(page: .number(1), box), imageFile: URL(fileURLWithPath: seal))
        )
        let second = directory.path("second.pdf")
        let photoBox = PDFRectangle(x1: 40, y1: 80, x2: 140, y2: 140)
        try await signer.sign(
            first,
            second,
            appearance: .init(
                placement: .rectangle(page: .number(1), photoBox),
                showsText: false,
                imageFile: URL(fileURLWithPath: photo)
            ),
            field: "Photo"
        )

        let images = try PDFRender.images(second).map { $0.split(separator: " ").map(String.init) }
        // Columns: page num type width height color comp bpc enc …
        let summary = images.map { [$0[2], $0[3], $0[4], $0[5], $0[8]].joined(separator: " ") }
        #expect(summary.sorted() == ["image 100 60 rgb jpeg", "image 64 64 rgb image", "smask 64 64 gray image"])

        let before = try PDFRender.page(unsigned)
        let once = try PDFRender.page(first)
        let twice = try PDFRender.page(second)
        AppearanceChecks.expectDrawnOnlyIn(box, before: before, after: once)
        AppearanceChecks.expectDrawnOnlyIn(photoBox, before: once, after: twice)
        // The seal is drawn 73.6 points square at the box's left (its padding 3.2 points): red at
        // its centre, the page's white in its transparent corner.
        let centre = once.pixel(340, once.height - 120)
        #expect(centre[0] > 180 && centre[1] < 80 && centre[2] < 80, "seal centre \(centre)")
        #expect(once.pixel(305, once.height - 85) == before.pixel(305, before.height - 85), "seal corner")
        let blue = twice.pixel(90, twice.height - 110)
        #expect(blue[2] > 200 && blue[0] < 60 && blue[1] < 60, "JPEG centre \(blue)")
        try PDFFixtures.expectOthersAccept(second, root: signer.pki.root, signatures: 2, in: directory)
        #expect(try signer.pki.verify(second).isValid)
    }

    @Test("an image that is not PNG or JPEG, or is damaged, is refused by name and nothing is written")
    func badImages() async throws {
        let (directory, unsigned) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-appearance-bad-image")
        let png = try directory.read(URL(fileURLWithPath: try TestImages.sealPNG(in: directory)).lastPathComponent)
        let jpeg = try directory.read(URL(fileURLWithPath: try TestImages.blueJPEG(in: directory)).lastPathComponent)
        let cases: [(name: String, bytes: [UInt8], message: String)] = [
            ("text.png", Array("not an image\n".utf8), "is not a PNG or JPEG image"),
            ("cut.png", Array(png.prefix(png.count / 2)), "the PNG image"),
            ("cut.jpg", Array(jpeg.prefix(jpeg.count / 2)), "the JPEG image"),
        ]
        for (name, bytes, message) in cases {
            let image = try directory.write(name, bytes)
            let output = directory.path("signed-\(name).pdf")
            let box = PDFRectangle(x1: 100, y1: 100, x2: 300, y2: 160)
            let error = await #expect(throws: CertificateProviderError.self) {
                try await signer.sign(
                    unsigned,
                    output,
                    appearance: .init(
                        placement: .rectangle(page: .number(1), box),
                        imageFile: URL(fileURLWithPath: image)
                    )
                )
            }
            #expect(error?.code == .imageUnusable, "\(name)")
            #expect(
                error?.reason.contains(image) == true && error?.reason.contains(message) == true,
                "\(error?.reason ?? "")"
            )
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
