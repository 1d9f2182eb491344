/*
 * The model-file loader: any bytes as a model file, through the public API
 * (the file format, the family's checks, the graph of every element), then
 * an evaluation of whatever loads. The input's last 32 bytes are replaced by
 * the checksum of the rest, as a writer makes them, so that the fuzzer
 * explores what lies behind the checksum (a wrong checksum is refused
 * before anything is parsed: tests/models/test_model_file.c covers that).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_model.h"
#include "fuzz_util.h"
#include "models/model_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_model_init(*argc, *argv);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *bytes = malloc(size ? size : 1);
    FUZZ_CHECK(bytes, "out of memory");
    memcpy(bytes, data, size);
    mlff_model_file_seal(bytes, size);
    /* A file in memory: the loader maps it as it maps any model file. */
    const int fd = memfd_create("fuzz.mlff", MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0, "memfd_create failed");
    FUZZ_CHECK(write(fd, bytes, size) == (ssize_t)size, "writing the memory file failed");
    free(bytes);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    fuzz_model_load_and_run(path);
    close(fd);
    return 0;
}
