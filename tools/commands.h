/* The commands of the mlff command line besides `energy` (mlff_main.c),
 * each in its own file, and what they share. Each takes the arguments after
 * its name and returns the exit status. */
#ifndef MLFF_TOOLS_COMMANDS_H
#define MLFF_TOOLS_COMMANDS_H

#include "mlff.h"

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

int command_tune(int argc, char **argv);    /* cmd_tune.c */
int command_devices(int argc, char **argv); /* cmd_devices.c */
int command_bench(int argc, char **argv);   /* cmd_bench.c */

/* cli_common.c: one line on standard error (new lines in it made spaces). */
void cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* "mlff: <what> (see 'mlff --help')"; returns EXIT_USAGE. */
int cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* If argv[*i] is option `name` ("--name VALUE" or "--name=VALUE"), its value
 * into *value and 1; 0 if it is another argument; -1 after a usage error. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* --device's values: auto, cpu, opencl, vulkan; -1 for another. */
int cli_device_kind(const char *name);
/* Writes text to standard output; EXIT_OK, or EXIT_BAD_INPUT after a message. */
int cli_print(const char *text);

#endif
