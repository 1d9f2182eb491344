/*
 * A backend's device buffers keep what was written to them while others
 * come and go: hundreds of buffers of sizes from a byte to a megabyte are
 * allocated and filled, a third of them freed, as many again allocated
 * (into the ranges freed, and past them: the OpenCL arena grows, copying
 * what it holds into a larger buffer, cl_arena.c), parts rewritten at
 * offsets, and every buffer read back must hold exactly its own bytes.
 * MLFF_OPENCL_ARENA=N keeps regions above N bytes out of the arena.
 * Usage: test_buffers cpu|opencl|vulkan
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "tests/common/check.h"
#include "device.h"

#define BUFFERS 400

typedef struct test_buffer {
    void *handle;
    size_t bytes;
    unsigned seed;
    size_t rewrite_at, rewrite_bytes; /* a part written again, with rewrite_seed */
    unsigned rewrite_seed;
} test_buffer;

/* The bytes buffer `seed` holds from `offset` on. */
static void pattern(unsigned char *out, size_t offset, size_t bytes, unsigned seed)
{
    for (size_t k = 0; k < bytes; k++)
        out[k] = (unsigned char)((offset + k) * 2654435761u >> 13 ^ seed);
}

/* What buffer b holds. */
static void expected(const test_buffer *b, unsigned char *out)
{
    pattern(out, 0, b->bytes, b->seed);
    pattern(out + b->rewrite_at, b->rewrite_at, b->rewrite_bytes, b->rewrite_seed);
}

/* Mostly small buffers, as a plan's are, some of up to a megabyte / shrink. */
static size_t some_size(unsigned *rng, unsigned shrink)
{
    const unsigned r = (unsigned)rand_r(rng);
    return (r % 10 == 0 ? (size_t)(r % (1u << 20)) : (size_t)(r % 8192)) / shrink + 1;
}

static int make(const mlff_backend_iface *iface, mlff_backend *be, test_buffer *b, unsigned seed, unsigned *rng,
                unsigned shrink, unsigned char *scratch)
{
    mlff_error err;
    mlff_error_clear(&err);
    *b = (test_buffer){.bytes = some_size(rng, shrink), .seed = seed};
    pattern(scratch, 0, b->bytes, seed);
    if (iface->buffer_alloc(be, b->bytes, &b->handle, &err) != MLFF_OK ||
        iface->buffer_write(be, b->handle, 0, scratch, b->bytes, &err) != MLFF_OK) {
        CHECK(0, "buffer %u of %zu bytes: %s", seed, b->bytes, err.message);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    const mlff_backend_iface *iface = mlff_backend_named(argc > 1 ? argv[1] : "cpu");
    if (!iface) {
        fprintf(stderr, "usage: test_buffers cpu|opencl|vulkan (one built in)\n");
        return 2;
    }
    mlff_backend *be = test_open_backend(iface, NULL);
    static test_buffer buffers[BUFFERS];
    unsigned char *expect = malloc(1u << 20), *got = malloc(1u << 20);
    unsigned rng = 12345, seed = 0;
    mlff_error err;
    mlff_error_clear(&err);
    CHECK(expect && got, "out of memory");
    for (int k = 0; expect && got && k < BUFFERS / 2; k++)
        make(iface, be, &buffers[k], seed++, &rng, 1, expect);
    /* Every third freed, then as many again made, smaller: several in a
     * range freed, and more past the end. */
    for (int k = 0; k < BUFFERS / 2; k += 3) {
        iface->buffer_free(be, buffers[k].handle);
        buffers[k].handle = NULL;
    }
    for (int k = 0; expect && got && k < BUFFERS; k++)
        if (!buffers[k].handle)
            make(iface, be, &buffers[k], seed++, &rng, 4, expect);
    /* Rewrites of a part, at an offset: the rest stays. */
    for (int k = 1; expect && k < BUFFERS; k += 7) {
        test_buffer *b = &buffers[k];
        if (!b->handle || b->bytes < 16)
            continue;
        b->rewrite_at = b->bytes / 3;
        b->rewrite_bytes = b->bytes / 2;
        b->rewrite_seed = seed++;
        expected(b, expect);
        CHECK(iface->buffer_write(be, b->handle, b->rewrite_at, expect + b->rewrite_at, b->rewrite_bytes, &err) ==
                  MLFF_OK,
              "rewrite: %s", err.message);
    }
    for (int k = 0; expect && got && k < BUFFERS; k++) {
        test_buffer *b = &buffers[k];
        if (!b->handle)
            continue;
        CHECK(iface->buffer_read(be, b->handle, 0, got, b->bytes, &err) == MLFF_OK, "read: %s", err.message);
        expected(b, expect);
        size_t wrong = 0;
        for (size_t j = 0; j < b->bytes; j++)
            wrong += got[j] != expect[j];
        CHECK(wrong == 0, "buffer %d (%zu bytes): %zu bytes differ", k, b->bytes, wrong);
    }
    for (int k = 0; k < BUFFERS; k++)
        if (buffers[k].handle)
            iface->buffer_free(be, buffers[k].handle);
    free(expect);
    free(got);
    iface->close(be);
    printf(failures ? "FAILED\n" : "all passed\n");
    return failures ? 1 : 0;
}
