/*
 * Test helper: writes small ANI models in NeuroChem's file layout (.info,
 * .params, sae file, bzip2-compressed .nnf network descriptions, raw
 * float32 .wparam/.bparam), with deterministic pseudo-random weights, and
 * hands back exactly what it wrote so tests can compare an import, or an
 * evaluation, against it.
 *
 *   ncw_spec spec;
 *   ncw_spec_ani1x_like(&spec);          // or fill one by hand
 *   char *dir = ncw_make_temp_dir("mytest");
 *   ncw_model *m = ncw_write(&spec, dir); // NULL on failure (reason on stderr)
 *   ... mlff_neurochem_import(m->info_path, ...) ...
 *   const ncw_layer *l0 = &ncw_get_network(m, element, member)->layers[0];
 *   ncw_model_free(m);
 *   ncw_remove_tree(dir); free(dir);
 *
 * Layout written under dir:
 *   model.info
 *   model/aev.params, model/sae_linfit.dat
 *   model/train<m>/networks/ANN-<El>.nnf, ANN-<El>.nnf-l<k>.wparam/.bparam (k from 1)
 */
#ifndef MLFF_TESTS_NEUROCHEM_WRITER_H
#define MLFF_TESTS_NEUROCHEM_WRITER_H

#include <stddef.h>
#include <stdint.h>

#define NCW_MAX_ELEMENTS 8
#define NCW_MAX_SHIFTS 32
#define NCW_MAX_LAYERS 8

/* What to write. Plain arrays, so a test can copy a spec and change one thing. */
typedef struct ncw_spec {
    int n_elements;
    const char *elements[NCW_MAX_ELEMENTS]; /* symbols in network order ("H", "C", ...) */
    double self_energies[NCW_MAX_ELEMENTS]; /* Hartree, written with 17 digits (exact) */
    double rcr, rca;                        /* cutoffs, written with 17 digits (exact) */
    /* AEV constants, written as NeuroChem does ("%.7e"): the importer reads
     * them back rounded to float32 (see ncw_model.aev). */
    double etar, zeta, etaa;
    int n_shfr, n_shfz, n_shfa;
    double shfr[NCW_MAX_SHIFTS], shfz[NCW_MAX_SHIFTS], shfa[NCW_MAX_SHIFTS];
    int ensemble_size;
    /* Layers of every atomic network, output layer included: layer l maps
     * in(l) -> layer_sizes[l], with in(0) = the AEV length (or inputsize, if
     * set). Nothing is checked, so tests can write broken models. */
    int n_layers;
    int layer_sizes[NCW_MAX_LAYERS];
    int activation_codes[NCW_MAX_LAYERS]; /* NeuroChem codes: 9 = CELU(0.1), 6 = linear */
    int inputsize;                        /* 0: the AEV length the constants imply */
    uint64_t seed;                        /* for the weights; same seed, same files */
    double weight_scale;                  /* weights uniform in +-scale/sqrt(in); 0 means 1 */
} ncw_spec;

/* ANI-1x-like: H C N O, Rcr 5.2, Rca 3.5, EtaR 16 with 16 ShfR, Zeta 32 with
 * 8 ShfZ, EtaA 8 with 4 ShfA (64 radial + 320 angular = 384 features),
 * ANI-1x self energies, 2 members of 384 -> 16 -> 8 -> 1 (CELU, CELU, linear). */
void ncw_spec_ani1x_like(ncw_spec *spec);

/* n_species * n_shfr + n_species (n_species + 1) / 2 * n_shfa * n_shfz */
int ncw_aev_length(const ncw_spec *spec);

typedef struct ncw_layer {
    int in, out;
    int activation_code; /* as written */
    float *weights;      /* [out][in], row-major, as written */
    float *biases;       /* [out] */
} ncw_layer;

typedef struct ncw_network {
    int n_layers;
    ncw_layer *layers;
} ncw_network;

/* The AEV constants as the importer must see them: rcr, rca and the self
 * energies exactly; the other six rounded to float32 and widened. */
typedef struct ncw_aev {
    double rcr, rca, etar, zeta, etaa;
    double shfr[NCW_MAX_SHIFTS], shfz[NCW_MAX_SHIFTS], shfa[NCW_MAX_SHIFTS];
} ncw_aev;

typedef struct ncw_model {
    ncw_spec spec;
    ncw_aev aev;
    char *dir;            /* where the files are */
    char *info_path;      /* dir/model.info */
    char *prefix;         /* dir/model/train (members are prefix<m>) */
    ncw_network *networks; /* [element * ensemble_size + member] */
} ncw_model;

/* Writes every file under dir (which must exist). NULL on failure, with the
 * reason on stderr. */
ncw_model *ncw_write(const ncw_spec *spec, const char *dir);
void ncw_model_free(ncw_model *m);

const ncw_network *ncw_get_network(const ncw_model *m, int element, int member);

/* Path of a member's network file plus suffix: suffix "" gives the .nnf,
 * "-l1.wparam" its first weight file. New string. */
char *ncw_path(const ncw_model *m, int element, int member, const char *suffix);

/* The network description text the writer used (new string), for tests
 * that edit it and write it back with ncw_write_nnf. */
char *ncw_network_text(const ncw_model *m, int element, int member);

/* Writes text (len bytes) as a NeuroChem .nnf: "<len>=\n" + bzip2 stream.
 * Returns 0 on success. */
int ncw_write_nnf(const char *path, const char *text, size_t len);

/* Writes/reads a whole file; 0 on success. ncw_read_file's buffer gets a NUL after the data. */
int ncw_write_file(const char *path, const void *data, size_t size);
int ncw_read_file(const char *path, char **data, size_t *size);

/* A new empty directory under $TMPDIR (or /tmp), named after tag; NULL on failure. */
char *ncw_make_temp_dir(const char *tag);
/* Removes dir and everything in it; 0 on success. */
int ncw_remove_tree(const char *dir);

#endif
