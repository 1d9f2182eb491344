/*
 * What every `mlff` command shares: its exit statuses, one-line messages on
 * standard error, and option parsing.
 */
#ifndef MLFF_TOOLS_CLI_UTIL_H
#define MLFF_TOOLS_CLI_UTIL_H

#include "mlff.h"

/* Exit statuses (README's command line section lists them). */
enum {
    EXIT_OK = 0,
    EXIT_BAD_INPUT = 1,   /* bad input, or a failure */
    EXIT_USAGE = 2,
    EXIT_INTERRUPTED = 3  /* SIGINT or SIGTERM: the output holds whole frames; --resume goes on */
};

/* One line on standard error (line feeds inside become spaces). */
void error_line(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* "mlff: ... (see 'mlff --help')"; returns EXIT_USAGE. */
int usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The usage text on standard output; EXIT_OK (or EXIT_BAD_INPUT if it cannot be written). */
int print_usage(void);

/* The library's message for the last error, else the status text. */
const char *library_message(const mlff_context *ctx, mlff_status status);

/*
 * If argv[*i] is the option `name` (as "--name VALUE", "--name=VALUE", or for
 * a short name "-o VALUE"/"-oVALUE"), store its value and return 1; return 0
 * if it is another argument, -1 after a usage error (already reported).
 */
int option_value(int argc, char **argv, int *i, const char *name, const char **value);

/* A positive integer option value into *out (at most max); -1 after a usage error. */
int option_positive(const char *name, const char *value, long long max, long long *out);

/* --device's values (auto, cpu, opencl, vulkan) as mlff_device_kind; -1 for another. */
int device_kind_of(const char *name);

/* value as one of the n names: its index; -1 after a usage error naming option. */
int option_choice(const char *option, const char *value, const char *const names[], int n);

/* The options of the commands that evaluate a model (energy, hessian). */
typedef struct run_options {
    const char *model;  /* --model PATH; NULL: the default model */
    const char *output; /* -o, --output OUT; NULL: standard output */
    mlff_device_kind device;
    mlff_precision precision;
    int verbose;
} run_options;

/* If argv[*i] is one of run_options' (taking its value), 1; 0 for another
 * argument; -1 after a usage error. */
int run_option(int argc, char **argv, int *i, run_options *o);

/* The input files named to a command that evaluates a model. */
typedef struct command_files {
    const char **files; /* in the order named */
    size_t n_files;
    int only_files; /* after "--", every argument is a file */
} command_files;

/* Room for every argument as a file: -1, or EXIT_BAD_INPUT after a message. */
int command_files_init(command_files *f, int argc);

/* What command_argument made of an argument, unless it returns an exit
 * status (EXIT_OK or EXIT_BAD_INPUT after -h printed the usage, EXIT_USAGE
 * after a usage error). */
enum {
    ARGUMENT_TAKEN = -1, /* a file, "--", or one of run_options' with its value */
    ARGUMENT_OWN = -2    /* an option for the command itself to parse */
};

/* The head of energy's and hessian's argument loops, for argv[*i]: files
 * ("-" and anything not starting with '-', every argument after "--"), -h
 * and --help, run_options'. */
int command_argument(int argc, char **argv, int *i, command_files *f, run_options *run);

/* Text to standard output; EXIT_OK, or EXIT_BAD_INPUT after a message. */
int print_text(const char *text);

#endif
