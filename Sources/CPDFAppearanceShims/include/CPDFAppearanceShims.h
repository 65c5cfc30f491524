#ifndef C_PDF_APPEARANCE_SHIMS_H
#define C_PDF_APPEARANCE_SHIMS_H
/*
 * Plain C entry points over libpng's simplified API, libjpeg and zlib for PDFAppearance: libjpeg and
 * libpng report errors through longjmp and their setup uses macros, neither of which Swift can use.
 * Every function returns 0 on success; on failure it writes a NUL-terminated reason into `message`.
 * Buffers they allocate are released with cpdfappearance_free.
 */
#include <stddef.h>

/* Decodes a whole PNG into 8-bit RGBA pixels, row after row (width * 4 bytes each). */
int cpdfappearance_png_decode(const unsigned char *data, size_t size, unsigned char **pixels, unsigned int *width,
                              unsigned int *height, char *message, size_t message_size);

/* Reads a whole JPEG (header and every scanline), refusing damaged data, and reports its size, its number
 * of components (1 gray, 3 color, 4 CMYK) and whether its CMYK values are stored inverted (Adobe). */
int cpdfappearance_jpeg_inspect(const unsigned char *data, size_t size, unsigned int *width, unsigned int *height,
                                int *components, int *inverted, char *message, size_t message_size);

/* Compresses `data` with zlib (the PDF FlateDecode filter). */
int cpdfappearance_deflate(const unsigned char *data, size_t size, unsigned char **out, size_t *out_size);

/* Frees a buffer the functions above allocated. */
void cpdfappearance_free(void *pointer);

#endif
