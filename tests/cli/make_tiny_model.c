/*
 * Writes a tiny ANI model in NeuroChem's layout into DIR: the elements of
 * ANI-2x (H C N O S F Cl), 140 features, no angular terms at the distances
 * tests/cli/gen_frames.py puts atoms, 8 members of 140 -> 4 -> 4 -> 4 -> 1.
 * Its numbers mean nothing; it costs a small fraction of ANI-2x, so that
 * the streaming tests can push 10^5 frames through `mlff energy` in seconds.
 * Prints the path of the .info file (the input of mlff-convert).
 *
 *   make_tiny_model DIR
 */
#include <stdio.h>

#include "neurochem_writer.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_tiny_model DIR\n");
        return 2;
    }
    static const char *const elements[] = {"H", "C", "N", "O", "S", "F", "Cl"};
    static const double sae[] = {-0.5978, -38.0893, -54.7115, -75.1912, -398.1577, -99.8001, -460.1333};
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    spec.n_elements = 7;
    for (int i = 0; i < 7; i++) {
        spec.elements[i] = elements[i];
        spec.self_energies[i] = sae[i];
    }
    spec.rcr = 5.1;
    spec.rca = 0.95; /* closer than the generator ever puts atoms: no angular terms, the cost of ANI-2x's */
    spec.n_shfr = 4;
    for (int i = 0; i < 4; i++)
        spec.shfr[i] = 0.9 + 1.0 * i;
    spec.n_shfz = 2;
    spec.shfz[0] = 0.7853981633974483;
    spec.shfz[1] = 2.356194490192345;
    spec.n_shfa = 2;
    spec.shfa[0] = 0.9;
    spec.shfa[1] = 2.2;
    /* ANI-2x's shape (8 members of 3 CELU layers and a linear one), tiny
     * widths: its graph has ANI-2x's nodes, so the library builds it the
     * way it builds ANI-2x's. */
    spec.ensemble_size = 8;
    spec.n_layers = 4;
    const int sizes[] = {4, 4, 4, 1}, codes[] = {9, 9, 9, 6};
    for (int l = 0; l < 4; l++) {
        spec.layer_sizes[l] = sizes[l];
        spec.activation_codes[l] = codes[l];
    }
    ncw_model *m = ncw_write(&spec, argv[1]);
    if (!m)
        return 1;
    printf("%s\n", m->info_path);
    ncw_model_free(m);
    return 0;
}
