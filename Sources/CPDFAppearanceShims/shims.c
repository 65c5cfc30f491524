#include "CPDFAppearanceShims.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

/* Images larger than this many pixels are refused before any pixel memory is taken. */
#define CPDFAPPEARANCE_MAX_PIXELS (64u * 1024u * 1024u)

static void cpdfappearance_message(char *message, size_t message_size, const char *text) {
    if (message_size == 0) return;
    snprintf(message, message_size, "%s", text);
}

int cpdfappearance_png_decode(const unsigned char *data, size_t size, unsigned char **pixels, unsigned int *width,
                              unsigned int *height, char *message, size_t message_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    *pixels = NULL;
    if (!png_image_begin_read_from_memory(&image, data, size)) {
        cpdfappearance_message(message, message_size, image.message);
        png_image_free(&image);
        return 1;
    }
    if (image.width == 0 || image.height == 0 ||
        (unsigned long long)image.width * image.height > CPDFAPPEARANCE_MAX_PIXELS) {
        cpdfappearance_message(message, message_size, "the image is empty or larger than 64 megapixels");
        png_image_free(&image);
        return 1;
    }
    image.format = PNG_FORMAT_RGBA;
    unsigned char *buffer = malloc(PNG_IMAGE_SIZE(image));
    if (buffer == NULL) {
        cpdfappearance_message(message, message_size, "out of memory");
        png_image_free(&image);
        return 1;
    }
    if (!png_image_finish_read(&image, NULL, buffer, 0, NULL)) {
        cpdfappearance_message(message, message_size, image.message);
        free(buffer);
        png_image_free(&image);
        return 1;
    }
    *pixels = buffer;
    *width = image.width;
    *height = image.height;
    png_image_free(&image);
    return 0;
}

struct cpdfappearance_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char text[JMSG_LENGTH_MAX];
    int warned;
};

static void cpdfappearance_jpeg_exit(j_common_ptr info) {
    struct cpdfappearance_jpeg_error *error = (struct cpdfappearance_jpeg_error *)info->err;
    (*info->err->format_message)(info, error->text);
    longjmp(error->jump, 1);
}

/* libjpeg reports damaged data (a truncated file, a corrupt segment) as warnings: keep the first. */
static void cpdfappearance_jpeg_message(j_common_ptr info, int level) {
    struct cpdfappearance_jpeg_error *error = (struct cpdfappearance_jpeg_error *)info->err;
    if (level < 0 && !error->warned) {
        error->warned = 1;
        (*info->err->format_message)(info, error->text);
    }
}

int cpdfappearance_jpeg_inspect(const unsigned char *data, size_t size, unsigned int *width, unsigned int *height,
                                int *components, int *inverted, char *message, size_t message_size) {
    struct jpeg_decompress_struct info;
    struct cpdfappearance_jpeg_error error;
    memset(&error, 0, sizeof error);
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cpdfappearance_jpeg_exit;
    error.manager.emit_message = cpdfappearance_jpeg_message;
    if (setjmp(error.jump)) {
        cpdfappearance_message(message, message_size, error.text);
        jpeg_destroy_decompress(&info);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if ((unsigned long long)info.image_width * info.image_height > CPDFAPPEARANCE_MAX_PIXELS) {
        cpdfappearance_message(message, message_size, "the image is larger than 64 megapixels");
        jpeg_destroy_decompress(&info);
        return 1;
    }
    *components = info.num_components;
    *inverted = info.saw_Adobe_marker && (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK);
    jpeg_start_decompress(&info);
    JSAMPARRAY row = (*info.mem->alloc_sarray)((j_common_ptr)&info, JPOOL_IMAGE,
                                    info.output_width * (JDIMENSION)info.output_components, 1);
    while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
    jpeg_finish_decompress(&info);
    *width = info.image_width;
    *height = info.image_height;
    jpeg_destroy_decompress(&info);
    if (error.warned) {
        cpdfappearance_message(message, message_size, error.text);
        return 1;
    }
    return 0;
}

int cpdfappearance_deflate(const unsigned char *data, size_t size, unsigned char **out, size_t *out_size) {
    uLongf bound = compressBound((uLong)size);
    unsigned char *buffer = malloc(bound);
    if (buffer == NULL) return 1;
    if (compress2(buffer, &bound, data, (uLong)size, Z_BEST_COMPRESSION) != Z_OK) {
        free(buffer);
        return 1;
    }
    *out = buffer;
    *out_size = bound;
    return 0;
}

void cpdfappearance_free(void *pointer) { free(pointer); }
