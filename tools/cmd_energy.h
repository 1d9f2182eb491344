/* `mlff energy`: streamed evaluation of XYZ / extended XYZ frames (cmd_energy.c). */
#ifndef MLFF_TOOLS_CMD_ENERGY_H
#define MLFF_TOOLS_CMD_ENERGY_H

/* argv after "energy"; returns the exit status. */
int cmd_energy(int argc, char **argv);

#endif
