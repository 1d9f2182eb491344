/*
 * The NeuroChem importer (models/neurochem.h) on a model's files, which the
 * input holds as an archive: each file a line "%%% NAME" followed by its
 * bytes up to the next such line. A NAME ending in ".nnf" holds the network
 * text, which the target compresses as NeuroChem files are ("<length>=\n"
 * and a bzip2 stream), so that the fuzzer edits the text, not the
 * compressed bytes; "NAME.nnf.raw" is written as NAME.nnf as it is. The
 * import starts at model.info. What imports is written as a model file and
 * loaded and evaluated (fuzz_model.h).
 */
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_model.h"
#include "fuzz_util.h"
#include "models/model_file.h"
#include "models/neurochem.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    FUZZ_CHECK(fuzz_scratch_dir(), "cannot make a scratch directory");
    fuzz_model_init(*argc, *argv);
    return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    const size_t k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

/* A name that stays inside the scratch directory. */
static int good_name(const char *s, size_t n)
{
    if (n == 0 || n > 200 || s[0] == '/' || memmem(s, n, "..", 2))
        return 0;
    for (size_t k = 0; k < n; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
              s[k] == '.' || s[k] == '_' || s[k] == '-' || s[k] == '/'))
            return 0;
    return 1;
}

/* Texts compressed lately: a mutation changes one file of an archive, and
 * compressing the others again took a third of an input's time. */
#define NNF_CACHE 64
static struct {
    char *text, *file;
    size_t len, file_len;
} nnf_cache[NNF_CACHE];

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t k = 0; k < n; k++)
        h = (h ^ (uint8_t)s[k]) * 1099511628211ULL;
    return h;
}

/* The text as a NeuroChem .nnf: its length, "=\n", a bzip2 stream of it. */
static void write_nnf(const char *name, const char *text, size_t len)
{
    const size_t slot = fnv1a(text, len) % NNF_CACHE;
    if (!nnf_cache[slot].text || nnf_cache[slot].len != len || memcmp(nnf_cache[slot].text, text, len)) {
        unsigned cap = (unsigned)(len + len / 100 + 600);
        char *buf = malloc((size_t)cap + 32), *copy = malloc(len ? len : 1);
        FUZZ_CHECK(buf && copy, "out of memory");
        const int header = snprintf(buf, 32, "%zu=\n", len);
        /* Blocks of 100 kB: the texts are small, and compressing stays quick. */
        const int rc = BZ2_bzBuffToBuffCompress(buf + header, &cap, (char *)text, (unsigned)len, 1, 0, 0);
        FUZZ_CHECK(rc == BZ_OK, "bzip2 failed (%d)", rc);
        memcpy(copy, text, len);
        free(nnf_cache[slot].text);
        free(nnf_cache[slot].file);
        nnf_cache[slot].text = copy;
        nnf_cache[slot].len = len;
        nnf_cache[slot].file = buf;
        nnf_cache[slot].file_len = (size_t)header + cap;
    }
    fuzz_write_file(name, nnf_cache[slot].file, nnf_cache[slot].file_len);
}

static void write_entry(const char *name, size_t name_len, const uint8_t *data, size_t size)
{
    if (!good_name(name, name_len))
        return;
    const int raw = ends_with(name, name_len, ".nnf.raw");
    char file[256];
    snprintf(file, sizeof file, "%.*s", (int)(raw ? name_len - 4 : name_len), name);
    /* A name clashing with a directory, or a directory with a file, is skipped. */
    if (raw || !ends_with(name, name_len, ".nnf"))
        fuzz_write_file(file, data, size);
    else
        write_nnf(file, (const char *)data, size);
}

static const char marker[] = "%%% ";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_scratch_clear();
    /* Entries: a marker at the start or after a line feed, the name to the line's end. */
    const uint8_t *p = data, *end = data + size;
    if (size < 4 || memcmp(p, marker, 4))
        p = memmem(p, size, "\n%%% ", 5) ? (const uint8_t *)memmem(p, size, "\n%%% ", 5) + 1 : end;
    while (p < end) {
        const uint8_t *name = p + 4, *eol = memchr(name, '\n', (size_t)(end - name));
        if (!eol)
            break;
        const uint8_t *next = memmem(eol, (size_t)(end - eol), "\n%%% ", 5);
        const uint8_t *stop = next ? next : end;
        /* The line feed ending the name may begin the next marker: no bytes then. */
        write_entry((const char *)name, (size_t)(eol - name), eol + 1, stop > eol ? (size_t)(stop - eol - 1) : 0);
        p = next ? next + 1 : end;
    }
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    const mlff_status s = mlff_neurochem_import(fuzz_path("model.info"), NULL, &mf, &err);
    if (s != MLFF_OK) {
        FUZZ_CHECK(!mf, "a failed import gave a model");
        FUZZ_CHECK(s == MLFF_ERROR_IO || s == MLFF_ERROR_MODEL_FORMAT || s == MLFF_ERROR_UNSUPPORTED ||
                       s == MLFF_ERROR_OUT_OF_MEMORY,
                   "import: status %d: %s", (int)s, err.message);
        FUZZ_CHECK(err.message[0], "import: status %d without a message", (int)s);
        return 0;
    }
    const mlff_status w = mlff_model_file_write(mf, fuzz_path("imported.mlff"), &err);
    mlff_model_file_destroy(mf);
    FUZZ_CHECK(w == MLFF_OK, "an imported model does not write: %s", err.message);
    fuzz_model_load_and_run(fuzz_path("imported.mlff"));
    return 0;
}
