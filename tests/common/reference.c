#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_lite.h"

const char *const reference_molecules[] = {
    "g2_CH4",      "g2_H2O",       "g2_NH3",      "g2_CH3Cl",     "g2_CH3SH",
    "g2_HCF3",     "g2_CH3CH2OH",  "g2_CH3COOH",  "g2_CH3CONH2",  "g2_C6H6",
    "g2_C5H5N",    "g2_C4H4S",     "water_cluster_100", NULL,
};

const char *const reference_boxes[] = {"water_box_64", "water_box_64_triclinic", NULL};

int reference_load(reference *r, const char *dir, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *json = json_read_file(path);
    if (!json) {
        fprintf(stderr, "cannot read %s\n", path);
        return 0;
    }
    double n_atoms = 0, energy = 0;
    int ok = json_numbers(json, "n_atoms", &n_atoms, 1) == 1 &&
             json_numbers(json, "energy", &energy, 1) == 1;
    r->n_atoms = (int)n_atoms;
    r->energy = energy * HARTREE_TO_EV;
    r->species = malloc((size_t)r->n_atoms * sizeof *r->species);
    r->positions = malloc((size_t)r->n_atoms * 3 * sizeof *r->positions);
    r->forces = malloc((size_t)r->n_atoms * 3 * sizeof *r->forces);
    double *z = malloc((size_t)r->n_atoms * sizeof *z);
    ok = ok && r->species && r->positions && r->forces && z &&
         json_numbers(json, "species", z, r->n_atoms) == r->n_atoms &&
         json_numbers(json, "coordinates", r->positions, 3 * r->n_atoms) == 3 * r->n_atoms &&
         json_numbers(json, "forces", r->forces, 3 * r->n_atoms) == 3 * r->n_atoms;
    double pbc[3] = {0, 0, 0};
    ok = ok && json_numbers(json, "pbc", pbc, 3) == 3 && json_numbers(json, "cell", r->cell, 9) >= 0;
    for (int d = 0; d < 3; d++)
        r->pbc[d] = pbc[d] != 0;
    for (int a = 0; ok && a < r->n_atoms; a++)
        r->species[a] = (int32_t)z[a];
    for (int k = 0; ok && k < 3 * r->n_atoms; k++)
        r->forces[k] *= HARTREE_TO_EV;
    free(z);
    free(json);
    if (!ok) {
        fprintf(stderr, "%s: malformed reference\n", path);
        reference_free(r);
    }
    return ok;
}

void reference_free(reference *r)
{
    free(r->species);
    free(r->positions);
    free(r->forces);
    memset(r, 0, sizeof *r);
}
