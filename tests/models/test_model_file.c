/*
 * The mlff model file: round trip of metadata and tensors of every dtype,
 * the documented byte layout (checked by an independent walk), determinism,
 * and damage: every flipped byte, every truncation, wrong magic, other
 * versions, and internally inconsistent files with a valid checksum must all
 * give MLFF_ERROR_MODEL_FORMAT with a message naming the file (never a
 * crash; the suite also runs under ASan/UBSan).
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "models/model_file.h"
#include "tests/common/check.h"
#include "neurochem_writer.h" /* temp dirs and whole-file helpers */


/* ------------------------------------------------------------------------ */
/* A sample model file                                                      */

static const float f32_data[3 * 5] = {1.5f, -2.25f, 3e-8f, 1e30f, -0.0f, 7, 8, 9, 10, 11,
                                      12, 13, 14, 15, 0.1f};
static const double f64_data[4] = {3.141592653589793, -1e-300, 2.5e300, 0.1};
static const int32_t i32_data[2 * 3] = {0, 1, -1, 2147483647, -2147483647 - 1, 42};

static mlff_model_file *sample(void)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = mlff_model_file_create();
    if (!mf)
        return NULL;
    static float big[100 * 7];
    for (int i = 0; i < 700; i++)
        big[i] = (float)i * 0.25f - 3.0f;
    mlff_status s = MLFF_OK;
    if (s == MLFF_OK) s = mlff_model_file_set_meta(mf, "family", "test", &err);
    if (s == MLFF_OK) s = mlff_model_file_set_meta(mf, "name", "sample", &err);
    if (s == MLFF_OK) s = mlff_model_file_set_meta(mf, "empty", "", &err);
    if (s == MLFF_OK) s = mlff_model_file_set_meta(mf, "utf8", "Ångström – ½", &err);
    if (s == MLFF_OK) s = mlff_model_file_add_tensor(mf, "t_f32", MLFF_DTYPE_F32, 3, 5, f32_data, &err);
    if (s == MLFF_OK) s = mlff_model_file_add_tensor(mf, "t_f64", MLFF_DTYPE_F64, 4, 1, f64_data, &err);
    if (s == MLFF_OK) s = mlff_model_file_add_tensor(mf, "t_i32", MLFF_DTYPE_I32, 2, 3, i32_data, &err);
    if (s == MLFF_OK) s = mlff_model_file_add_tensor(mf, "empty", MLFF_DTYPE_F32, 0, 4, NULL, &err);
    if (s == MLFF_OK) s = mlff_model_file_add_tensor(mf, "big", MLFF_DTYPE_F32, 100, 7, big, &err);
    if (s != MLFF_OK) {
        fprintf(stderr, "building the sample failed: %s\n", err.message);
        mlff_model_file_destroy(mf);
        return NULL;
    }
    return mf;
}

static size_t tensor_size(const mlff_model_tensor *t)
{
    return (size_t)(t->rows * t->cols) * mlff_dtype_size(t->dtype);
}

static void check_same(const mlff_model_file *a, const mlff_model_file *b)
{
    CHECK(a->n_meta == b->n_meta, "metadata count %zu vs %zu", a->n_meta, b->n_meta);
    for (size_t i = 0; i < a->n_meta && i < b->n_meta; i++)
        CHECK(!strcmp(a->meta[i].key, b->meta[i].key) && !strcmp(a->meta[i].value, b->meta[i].value),
              "metadata %zu: %s=%s vs %s=%s", i, a->meta[i].key, a->meta[i].value, b->meta[i].key,
              b->meta[i].value);
    CHECK(a->n_tensors == b->n_tensors, "tensor count %zu vs %zu", a->n_tensors, b->n_tensors);
    for (size_t i = 0; i < a->n_tensors && i < b->n_tensors; i++) {
        const mlff_model_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        CHECK(!strcmp(x->name, y->name) && x->dtype == y->dtype && x->rows == y->rows &&
                  x->cols == y->cols,
              "tensor %zu: %s vs %s", i, x->name, y->name);
        if (x->dtype == y->dtype && x->rows == y->rows && x->cols == y->cols)
            CHECK(memcmp(x->data, y->data, tensor_size(x)) == 0, "tensor %s: data differs", x->name);
    }
}

/* ------------------------------------------------------------------------ */
/* An independent walk of the documented layout                             */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Positions of fields that the damage tests edit. */
typedef struct layout {
    size_t meta_key_len[8];      /* position of each metadata key's u32 length */
    size_t tensor_entry[8];      /* position of each tensor's u32 name length */
    size_t tensor_fields[8];     /* position of each tensor's dtype (rows, cols, offset follow) */
    size_t n_meta, n_tensors;
    size_t directory_end;
} layout;

static int walk(const uint8_t *b, size_t size, layout *l)
{
    memset(l, 0, sizeof *l);
    if (size < 64 || memcmp(b, "MLFFMODL", 8) != 0 || le(b + 8, 4) != 1 || le(b + 12, 4) != 0)
        return 0;
    l->n_meta = le(b + 16, 8);
    l->n_tensors = le(b + 24, 8);
    if (l->n_meta > 8 || l->n_tensors > 8)
        return 0;
    size_t pos = 32;
    for (size_t i = 0; i < l->n_meta; i++) {
        l->meta_key_len[i] = pos;
        pos += 4 + le(b + pos, 4);
        pos += 4 + le(b + pos, 4);
    }
    for (size_t i = 0; i < l->n_tensors; i++) {
        l->tensor_entry[i] = pos;
        pos += 4 + le(b + pos, 4);
        l->tensor_fields[i] = pos;
        uint64_t offset = le(b + pos + 20, 8);
        if (offset % 64 != 0 || offset < pos)
            return 0;
        pos += 28;
    }
    l->directory_end = pos;
    return 1;
}

/* Recomputes the trailer, so that a deliberate inconsistency gets past the
 * checksum and reaches the structural checks. */
static void reseal(uint8_t *b, size_t size)
{
    mlff_sha256(b, size - 32, b + size - 32);
}

/* ------------------------------------------------------------------------ */

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Reads path, expecting failure with status and a message containing the
 * path and (if not NULL) the phrase. */
static void expect_failure(const char *path, mlff_status status, const char *phrase,
                           const char *what)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = (mlff_model_file *)1; /* must be reset to NULL */
    mlff_status s = mlff_model_file_read(path, &mf, &err);
    CHECK(s == status, "%s: status %d, expected %d (%s)", what, s, status, err.message);
    CHECK(mf == NULL, "%s: output not NULL after failure", what);
    CHECK(err.status == s, "%s: err.status %d differs from the returned status", what, err.status);
    CHECK(strstr(err.message, path) != NULL, "%s: message does not name the file: %s", what,
          err.message);
    if (phrase)
        CHECK(strstr(err.message, phrase) != NULL, "%s: message lacks '%s': %s", what, phrase,
              err.message);
    if (s == MLFF_OK)
        mlff_model_file_destroy(mf);
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
    if (ncw_write_file(path, b, n) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

static void test_api(void)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = mlff_model_file_create();
    CHECK(mf != NULL, "create");
    if (!mf)
        return;
    float one = 1;
    CHECK(mlff_model_file_set_meta(mf, "a", "1", &err) == MLFF_OK, "set a");
    CHECK(mlff_model_file_set_meta(mf, "b", "2", &err) == MLFF_OK, "set b");
    CHECK(mlff_model_file_set_meta(mf, "a", "3", &err) == MLFF_OK, "replace a");
    CHECK(mf->n_meta == 2 && !strcmp(mf->meta[0].key, "a") && !strcmp(mf->meta[0].value, "3"),
          "replacing a key keeps its place");
    CHECK(mlff_model_file_meta(mf, "b") && !strcmp(mlff_model_file_meta(mf, "b"), "2"), "lookup b");
    CHECK(mlff_model_file_meta(mf, "c") == NULL, "absent key");
    CHECK(mlff_model_file_set_meta(mf, "", "x", &err) == MLFF_ERROR_INVALID_ARGUMENT, "empty key");
    CHECK(mlff_model_file_add_tensor(mf, "t", MLFF_DTYPE_F32, 1, 1, &one, &err) == MLFF_OK, "add");
    CHECK(mlff_model_file_add_tensor(mf, "t", MLFF_DTYPE_F32, 1, 1, &one, &err) ==
              MLFF_ERROR_INVALID_ARGUMENT, "duplicate tensor");
    CHECK(mlff_model_file_add_tensor(mf, "u", MLFF_DTYPE_REAL, 1, 1, &one, &err) ==
              MLFF_ERROR_INVALID_ARGUMENT, "REAL is no file dtype");
    CHECK(mlff_model_file_add_tensor(mf, "v", MLFF_DTYPE_F32, -1, 1, &one, &err) ==
              MLFF_ERROR_INVALID_ARGUMENT, "negative rows");
    CHECK(mlff_model_file_add_tensor(mf, "w", MLFF_DTYPE_F32, INT64_MAX, INT64_MAX, &one, &err) ==
              MLFF_ERROR_INVALID_ARGUMENT, "overflowing shape");
    CHECK(mlff_model_file_add_tensor(mf, "x", MLFF_DTYPE_F32, 2, 1, NULL, &err) ==
              MLFF_ERROR_INVALID_ARGUMENT, "no data");
    CHECK(mlff_model_file_tensor(mf, "t") && mlff_model_file_tensor(mf, "u") == NULL, "lookups");
    CHECK(mf->n_tensors == 1, "failed adds leave nothing behind");
    mlff_model_file_destroy(mf);
    mlff_model_file_destroy(NULL);
}

static void test_round_trip(const char *dir, uint8_t **bytes, size_t *size, char **path_out)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = sample();
    char *path = path_in(dir, "sample.mlff"), *path2 = path_in(dir, "sample2.mlff");
    if (!mf || !path || !path2)
        exit(1);
    CHECK(mlff_model_file_write(mf, path, &err) == MLFF_OK, "write: %s", err.message);
    CHECK(mlff_model_file_write(mf, path2, &err) == MLFF_OK, "write again: %s", err.message);
    mlff_model_file *back = NULL;
    CHECK(mlff_model_file_read(path, &back, &err) == MLFF_OK, "read: %s", err.message);
    if (back) {
        check_same(mf, back);
        const mlff_model_tensor *t = mlff_model_file_tensor(back, "t_f64");
        CHECK(t && ((const double *)t->data)[0] == 3.141592653589793, "f64 value");
        CHECK(mlff_model_file_meta(back, "empty") && !*mlff_model_file_meta(back, "empty"),
              "empty value");
    }
    mlff_model_file_destroy(back);

    char *b1, *b2;
    size_t n1, n2;
    if (ncw_read_file(path, &b1, &n1) || ncw_read_file(path2, &b2, &n2))
        exit(1);
    CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0, "two writes of the same model differ");
    free(b2);

    /* The documented layout, walked independently. */
    layout l;
    CHECK(walk((uint8_t *)b1, n1, &l), "layout walk failed");
    CHECK(l.n_meta == 4 && l.n_tensors == 5, "counts %zu %zu", l.n_meta, l.n_tensors);
    CHECK(n1 % 64 == 32, "data is padded to 64 bytes, then 32 bytes of checksum (size %zu)", n1);
    uint8_t digest[32];
    mlff_sha256(b1, n1 - 32, digest);
    CHECK(memcmp(digest, b1 + n1 - 32, 32) == 0, "trailer is not the SHA-256 of the rest");
    for (size_t i = 0; i < l.n_tensors; i++) {
        uint64_t off = le((uint8_t *)b1 + l.tensor_fields[i] + 20, 8);
        CHECK(off % 64 == 0 && off + 0 <= n1 - 32, "tensor %zu offset %llu", i,
              (unsigned long long)off);
    }
    /* t_f32 data as little-endian float32 at its offset */
    uint64_t off0 = le((uint8_t *)b1 + l.tensor_fields[0] + 20, 8);
    uint32_t bits;
    memcpy(&bits, &f32_data[0], 4);
    CHECK(le((uint8_t *)b1 + off0, 4) == bits, "first float at its offset");

    /* No temporary file is left beside the output. */
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            entries++;
            CHECK(!strstr(e->d_name, ".tmp."), "leftover %s", e->d_name);
        }
    if (d)
        closedir(d);
    CHECK(entries == 2, "%d files in the directory, expected 2", entries);

    remove(path2);
    free(path2);
    mlff_model_file_destroy(mf);
    *bytes = (uint8_t *)b1;
    *size = n1;
    *path_out = path;
}

static void test_damage(const char *dir, const uint8_t *good, size_t size)
{
    char *path = path_in(dir, "damaged.mlff");
    uint8_t *b = malloc(size);
    if (!path || !b)
        exit(1);

    /* Every byte flipped, one at a time. */
    for (size_t i = 0; i < size; i++) {
        memcpy(b, good, size);
        b[i] ^= (uint8_t)(1u << (i % 8));
        write_bytes(path, b, size);
        char what[64];
        snprintf(what, sizeof what, "bit flipped in byte %zu", i);
        expect_failure(path, MLFF_ERROR_MODEL_FORMAT, NULL, what);
    }
    /* A flip in the body says checksum; in the trailer too. */
    memcpy(b, good, size);
    b[size / 2] ^= 0x40;
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "checksum mismatch", "flip in the body");

    /* Every truncation. */
    for (size_t n = 0; n < size; n++) {
        write_bytes(path, good, n);
        char what[64];
        snprintf(what, sizeof what, "truncated to %zu bytes", n);
        expect_failure(path, MLFF_ERROR_MODEL_FORMAT, n >= 8 && n < 64 ? "truncated" : NULL, what);
    }

    /* Wrong magic, even with a valid checksum. */
    memcpy(b, good, size);
    memcpy(b, "MLFFMODX", 8);
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "not an mlff model file", "wrong magic");
    write_bytes(path, (const uint8_t *)"hello, world\n", 13);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "bad magic", "text file");

    /* Future and unknown versions. */
    memcpy(b, good, size);
    put_le(b + 8, 2, 4);
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "version 2", "future version");
    put_le(b + 8, 0, 4);
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "version 0", "version 0");

    free(b);
    free(path);
}

/* Files whose checksum is right but whose contents are not: the structural
 * checks behind the checksum must catch them all. */
static void test_inconsistent(const char *dir, const uint8_t *good, size_t size)
{
    char *path = path_in(dir, "inconsistent.mlff");
    uint8_t *b = malloc(size);
    layout l;
    if (!path || !b || !walk(good, size, &l))
        exit(1);
    struct edit {
        const char *what, *phrase;
        size_t pos;
        uint64_t value;
        int width;
    } edits[] = {
        {"reserved field", "reserved", 12, 1, 4},
        {"huge metadata count", NULL, 16, UINT64_MAX, 8},
        {"metadata count one too many", NULL, 16, l.n_meta + 1, 8},
        {"huge tensor count", NULL, 24, (uint64_t)1 << 60, 8},
        {"tensor count one too many", NULL, 24, l.n_tensors + 1, 8},
        {"tensor count one too few", NULL, 24, l.n_tensors - 1, 8},
        {"key length past the end", "past the end", l.meta_key_len[0], 0xFFFFFFF0u, 4},
        {"empty key", "empty", l.meta_key_len[0], 0, 4},
        {"unknown dtype", "dtype", l.tensor_fields[0], 7, 4},
        {"dtype 0", "dtype", l.tensor_fields[0], 0, 4},
        {"huge rows", NULL, l.tensor_fields[0] + 4, (uint64_t)1 << 62, 8},
        {"rows past INT64_MAX", NULL, l.tensor_fields[0] + 4, UINT64_MAX, 8},
        {"more rows than data", NULL, l.tensor_fields[4] + 4, 100000, 8},
        {"misaligned offset", "offset", l.tensor_fields[1] + 20,
         le(good + l.tensor_fields[1] + 20, 8) + 4, 8},
        {"offset past the end", "offset", l.tensor_fields[4] + 20, size, 8},
        {"offset inside the directory", "offset", l.tensor_fields[0] + 20, 0, 8},
        {"overlapping data", "offset", l.tensor_fields[1] + 20,
         le(good + l.tensor_fields[0] + 20, 8), 8},
        {"huge offset", "offset", l.tensor_fields[2] + 20, UINT64_MAX - 63, 8},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        memcpy(b, good, size);
        put_le(b + edits[i].pos, edits[i].value, edits[i].width);
        reseal(b, size);
        write_bytes(path, b, size);
        expect_failure(path, MLFF_ERROR_MODEL_FORMAT, edits[i].phrase, edits[i].what);
    }
    /* Duplicate names: "t_f64" renamed "t_f32"; key "name" renamed "utf8"... same length: "empty" -> "famil"? */
    memcpy(b, good, size);
    memcpy(b + l.tensor_entry[1] + 4, "t_f32", 5);
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "appears twice", "duplicate tensor");
    memcpy(b, good, size);
    memcpy(b + l.meta_key_len[3] + 4, "name", 4); /* "utf8" -> "name" */
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "appears twice", "duplicate key");
    memcpy(b, good, size);
    b[l.tensor_entry[0] + 5] = '\0';
    reseal(b, size);
    write_bytes(path, b, size);
    expect_failure(path, MLFF_ERROR_MODEL_FORMAT, "NUL", "NUL in a name");
    free(b);
    free(path);
}

static void test_io_errors(const char *dir)
{
    char *missing = path_in(dir, "does-not-exist.mlff");
    if (!missing)
        exit(1);
    expect_failure(missing, MLFF_ERROR_IO, "cannot open model file", "missing file");
    expect_failure(missing, MLFF_ERROR_IO, "No such file or directory", "missing file");
    expect_failure(dir, MLFF_ERROR_IO, NULL, "a directory");

    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = mlff_model_file_create();
    char *bad = path_in(dir, "no-such-dir/x.mlff");
    if (!mf || !bad)
        exit(1);
    CHECK(mlff_model_file_write(mf, bad, &err) == MLFF_ERROR_IO && strstr(err.message, bad),
          "write into a missing directory: %s", err.message);
    /* An empty model file is valid. */
    char *empty = path_in(dir, "empty.mlff");
    mlff_model_file *back = NULL;
    CHECK(empty && mlff_model_file_write(mf, empty, &err) == MLFF_OK, "write empty: %s", err.message);
    CHECK(mlff_model_file_read(empty, &back, &err) == MLFF_OK && back && back->n_meta == 0 &&
              back->n_tensors == 0, "read empty: %s", err.message);
    mlff_model_file_destroy(back);
    mlff_model_file_destroy(mf);
    free(empty);
    free(bad);
    free(missing);
}

int main(void)
{
    char *dir = ncw_make_temp_dir("model-file");
    if (!dir)
        return 1;
    uint8_t *good;
    size_t size;
    char *path;
    test_api();
    test_round_trip(dir, &good, &size, &path);
    test_damage(dir, good, size);
    test_inconsistent(dir, good, size);
    test_io_errors(dir);
    printf("model file: %zu-byte sample, every flip and truncation rejected\n", size);
    free(good);
    free(path);
    ncw_remove_tree(dir);
    free(dir);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
