/*
 * The mlff model file (layout in model_file.h).
 *
 * The reader maps the whole file into memory, checks magic and version,
 * then the SHA-256 trailer, and only then walks the entries; every length
 * and offset is still checked against the file size, because a checksum
 * only proves the file is what some writer wrote, not that the writer was
 * right. The writer streams the file through the hash into a temporary file
 * beside the target and renames it into place, so readers never see half a
 * file.
 */
#include "model_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha256.h"

#define HEADER_SIZE 32   /* magic 8, version 4, reserved 4, n_meta 8, n_tensors 8 */
#define TRAILER_SIZE MLFF_MODEL_FILE_TRAILER_SIZE /* SHA-256 */
#define DATA_ALIGN 64
#define META_MIN_SIZE 8  /* two u32 lengths */
#define TENSOR_ENTRY_FIXED 32 /* u32 name length, u32 dtype, u64 rows, cols, offset */

static const uint8_t file_magic[8] = {'M', 'L', 'F', 'F', 'M', 'O', 'D', 'L'};

/* File dtype codes are spelled out rather than borrowed from mlff_dtype, so
 * that renumbering the in-memory enum can never change the format. */
enum { FILE_DTYPE_F32 = 1, FILE_DTYPE_F64 = 2, FILE_DTYPE_I32 = 3 };

static int dtype_to_file(mlff_dtype d)
{
    switch (d) {
    case MLFF_DTYPE_F32: return FILE_DTYPE_F32;
    case MLFF_DTYPE_F64: return FILE_DTYPE_F64;
    case MLFF_DTYPE_I32: return FILE_DTYPE_I32;
    case MLFF_DTYPE_REAL: break;
    }
    return 0;
}

static int dtype_from_file(uint32_t code, mlff_dtype *d)
{
    switch (code) {
    case FILE_DTYPE_F32: *d = MLFF_DTYPE_F32; return 1;
    case FILE_DTYPE_F64: *d = MLFF_DTYPE_F64; return 1;
    case FILE_DTYPE_I32: *d = MLFF_DTYPE_I32; return 1;
    default: return 0;
    }
}

static uint64_t align_up(uint64_t x)
{
    return (x + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
}

/* Bytes of a rows x cols tensor of dtype, or 0 with *ok = 0 on overflow. */
static uint64_t tensor_bytes(uint64_t rows, uint64_t cols, mlff_dtype dtype, int *ok)
{
    uint64_t esize = mlff_dtype_size(dtype);
    *ok = 1;
    if (rows > INT64_MAX || cols > INT64_MAX) {
        *ok = 0;
        return 0;
    }
    if (rows == 0 || cols == 0)
        return 0;
    if (rows > UINT64_MAX / cols || rows * cols > UINT64_MAX / esize) {
        *ok = 0;
        return 0;
    }
    return rows * cols * esize;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Copies n elements of esize bytes between file (little-endian) and host order. */
static void copy_little_endian(void *dst, const void *src, size_t n, size_t esize)
{
    if (host_is_little_endian()) {
        memcpy(dst, src, n * esize);
        return;
    }
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < esize; b++)
            d[i * esize + b] = s[i * esize + esize - 1 - b];
}

/* ------------------------------------------------------------------------ */
/* In-memory model file                                                     */

mlff_model_file *mlff_model_file_create(void)
{
    return calloc(1, sizeof(mlff_model_file));
}

void mlff_model_file_destroy(mlff_model_file *mf)
{
    if (!mf)
        return;
    for (size_t i = 0; i < mf->n_meta; i++) {
        free(mf->meta[i].key);
        free(mf->meta[i].value);
    }
    for (size_t i = 0; i < mf->n_tensors; i++) {
        free(mf->tensors[i].name);
        if (!mf->tensors[i].borrowed)
            free(mf->tensors[i].data);
    }
    if (mf->mapping)
        munmap(mf->mapping, mf->mapping_size);
    free(mf->meta);
    free(mf->tensors);
    free(mf);
}

static mlff_model_meta *find_meta(const mlff_model_file *mf, const char *key)
{
    for (size_t i = 0; i < mf->n_meta; i++)
        if (strcmp(mf->meta[i].key, key) == 0)
            return &mf->meta[i];
    return NULL;
}

const char *mlff_model_file_meta(const mlff_model_file *mf, const char *key)
{
    const mlff_model_meta *m = mf && key ? find_meta(mf, key) : NULL;
    return m ? m->value : NULL;
}

const mlff_model_tensor *mlff_model_file_tensor(const mlff_model_file *mf, const char *name)
{
    if (!mf || !name)
        return NULL;
    for (size_t i = 0; i < mf->n_tensors; i++)
        if (strcmp(mf->tensors[i].name, name) == 0)
            return &mf->tensors[i];
    return NULL;
}

/* Grows an array of elements of esize bytes so that one more fits. */
static int grow(void **items, size_t *cap, size_t n, size_t esize)
{
    if (n < *cap)
        return 1;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *p = realloc(*items, new_cap * esize);
    if (!p)
        return 0;
    *items = p;
    *cap = new_cap;
    return 1;
}

/* Setting a key that exists replaces its value in place (order kept). */
mlff_status mlff_model_file_set_meta(mlff_model_file *mf, const char *key, const char *value,
                                     mlff_error *err)
{
    if (!mf || !key || !value || !*key)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file metadata: empty key or value");
    if (strlen(key) > UINT32_MAX || strlen(value) > UINT32_MAX)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file metadata '%.64s' too long", key);
    char *v = strdup(value);
    if (!v)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory (model metadata)");
    mlff_model_meta *existing = find_meta(mf, key);
    if (existing) {
        free(existing->value);
        existing->value = v;
        return MLFF_OK;
    }
    char *k = strdup(key);
    if (!k || !grow((void **)&mf->meta, &mf->cap_meta, mf->n_meta, sizeof *mf->meta)) {
        free(k);
        free(v);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory (model metadata)");
    }
    mf->meta[mf->n_meta++] = (mlff_model_meta){.key = k, .value = v};
    return MLFF_OK;
}

mlff_status mlff_model_file_add_tensor(mlff_model_file *mf, const char *name, mlff_dtype dtype,
                                       int64_t rows, int64_t cols, const void *data,
                                       mlff_error *err)
{
    if (!mf || !name || !*name)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor: empty name");
    if (strlen(name) > UINT32_MAX)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor name too long");
    if (!dtype_to_file(dtype))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor %s: bad dtype %d",
                         name, (int)dtype);
    int ok = rows >= 0 && cols >= 0;
    uint64_t bytes = ok ? tensor_bytes((uint64_t)rows, (uint64_t)cols, dtype, &ok) : 0;
    if (!ok || bytes > SIZE_MAX)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor %s: bad shape "
                         "[%lld, %lld]", name, (long long)rows, (long long)cols);
    if (bytes > 0 && !data)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor %s: no data", name);
    if (mlff_model_file_tensor(mf, name))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file tensor %s added twice", name);
    char *n = strdup(name);
    void *copy = malloc(bytes ? (size_t)bytes : 1); /* never NULL, even when empty */
    if (!n || !copy ||
        !grow((void **)&mf->tensors, &mf->cap_tensors, mf->n_tensors, sizeof *mf->tensors)) {
        free(n);
        free(copy);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory (model tensor %s)", name);
    }
    if (bytes)
        memcpy(copy, data, (size_t)bytes);
    mf->tensors[mf->n_tensors++] =
        (mlff_model_tensor){.name = n, .dtype = dtype, .rows = rows, .cols = cols, .data = copy};
    return MLFF_OK;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */

/* Everything written goes through the hash; the first failure sticks. */
typedef struct sink {
    FILE *f;
    mlff_sha256_ctx sha;
    uint64_t written;
    int failed_errno; /* 0 while all is well */
} sink;

static void sink_bytes(sink *s, const void *data, size_t n)
{
    if (s->failed_errno || n == 0)
        return;
    if (fwrite(data, 1, n, s->f) != n) {
        s->failed_errno = errno ? errno : EIO;
        return;
    }
    mlff_sha256_update(&s->sha, data, n);
    s->written += n;
}

static void sink_u32(sink *s, uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    sink_bytes(s, b, sizeof b);
}

static void sink_u64(sink *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    sink_bytes(s, b, sizeof b);
}

static void sink_string(sink *s, const char *str)
{
    size_t n = strlen(str);
    sink_u32(s, (uint32_t)n);
    sink_bytes(s, str, n);
}

static void sink_zeros_to(sink *s, uint64_t position)
{
    static const uint8_t zeros[DATA_ALIGN];
    while (!s->failed_errno && s->written < position) {
        uint64_t n = position - s->written;
        sink_bytes(s, zeros, n < sizeof zeros ? (size_t)n : sizeof zeros);
    }
}

/* Tensor data in little-endian order, converted in chunks on big-endian hosts. */
static void sink_tensor_data(sink *s, const mlff_model_tensor *t, uint64_t bytes)
{
    if (host_is_little_endian()) {
        sink_bytes(s, t->data, (size_t)bytes);
        return;
    }
    size_t esize = mlff_dtype_size(t->dtype);
    uint8_t chunk[4096];
    const uint8_t *p = t->data;
    for (uint64_t done = 0; done < bytes;) {
        size_t n = bytes - done < sizeof chunk ? (size_t)(bytes - done) : sizeof chunk;
        copy_little_endian(chunk, p + done, n / esize, esize);
        sink_bytes(s, chunk, n);
        done += n;
    }
}

/* End of the tensor directory, i.e. where padding before the data starts. */
static uint64_t directory_end(const mlff_model_file *mf)
{
    uint64_t pos = HEADER_SIZE;
    for (size_t i = 0; i < mf->n_meta; i++)
        pos += META_MIN_SIZE + strlen(mf->meta[i].key) + strlen(mf->meta[i].value);
    for (size_t i = 0; i < mf->n_tensors; i++)
        pos += TENSOR_ENTRY_FIXED + strlen(mf->tensors[i].name);
    return pos;
}

static uint64_t entry_bytes(const mlff_model_tensor *t)
{
    int ok;
    return tensor_bytes((uint64_t)t->rows, (uint64_t)t->cols, t->dtype, &ok);
}

static void write_contents(sink *s, const mlff_model_file *mf)
{
    sink_bytes(s, file_magic, sizeof file_magic);
    sink_u32(s, MLFF_MODEL_FILE_VERSION);
    sink_u32(s, 0);
    sink_u64(s, mf->n_meta);
    sink_u64(s, mf->n_tensors);
    for (size_t i = 0; i < mf->n_meta; i++) {
        sink_string(s, mf->meta[i].key);
        sink_string(s, mf->meta[i].value);
    }
    uint64_t offset = align_up(directory_end(mf));
    for (size_t i = 0; i < mf->n_tensors; i++) {
        const mlff_model_tensor *t = &mf->tensors[i];
        sink_string(s, t->name);
        sink_u32(s, (uint32_t)dtype_to_file(t->dtype));
        sink_u64(s, (uint64_t)t->rows);
        sink_u64(s, (uint64_t)t->cols);
        sink_u64(s, offset);
        offset += align_up(entry_bytes(t));
    }
    for (size_t i = 0; i < mf->n_tensors; i++) {
        const mlff_model_tensor *t = &mf->tensors[i];
        sink_zeros_to(s, align_up(s->written));
        sink_tensor_data(s, t, entry_bytes(t));
    }
    sink_zeros_to(s, align_up(s->written));
    uint8_t digest[MLFF_SHA256_DIGEST_SIZE];
    mlff_sha256_final(&s->sha, digest);
    if (!s->failed_errno && fwrite(digest, 1, sizeof digest, s->f) != sizeof digest)
        s->failed_errno = errno ? errno : EIO;
}

/* The in-memory entries could have been edited by hand: check them before
 * writing anything, so that a bad entry never produces a file. */
static mlff_status check_writable(const mlff_model_file *mf, const char *path, mlff_error *err)
{
    for (size_t i = 0; i < mf->n_meta; i++)
        if (!mf->meta[i].key || !*mf->meta[i].key || !mf->meta[i].value ||
            strlen(mf->meta[i].key) > UINT32_MAX ||
            strlen(mf->meta[i].value) > UINT32_MAX)
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file %s: bad metadata "
                             "entry %zu", path, i);
    for (size_t i = 0; i < mf->n_tensors; i++) {
        const mlff_model_tensor *t = &mf->tensors[i];
        int ok = t->name && *t->name && strlen(t->name) <= UINT32_MAX && dtype_to_file(t->dtype) &&
                 t->rows >= 0 && t->cols >= 0;
        if (ok)
            tensor_bytes((uint64_t)t->rows, (uint64_t)t->cols, t->dtype, &ok);
        if (!ok || (!t->data && t->rows * t->cols > 0))
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file %s: bad tensor "
                             "entry %zu (%s)", path, i, t->name ? t->name : "unnamed");
    }
    return MLFF_OK;
}

mlff_status mlff_model_file_write(const mlff_model_file *mf, const char *path, mlff_error *err)
{
    if (!mf || !path)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file write: NULL argument");
    mlff_status st = check_writable(mf, path, err);
    if (st != MLFF_OK)
        return st;
    size_t tmp_size = strlen(path) + 32;
    char *tmp = malloc(tmp_size);
    if (!tmp)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    snprintf(tmp, tmp_size, "%s.tmp.%ld", path, (long)getpid());

    sink s = {.f = fopen(tmp, "wb")};
    if (!s.f) {
        st = mlff_fail(err, MLFF_ERROR_IO, "cannot create model file %s: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    mlff_sha256_init(&s.sha);
    errno = 0;
    write_contents(&s, mf);
    if (!s.failed_errno && (fflush(s.f) != 0 || fsync(fileno(s.f)) != 0))
        s.failed_errno = errno ? errno : EIO;
    if (fclose(s.f) != 0 && !s.failed_errno)
        s.failed_errno = errno ? errno : EIO;
    if (!s.failed_errno && rename(tmp, path) != 0)
        s.failed_errno = errno ? errno : EIO;
    if (s.failed_errno) {
        st = mlff_fail(err, MLFF_ERROR_IO, "cannot write model file %s: %s", path,
                       strerror(s.failed_errno));
        remove(tmp);
    }
    free(tmp);
    return st;
}

void mlff_model_file_seal(uint8_t *bytes, size_t size)
{
    if (size >= TRAILER_SIZE)
        mlff_sha256(bytes, size - TRAILER_SIZE, bytes + size - TRAILER_SIZE);
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */

/* A bounds-checked cursor over the file bytes. The first failure is kept in
 * status (with its message in err) and makes every later read fail too, so
 * callers can chain reads and check once. */
typedef struct cursor {
    const uint8_t *bytes;
    uint64_t end; /* where entries must stop: the start of the trailer */
    uint64_t pos;
    const char *path;
    mlff_error *err;
    mlff_status status;
} cursor;

static int cursor_failed(cursor *c, mlff_status status)
{
    c->status = status;
    return 0;
}

static int out_of_memory(cursor *c)
{
    mlff_fail(c->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory reading model file %s", c->path);
    return cursor_failed(c, MLFF_ERROR_OUT_OF_MEMORY);
}

static int past_end(cursor *c, const char *what)
{
    mlff_fail(c->err, MLFF_ERROR_MODEL_FORMAT, "model file %s: %s at byte %llu runs past the end "
              "of the entries (truncated or corrupt)", c->path, what, (unsigned long long)c->pos);
    return cursor_failed(c, MLFF_ERROR_MODEL_FORMAT);
}

static int read_u32(cursor *c, uint32_t *v, const char *what)
{
    if (c->status != MLFF_OK)
        return 0;
    if (c->end - c->pos < 4)
        return past_end(c, what);
    const uint8_t *p = c->bytes + c->pos;
    *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    c->pos += 4;
    return 1;
}

static int read_u64(cursor *c, uint64_t *v, const char *what)
{
    if (c->status != MLFF_OK)
        return 0;
    if (c->end - c->pos < 8)
        return past_end(c, what);
    const uint8_t *p = c->bytes + c->pos;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = *v << 8 | p[i];
    c->pos += 8;
    return 1;
}

/* A u32-length-prefixed string, returned NUL-terminated in a new buffer.
 * Names and keys may not be empty; metadata values may. None may hold NUL,
 * since they are handed out as C strings. */
static char *read_string(cursor *c, const char *what, int allow_empty)
{
    uint32_t len;
    if (!read_u32(c, &len, what))
        return NULL;
    if (c->end - c->pos < len) {
        past_end(c, what);
        return NULL;
    }
    const char *src = (const char *)c->bytes + c->pos;
    if ((len == 0 && !allow_empty) || memchr(src, '\0', len)) {
        mlff_fail(c->err, MLFF_ERROR_MODEL_FORMAT, "model file %s: %s at byte %llu is empty or "
                  "holds a NUL byte", c->path, what, (unsigned long long)c->pos);
        cursor_failed(c, MLFF_ERROR_MODEL_FORMAT);
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (!s) {
        out_of_memory(c);
        return NULL;
    }
    memcpy(s, src, len);
    s[len] = '\0';
    c->pos += len;
    return s;
}

static int read_meta(cursor *c, mlff_model_file *mf, uint64_t n_meta)
{
    /* Never trust a count: each entry needs at least META_MIN_SIZE bytes. */
    if (n_meta > (c->end - c->pos) / META_MIN_SIZE)
        return past_end(c, "metadata");
    if (n_meta == 0)
        return 1;
    if (!(mf->meta = calloc((size_t)n_meta, sizeof *mf->meta)))
        return out_of_memory(c);
    mf->cap_meta = (size_t)n_meta;
    for (uint64_t i = 0; i < n_meta; i++) {
        char *key = read_string(c, "metadata key", 0);
        char *value = key ? read_string(c, "metadata value", 1) : NULL;
        if (!value) {
            free(key);
            return 0;
        }
        mf->meta[mf->n_meta++] = (mlff_model_meta){.key = key, .value = value};
    }
    return 1;
}

static int bad_tensor(cursor *c, const char *name, const char *problem)
{
    mlff_fail(c->err, MLFF_ERROR_MODEL_FORMAT, "model file %s: tensor %s: %s", c->path, name,
              problem);
    return cursor_failed(c, MLFF_ERROR_MODEL_FORMAT);
}

static int bad_layout(cursor *c, const char *problem)
{
    mlff_fail(c->err, MLFF_ERROR_MODEL_FORMAT, "model file %s: %s (corrupt, or written by an "
              "incompatible writer)", c->path, problem);
    return cursor_failed(c, MLFF_ERROR_MODEL_FORMAT);
}

/* Directory entries; data offsets are kept aside and checked afterwards. */
static int read_directory(cursor *c, mlff_model_file *mf, uint64_t n_tensors, uint64_t **offsets)
{
    if (n_tensors > (c->end - c->pos) / TENSOR_ENTRY_FIXED)
        return past_end(c, "tensor directory");
    if (n_tensors == 0)
        return 1;
    mf->tensors = calloc((size_t)n_tensors, sizeof *mf->tensors);
    *offsets = calloc((size_t)n_tensors, sizeof **offsets);
    if (!mf->tensors || !*offsets)
        return out_of_memory(c);
    mf->cap_tensors = (size_t)n_tensors;
    for (uint64_t i = 0; i < n_tensors; i++) {
        uint32_t dtype_code = 0;
        uint64_t rows = 0, cols = 0;
        char *name = read_string(c, "tensor name", 0);
        if (!name)
            return 0;
        mlff_model_tensor *t = &mf->tensors[mf->n_tensors++];
        t->name = name;
        read_u32(c, &dtype_code, "tensor dtype");
        read_u64(c, &rows, "tensor rows");
        read_u64(c, &cols, "tensor cols");
        if (!read_u64(c, &(*offsets)[i], "tensor offset"))
            return 0;
        if (!dtype_from_file(dtype_code, &t->dtype))
            return bad_tensor(c, name, "unknown dtype code");
        int ok;
        tensor_bytes(rows, cols, t->dtype, &ok);
        if (!ok)
            return bad_tensor(c, name, "impossible shape");
        t->rows = (int64_t)rows;
        t->cols = (int64_t)cols;
    }
    return 1;
}

static int all_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The data region has exactly one valid layout, the one the writer emits:
 * each tensor at the next 64-byte boundary in directory order, zero padding,
 * and nothing between the last tensor and the trailer. Holding readers to
 * it means no byte of a file goes unchecked. */
static int read_tensor_data(cursor *c, mlff_model_file *mf, const uint64_t *offsets)
{
    uint64_t expected = align_up(c->pos); /* the directory ends at c->pos */
    if (expected > c->end || !all_zero(c->bytes + c->pos, expected - c->pos))
        return bad_layout(c, "padding after the directory");
    for (size_t i = 0; i < mf->n_tensors; i++) {
        mlff_model_tensor *t = &mf->tensors[i];
        int ok;
        uint64_t bytes = tensor_bytes((uint64_t)t->rows, (uint64_t)t->cols, t->dtype, &ok);
        uint64_t off = offsets[i];
        if (off != expected || c->end - off < bytes)
            return bad_tensor(c, t->name, "data offset or size does not match the layout (data "
                              "misplaced, overlapping or past the end)");
        uint64_t padded = align_up(off + bytes);
        if (padded > c->end || !all_zero(c->bytes + off + bytes, padded - off - bytes))
            return bad_tensor(c, t->name, "padding after its data is missing or not zero");
        if (host_is_little_endian()) {
            /* The file's bytes are the tensor: no copy of tens of megabytes at every start. */
            t->data = (void *)(c->bytes + off);
            t->borrowed = 1;
        } else {
            if (!(t->data = malloc(bytes ? (size_t)bytes : 1)))
                return out_of_memory(c);
            size_t esize = mlff_dtype_size(t->dtype);
            copy_little_endian(t->data, c->bytes + off, (size_t)(bytes / esize), esize);
        }
        expected = padded;
    }
    if (expected != c->end)
        return bad_layout(c, "unreferenced bytes before the checksum");
    return 1;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate keys or names would make lookups ambiguous. Sorting keeps this
 * O(n log n) however many entries a file declares. */
static int check_unique(cursor *c, const char *kind, const char **names, size_t n)
{
    if (n > 1)
        qsort(names, n, sizeof *names, compare_strings);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            mlff_fail(c->err, MLFF_ERROR_MODEL_FORMAT, "model file %s: %s '%s' appears twice",
                      c->path, kind, names[i]);
            return cursor_failed(c, MLFF_ERROR_MODEL_FORMAT);
        }
    return 1;
}

static int check_all_unique(cursor *c, const mlff_model_file *mf)
{
    size_t n = mf->n_meta > mf->n_tensors ? mf->n_meta : mf->n_tensors;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return out_of_memory(c);
    for (size_t i = 0; i < mf->n_meta; i++)
        names[i] = mf->meta[i].key;
    int ok = check_unique(c, "metadata key", names, mf->n_meta);
    for (size_t i = 0; ok && i < mf->n_tensors; i++)
        names[i] = mf->tensors[i].name;
    ok = ok && check_unique(c, "tensor", names, mf->n_tensors);
    free(names);
    return ok;
}

/* Magic, version and checksum: what must hold before any entry is parsed.
 * The version is checked before the checksum so that a file from a newer
 * mlff says so instead of looking corrupt. */
static mlff_status check_envelope(const uint8_t *bytes, size_t size, const char *path,
                                  mlff_error *err)
{
    if (size < sizeof file_magic || memcmp(bytes, file_magic, sizeof file_magic) != 0) {
        if (size < sizeof file_magic && memcmp(bytes, file_magic, size) == 0)
            return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s is truncated (%zu "
                             "bytes)", path, size);
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "%s is not an mlff model file (bad magic)",
                         path);
    }
    if (size < HEADER_SIZE + TRAILER_SIZE)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s is truncated (%zu bytes, "
                         "less than header and checksum)", path, size);
    uint32_t version = (uint32_t)bytes[8] | (uint32_t)bytes[9] << 8 | (uint32_t)bytes[10] << 16 |
                       (uint32_t)bytes[11] << 24;
    if (version > MLFF_MODEL_FILE_VERSION)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s has format version %u; this "
                         "mlff reads version %d (a newer mlff is needed)", path, version,
                         MLFF_MODEL_FILE_VERSION);
    if (version != MLFF_MODEL_FILE_VERSION)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s has unknown format version "
                         "%u", path, version);
    uint8_t digest[MLFF_SHA256_DIGEST_SIZE];
    mlff_sha256(bytes, size - TRAILER_SIZE, digest);
    if (memcmp(digest, bytes + size - TRAILER_SIZE, TRAILER_SIZE) != 0)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s: checksum mismatch (file "
                         "corrupt or truncated)", path);
    return MLFF_OK;
}

static mlff_status parse_file(const uint8_t *bytes, size_t size, const char *path,
                              mlff_model_file *mf, mlff_error *err)
{
    mlff_status st = check_envelope(bytes, size, path, err);
    if (st != MLFF_OK)
        return st;
    cursor c = {.bytes = bytes, .end = size - TRAILER_SIZE, .pos = 12, .path = path, .err = err};
    uint32_t reserved = 0;
    uint64_t n_meta = 0, n_tensors = 0, *offsets = NULL;
    read_u32(&c, &reserved, "header");
    read_u64(&c, &n_meta, "header");
    read_u64(&c, &n_tensors, "header");
    if (c.status == MLFF_OK && reserved != 0) {
        mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s: reserved header field is %u, "
                  "not 0", path, reserved);
        c.status = MLFF_ERROR_MODEL_FORMAT;
    }
    if (c.status == MLFF_OK)
        (void)(read_meta(&c, mf, n_meta) && read_directory(&c, mf, n_tensors, &offsets) &&
               read_tensor_data(&c, mf, offsets) && check_all_unique(&c, mf));
    free(offsets);
    return c.status;
}

/* The whole file, mapped read-only (unmapped with munmap(*bytes, *size)).
 * Writers replace model files by renaming a new one into place, so a
 * mapped file does not change under its readers. */
static mlff_status map_file(const char *path, uint8_t **bytes, size_t *size, mlff_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mlff_fail(err, MLFF_ERROR_IO, "cannot open model file %s: %s", path, strerror(errno));
    struct stat st;
    mlff_status status = MLFF_OK;
    if (fstat(fd, &st) != 0)
        status = mlff_fail(err, MLFF_ERROR_IO, "cannot read model file %s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        status = mlff_fail(err, MLFF_ERROR_IO, "cannot read model file %s: not a regular file", path);
    else if ((uint64_t)st.st_size > SIZE_MAX - 1)
        status = mlff_fail(err, MLFF_ERROR_IO, "model file %s is too large", path);
    else if (st.st_size == 0)
        status = mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model file %s is truncated (0 bytes)", path);
    void *map = MAP_FAILED;
    if (status == MLFF_OK &&
        (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        status = mlff_fail(err, MLFF_ERROR_IO, "cannot map model file %s: %s", path, strerror(errno));
    close(fd);
    if (status != MLFF_OK)
        return status;
    *bytes = map;
    *size = (size_t)st.st_size;
    return MLFF_OK;
}

mlff_status mlff_model_file_read(const char *path, mlff_model_file **out, mlff_error *err)
{
    if (!out)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file read: NULL argument");
    *out = NULL;
    if (!path)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "model file read: NULL path");
    uint8_t *bytes = NULL;
    size_t size = 0;
    mlff_status st = map_file(path, &bytes, &size, err);
    if (st != MLFF_OK)
        return st;
    mlff_model_file *mf = mlff_model_file_create();
    if (!mf) {
        munmap(bytes, size);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory reading model file %s", path);
    }
    mf->mapping = bytes; /* freed with mf, also when parsing fails */
    mf->mapping_size = size;
    st = parse_file(bytes, size, path, mf, err);
    if (st != MLFF_OK) {
        mlff_model_file_destroy(mf);
        return st;
    }
    *out = mf;
    return MLFF_OK;
}
