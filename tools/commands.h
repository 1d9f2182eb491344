/* The commands of the mlff command line, each in its own file; mlff_main.c
 * dispatches. Each takes the arguments after its name and returns the exit
 * status (cli_util.h). */
#ifndef MLFF_TOOLS_COMMANDS_H
#define MLFF_TOOLS_COMMANDS_H

int command_energy(int argc, char **argv);  /* cmd_energy.c */
int command_devices(int argc, char **argv); /* cmd_devices.c */
int command_tune(int argc, char **argv);    /* cmd_tune.c */
int command_bench(int argc, char **argv);   /* cmd_bench.c */
int command_hessian(int argc, char **argv); /* cmd_hessian.c */

#endif
