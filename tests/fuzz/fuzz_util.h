/*
 * What the fuzz targets share: how a target reports a finding (abort with a
 * message: libFuzzer records the input, the standalone driver fails the
 * test), a reader that turns fuzzer bytes into choices, and scratch files.
 */
#ifndef MLFF_TESTS_FUZZ_UTIL_H
#define MLFF_TESTS_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry points every target defines. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the target checks does not hold: print why, then abort. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define FUZZ_CHECK(cond, ...)          \
    do {                               \
        if (!(cond))                   \
            fuzz_fail(__VA_ARGS__);    \
    } while (0)

/* The input as a stream of choices; past its end every read gives zeros,
 * so every input, however short, means something. */
typedef struct fuzz_reader {
    const uint8_t *data;
    size_t size, pos;
} fuzz_reader;

uint8_t fuzz_byte(fuzz_reader *r);
uint32_t fuzz_u32(fuzz_reader *r);
uint64_t fuzz_u64(fuzz_reader *r);
int fuzz_left(const fuzz_reader *r);

/* A private directory for a target's files (under $TMPDIR, else /tmp),
 * removed with everything in it at exit; NULL when it cannot be made. */
const char *fuzz_scratch_dir(void);
/* Removes every file in the scratch directory (not the directory). */
void fuzz_scratch_clear(void);
/* Writes a file under the scratch directory (name may hold subdirectories,
 * which are made); 0 on success. */
int fuzz_write_file(const char *name, const void *data, size_t size);
/* The full path of name under the scratch directory (a static buffer). */
const char *fuzz_path(const char *name);

#endif
