/*
 * mlff tune [--device KIND] [--device-index N] [--quick] [--dry-run] [--model PATH] [--tuning KEYS]
 * mlff tune --keys [--device KIND] [--device-index N] [--tuning KEYS]
 *
 * Measures on the device which kernel forms serve it best and writes them
 * into its tuning record in the cache directory, where later processes
 * find it (api/mlff.h, mlff_tune): progress on standard error, the record
 * on standard output. --keys lists every key of the record instead, with
 * its environment variable, the value in use on the device and the values
 * it takes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

static void show_progress(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "mlff tune: %s\n", line);
    fflush(stderr);
}

/* The context's text from one of the describing calls, as they size it. */
static char *context_text(mlff_context *ctx, mlff_status (*what)(const mlff_context *, char *, size_t, size_t *))
{
    size_t needed = 0;
    if (what(ctx, NULL, 0, &needed) != MLFF_OK)
        return NULL;
    char *text = malloc(needed);
    if (text && what(ctx, text, needed, NULL) != MLFF_OK) {
        free(text);
        text = NULL;
    }
    return text;
}

static int list_keys(const mlff_settings *settings)
{
    mlff_context *ctx = NULL;
    mlff_status status = mlff_context_create(settings, &ctx);
    if (status != MLFF_OK) {
        error_line("mlff: cannot open the device: %s", ctx ? mlff_last_error(ctx) : mlff_strerror(status));
        mlff_context_destroy(ctx);
        return EXIT_BAD_INPUT;
    }
    char *text = context_text(ctx, mlff_describe_tuning_keys);
    mlff_context_destroy(ctx);
    if (!text) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    const int code = print_text(text);
    free(text);
    return code;
}

int command_tune(int argc, char **argv)
{
    mlff_settings settings;
    mlff_default_settings(&settings);
    mlff_tune_options options;
    memset(&options, 0, sizeof options);
    options.progress = show_progress;
    int keys = 0;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        int r;
        if (!strcmp(argv[i], "--keys")) {
            keys = 1;
        } else if (!strcmp(argv[i], "--quick")) {
            options.quick = 1;
        } else if (!strcmp(argv[i], "--dry-run")) {
            options.no_write = 1;
        } else if ((r = option_value(argc, argv, &i, "--device", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            const int kind = device_kind_of(value);
            if (kind < 0)
                return usage_error("invalid --device '%s' (expected auto, cpu, opencl or vulkan)", value);
            settings.device = (mlff_device_kind)kind;
        } else if ((r = option_value(argc, argv, &i, "--device-index", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            char *end;
            errno = 0;
            const long index = strtol(value, &end, 10);
            if (errno || *end || index < 0 || index > 1000)
                return usage_error("invalid --device-index '%s'", value);
            settings.device_index = (int)index;
        } else if ((r = option_value(argc, argv, &i, "--model", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            options.model = value;
        } else if ((r = option_value(argc, argv, &i, "--tuning", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            settings.tuning = value;
        } else {
            return usage_error("tune: unknown %s '%s'", argv[i][0] == '-' ? "option" : "argument", argv[i]);
        }
    }
    if (keys)
        return list_keys(&settings);
    /* A record is a few kilobytes: one call, into room enough for it. */
    const size_t size = (size_t)1 << 18;
    char *record = malloc(size);
    if (!record) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    const mlff_status status = mlff_tune(&settings, &options, record, size, NULL);
    const int code = status == MLFF_OK ? print_text(record) : EXIT_BAD_INPUT;
    if (status != MLFF_OK)
        error_line("mlff: tune: %s", record);
    free(record);
    return code;
}
