import Foundation

/// The signer outside the package in the two-phase rows: a plain C program on libcrypto, built with
/// `cc` in the scratch directory when the bench runs. It reads `certsign prepare --json`, signs each
/// document's data to sign with the `.p12`'s key (RSA PKCS #1 v1.5, the prepared digest algorithm),
/// as `openssl pkeyutl -sign` would without a process per document, and writes `NAME.sig` for each
/// `NAME.pending`. It signs on every core (the key loaded once, then one forked process per core), as
/// `certsign sign` does. It ships nowhere.
struct OutsideSigner {
    /// The built program.
    let path: String

    /// Builds the program, or notes why not (no `cc`, no OpenSSL headers) and returns nil.
    static func build(_ harness: BenchHarness) -> OutsideSigner? {
        harness.buildCProgram(
            "outside-signer",
            source: outsideSignerSource,
            libraries: ["-lcrypto"],
            skipping: "C outside signer not built (the Python one signs)"
        ).map(OutsideSigner.init(path:))
    }
}

/// The C source of ``OutsideSigner``.
private let outsideSignerSource = #"""
    /* outside-signer P12 PREPARED.json DIR: signs each prepared document's dataToSignHex with the key of
     * P12 (password in $P12PASS), RSA PKCS #1 v1.5 with its digestAlgorithm, into DIR/NAME.sig for
     * NAME.pending; one forked process per core signs every n-th document. Reads the JSON certsign
     * prepare --json prints (flat result objects); exits 1 on anything it cannot sign. */
    #include <openssl/evp.h>
    #include <openssl/pkcs12.h>
    #include <openssl/rsa.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <sys/wait.h>
    #include <unistd.h>

    typedef struct { char *data, *pending, *digest, *scheme, *status; } Item;

    /* The string value of "key" inside [start, end), copied, or NULL. */
    static char *field(const char *start, const char *end, const char *key) {
        char pattern[64];
        snprintf(pattern, sizeof pattern, "\"%s\"", key);
        const char *at = start;
        while ((at = strstr(at, pattern)) && at < end) {
            const char *p = at + strlen(pattern);
            while (p < end && (*p == ' ' || *p == ':')) p++;
            if (p >= end || *p != '"') return NULL;
            const char *q = ++p;
            while (q < end && *q != '"') { if (*q == '\\') return NULL; q++; }
            char *value = malloc(q - p + 1);
            memcpy(value, p, q - p);
            value[q - p] = 0;
            return value;
        }
        return NULL;
    }

    static int nibble(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

    /* Signs one item with the worker's key context (RSA PKCS #1 v1.5, set up once per worker). */
    static int sign(EVP_PKEY *key, EVP_PKEY_CTX **context, const EVP_MD **md, Item *item, const char *dir) {
        if (!item->data || !item->pending || !item->digest || !item->scheme || !item->status
            || strcmp(item->status, "prepared") != 0 || !strstr(item->scheme, "pkcs1")) {
            fprintf(stderr, "cannot sign %s\n", item->pending ? item->pending : "a result");
            return 1;
        }
        if (!*md || strcmp(EVP_MD_get0_name(*md), item->digest) != 0) {
            *md = EVP_get_digestbyname(item->digest);
            EVP_PKEY_CTX_free(*context);
            *context = EVP_PKEY_CTX_new(key, NULL);
            if (!*md || !*context || EVP_PKEY_sign_init(*context) != 1
                || EVP_PKEY_CTX_set_rsa_padding(*context, RSA_PKCS1_PADDING) != 1
                || EVP_PKEY_CTX_set_signature_md(*context, *md) != 1) {
                fprintf(stderr, "cannot sign with %s\n", item->digest);
                return 1;
            }
        }
        size_t length = strlen(item->data) / 2;
        unsigned char *data = malloc(length), digest[EVP_MAX_MD_SIZE], signature[1024];
        for (size_t i = 0; i < length; i++) data[i] = nibble(item->data[2 * i]) << 4 | nibble(item->data[2 * i + 1]);
        unsigned int digestLength = 0;
        size_t signatureLength = sizeof signature;
        if (EVP_Digest(data, length, digest, &digestLength, *md, NULL) != 1
            || EVP_PKEY_sign(*context, signature, &signatureLength, digest, digestLength) != 1) {
            fprintf(stderr, "signing %s failed\n", item->pending);
            return 1;
        }
        free(data);
        const char *name = strrchr(item->pending, '/');
        name = name ? name + 1 : item->pending;
        size_t stem = strlen(name) - strlen(".pending");
        char path[4096];
        snprintf(path, sizeof path, "%s/%.*s.sig", dir, (int)stem, name);
        FILE *out = fopen(path, "wb");
        if (!out || fwrite(signature, 1, signatureLength, out) != signatureLength || fclose(out) != 0) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        return 0;
    }

    int main(int argc, char **argv) {
        if (argc != 4 || !getenv("P12PASS")) { fprintf(stderr, "usage: P12PASS=... %s P12 JSON DIR\n", argv[0]); return 2; }
        FILE *file = fopen(argv[1], "rb");
        PKCS12 *p12 = file ? d2i_PKCS12_fp(file, NULL) : NULL;
        EVP_PKEY *key = NULL;
        if (!p12 || PKCS12_parse(p12, getenv("P12PASS"), &key, NULL, NULL) != 1 || !key) {
            fprintf(stderr, "cannot read the key of %s\n", argv[1]);
            return 1;
        }
        FILE *json = fopen(argv[2], "rb");
        if (!json) { perror(argv[2]); return 1; }
        fseek(json, 0, SEEK_END);
        long size = ftell(json);
        rewind(json);
        char *text = malloc(size + 1);
        if (fread(text, 1, size, json) != (size_t)size) { perror(argv[2]); return 1; }
        text[size] = 0;
        const char *results = strstr(text, "\"results\"");
        size_t count = 0, capacity = 1024;
        Item *items = malloc(capacity * sizeof(Item));
        for (const char *open = results ? strchr(results, '{') : NULL; open; open = strchr(open, '{')) {
            const char *close = strchr(open, '}');
            if (!close) break;
            if (count == capacity) items = realloc(items, (capacity *= 2) * sizeof(Item));
            items[count++] = (Item){field(open, close, "dataToSignHex"), field(open, close, "pendingFile"),
                                    field(open, close, "digestAlgorithm"), field(open, close, "scheme"),
                                    field(open, close, "status")};
            open = close;
        }
        long workers = sysconf(_SC_NPROCESSORS_ONLN);
        if (workers < 1) workers = 1;
        for (long worker = 0; worker < workers; worker++) {
            pid_t pid = fork();
            if (pid == 0) {
                EVP_PKEY_CTX *context = NULL;
                const EVP_MD *md = NULL;
                for (size_t i = worker; i < count; i += workers)
                    if (sign(key, &context, &md, &items[i], argv[3])) _exit(1);
                _exit(0);
            }
            if (pid < 0) { perror("fork"); return 1; }
        }
        int failed = 0, status;
        while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return failed || count == 0;
    }
    """#
