/*
 * The tuning record's text (core/tuning.h, mlff_tuning_set): what
 * settings.tuning, --tuning, the environment and measured record files
 * hand it. Any text is taken or refused with a message; what is taken
 * reads back the same from its own formatting (mlff_tuning_format), key by
 * key (every value the parser took, the formatter writes in a form the
 * parser takes again).
 */
#include <stdlib.h>
#include <string.h>

#include "core/tuning.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = 0;
    mlff_tuning t, again;
    mlff_tuning_defaults(&t);
    mlff_error err;
    memset(&err, 0, sizeof err);
    unsigned char changed[MLFF_TUNING_MAX_KEYS] = {0};
    const mlff_status s = mlff_tuning_set(&t, text, "fuzz", changed, &err);
    free(text);
    if (s != MLFF_OK) {
        FUZZ_CHECK(s == MLFF_ERROR_INVALID_ARGUMENT && err.message[0], "refused (status %d) without a message", s);
        return 0;
    }
    const int needed = mlff_tuning_format(&t, NULL, 0);
    FUZZ_CHECK(needed > 0, "the record formats to nothing");
    char *formatted = malloc((size_t)needed + 1);
    FUZZ_CHECK(formatted != NULL, "out of memory");
    mlff_tuning_format(&t, formatted, (size_t)needed + 1);
    mlff_tuning_defaults(&again);
    FUZZ_CHECK(mlff_tuning_set(&again, formatted, "formatted", NULL, &err) == MLFF_OK,
               "the record's own text is refused: %s", err.message);
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        FUZZ_CHECK(mlff_tuning_get(&t, key) == mlff_tuning_get(&again, key), "key %s: %lld read back as %lld",
                   key->key, (long long)mlff_tuning_get(&t, key), (long long)mlff_tuning_get(&again, key));
    }
    free(formatted);
    return 0;
}
