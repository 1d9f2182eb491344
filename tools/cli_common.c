/* What the commands share (commands.h). */
#include "commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vline(const char *format, va_list ap)
{
    char line[2048];
    vsnprintf(line, sizeof line, format, ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void cli_error(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vline(format, ap);
    va_end(ap);
}

int cli_usage_error(const char *format, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    cli_error("mlff: %s (see 'mlff --help')", what);
    return EXIT_USAGE;
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    const size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '\0') {
        if (*i + 1 >= argc) {
            cli_usage_error("option %s needs a value", name);
            return -1;
        }
        *value = argv[++*i];
    } else if (arg[n] == '=') {
        *value = arg + n + 1;
    } else {
        return 0;
    }
    if (**value == '\0') {
        cli_usage_error("option %s needs a non-empty value", name);
        return -1;
    }
    return 1;
}

int cli_device_kind(const char *name)
{
    static const char *const names[] = {"auto", "cpu", "opencl", "vulkan"}; /* mlff_device_kind */
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, names[k]))
            return k;
    return -1;
}

int cli_print(const char *text)
{
    fputs(text, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("mlff: cannot write to standard output: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}
