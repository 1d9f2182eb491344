/* Messages and option parsing shared by the commands (cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defined by mlff_main.c, which owns the usage text. */
extern const char mlff_usage_text[];

static void vline(const char *format, va_list ap)
{
    char line[16384];
    vsnprintf(line, sizeof line, format, ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void error_line(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vline(format, ap);
    va_end(ap);
}

int usage_error(const char *format, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    error_line("mlff: %s (see 'mlff --help')", line);
    return EXIT_USAGE;
}

int print_usage(void)
{
    fputs(mlff_usage_text, stdout);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_BAD_INPUT;
}

const char *library_message(const mlff_context *ctx, mlff_status status)
{
    const char *message = ctx ? mlff_last_error(ctx) : NULL;
    return message && *message ? message : mlff_strerror(status);
}

int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    int is_short = n == 2 && name[0] == '-' && name[1] != '-';
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '\0') {
        if (*i + 1 >= argc) {
            usage_error("option %s needs a value", name);
            return -1;
        }
        *value = argv[++*i];
    } else if (arg[n] == '=' && !is_short) {
        *value = arg + n + 1;
    } else if (is_short) {
        *value = arg + n;
    } else {
        return 0; /* a longer option that starts with the same letters */
    }
    if (**value == '\0') {
        usage_error("option %s needs a non-empty value", name);
        return -1;
    }
    return 1;
}

int option_positive(const char *name, const char *value, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (errno || end == value || *end || v < 1 || v > max) {
        usage_error("invalid %s '%s' (expected a positive number up to %lld)", name, value, max);
        return -1;
    }
    *out = v;
    return 0;
}

int device_kind_of(const char *name)
{
    static const char *const names[] = {"auto", "cpu", "opencl", "vulkan"}; /* mlff_device_kind */
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, names[k]))
            return k;
    return -1;
}

int print_text(const char *text)
{
    fputs(text, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        error_line("mlff: cannot write to standard output: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

int option_choice(const char *option, const char *value, const char *const names[], int n)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(value, names[k]))
            return k;
    char expected[256] = "";
    for (int k = 0; k < n; k++)
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s",
                 k == 0 ? "" : k == n - 1 ? " or " : ", ", names[k]);
    usage_error("invalid %s '%s' (expected %s)", option, value, expected);
    return -1;
}

int run_option(int argc, char **argv, int *i, run_options *o)
{
    static const char *const devices[] = {"auto", "cpu", "opencl", "vulkan"}; /* mlff_device_kind */
    static const char *const precisions[] = {"float32", "float64"};           /* mlff_precision */
    const char *value;
    int r, k;
    if (!strcmp(argv[*i], "--verbose")) {
        o->verbose = 1;
        return 1;
    }
    if ((r = option_value(argc, argv, i, "--model", &value)) != 0) {
        if (r > 0)
            o->model = value;
        return r;
    }
    if ((r = option_value(argc, argv, i, "--output", &value)) != 0 ||
        (r = option_value(argc, argv, i, "-o", &value)) != 0) {
        if (r > 0)
            o->output = value;
        return r;
    }
    if ((r = option_value(argc, argv, i, "--device", &value)) != 0) {
        if (r > 0 && (k = option_choice("--device", value, devices, 4)) < 0)
            return -1;
        if (r > 0)
            o->device = (mlff_device_kind)k;
        return r;
    }
    if ((r = option_value(argc, argv, i, "--precision", &value)) != 0) {
        if (r > 0 && (k = option_choice("--precision", value, precisions, 2)) < 0)
            return -1;
        if (r > 0)
            o->precision = k ? MLFF_PRECISION_FLOAT64 : MLFF_PRECISION_FLOAT32;
        return r;
    }
    return 0;
}

int command_files_init(command_files *f, int argc)
{
    memset(f, 0, sizeof *f);
    f->files = calloc((size_t)argc + 1, sizeof *f->files);
    if (!f->files) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    return -1;
}

int command_argument(int argc, char **argv, int *i, command_files *f, run_options *run)
{
    const char *arg = argv[*i];
    if (f->only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
        f->files[f->n_files++] = arg;
        return ARGUMENT_TAKEN;
    }
    if (strcmp(arg, "--") == 0) {
        f->only_files = 1;
        return ARGUMENT_TAKEN;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
        return print_usage();
    const int r = run_option(argc, argv, i, run);
    return r < 0 ? EXIT_USAGE : r > 0 ? ARGUMENT_TAKEN : ARGUMENT_OWN;
}
