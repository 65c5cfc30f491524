// certsign-fuzz entry point.
//
// Fuzz build (`make fuzz`: -sanitize=fuzzer,address and -DCERTSIGN_LIBFUZZER): libFuzzer links its
// own main(), which calls LLVMFuzzerInitialize and LLVMFuzzerTestOneInput from CertSignFuzzTargets,
// so this file compiles to nothing.
//
// Plain build (`swift build`, CI): a replay tool. `CERTSIGN_FUZZ_TARGET=<target> certsign-fuzz
// FILE_OR_DIR...` runs every input through the same target once, so a corpus or a crash input can
// be replayed without sanitizer flags. Exit 0 when every input ran, 1 when one could not be read,
// 64 for usage errors.

#ifndef CERTSIGN_LIBFUZZER

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, "certsign-fuzz: cannot open %s\n", path);
        return 1;
    }
    size_t capacity = 4096, size = 0;
    uint8_t *data = malloc(capacity);
    size_t got;
    while (data != NULL && (got = fread(data + size, 1, capacity - size, file)) > 0) {
        size += got;
        if (size == capacity) {
            uint8_t *grown = realloc(data, capacity * 2);
            if (grown == NULL) { free(data); data = NULL; break; }
            data = grown;
            capacity *= 2;
        }
    }
    fclose(file);
    if (data == NULL) {
        fprintf(stderr, "certsign-fuzz: out of memory reading %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int replay(const char *path, unsigned *count) {
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "certsign-fuzz: no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(info.st_mode)) {
        *count += 1;
        return replay_file(path);
    }
    DIR *dir = opendir(path);
    if (dir == NULL) {
        fprintf(stderr, "certsign-fuzz: cannot list %s\n", path);
        return 1;
    }
    int failed = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (child == NULL) { failed = 1; break; }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        failed |= replay(child, count);
        free(child);
    }
    closedir(dir);
    return failed;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: CERTSIGN_FUZZ_TARGET=<target> certsign-fuzz FILE_OR_DIR...\n"
                        "(a replay build; `make fuzz` builds the libFuzzer one)\n");
        return 64;
    }
    LLVMFuzzerInitialize(&argc, &argv);
    int failed = 0;
    unsigned count = 0;
    for (int index = 1; index < argc; index++) {
        if (argv[index][0] == '-') continue;  // libFuzzer flags are accepted and ignored
        failed |= replay(argv[index], &count);
    }
    fprintf(stderr, "certsign-fuzz: replayed %u inputs\n", count);
    return failed;
}

#endif
