/*
 * Writes the fuzz targets' seed corpora (committed under tests/fuzz/corpus;
 * README.md says when to run this again):
 *   make_corpus ANI2X_MODEL OUT_DIR
 * OUT_DIR/model_file: small ANI models converted from NeuroChem files that
 *   tests/models/neurochem_writer.c writes (2 to 4 elements), and ANI-2x's
 *   metadata, features and self energies with networks of two units;
 * OUT_DIR/neurochem: the NeuroChem files of such models, as the archives
 *   fuzz_neurochem.c reads (network texts uncompressed);
 * OUT_DIR/api_cpu: a few calls in the byte language of fuzz_api.c.
 */
#include <bzlib.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/model_file.h"
#include "models/neurochem.h"
#include "tests/models/neurochem_writer.h"

static void die(const char *what)
{
    fprintf(stderr, "make_corpus: %s\n", what);
    exit(1);
}

static void write_file(const char *dir, const char *name, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        die(path);
}

static void small_spec(ncw_spec *s, int n_elements, int members, int hidden, uint64_t seed)
{
    ncw_spec_ani1x_like(s);
    s->n_elements = n_elements;
    s->n_shfr = 4;
    s->n_shfz = 2;
    s->n_shfa = 2;
    s->ensemble_size = members;
    s->n_layers = 2;
    s->layer_sizes[0] = hidden;
    s->layer_sizes[1] = 1;
    s->activation_codes[0] = 9;
    s->activation_codes[1] = 6;
    s->seed = seed;
}

/* The archive of fuzz_neurochem.c: "%%% NAME\n" and the bytes, per file. */
static char *archive;
static size_t archive_size;
static size_t root_len;

static void append(const void *data, size_t n)
{
    archive = realloc(archive, archive_size + n);
    if (!archive)
        die("out of memory");
    memcpy(archive + archive_size, data, n);
    archive_size += n;
}

static int add_to_archive(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F)
        return 0;
    FILE *f = fopen(path, "rb");
    char *data = malloc((size_t)st->st_size + 1);
    if (!f || !data || fread(data, 1, (size_t)st->st_size, f) != (size_t)st->st_size)
        die(path);
    fclose(f);
    char header[4200];
    const char *name = path + root_len + 1;
    const size_t n = strlen(name);
    if (archive_size)
        append("\n", 1);
    append(header, (size_t)snprintf(header, sizeof header, "%%%%%% %s\n", name));
    if (n > 4 && !strcmp(name + n - 4, ".nnf")) {
        /* The text, as fuzz_neurochem.c compresses it again. */
        const char *eq = strchr(data, '=');
        unsigned len = (unsigned)atoi(data);
        char *text = malloc((size_t)len + 1);
        if (!eq || !text ||
            BZ2_bzBuffToBuffDecompress(text, &len, (char *)eq + 2, (unsigned)(st->st_size - (eq + 2 - data)), 0, 0) !=
                BZ_OK)
            die(path);
        append(text, len);
        free(text);
    } else {
        append(data, (size_t)st->st_size);
    }
    free(data);
    return 0;
}

static void models(const char *out)
{
    char model_dir[4096], nc_dir[4096];
    snprintf(model_dir, sizeof model_dir, "%s/model_file", out);
    snprintf(nc_dir, sizeof nc_dir, "%s/neurochem", out);
    mkdir(model_dir, 0755);
    mkdir(nc_dir, 0755);
    static const int shapes[][3] = {{2, 1, 2}, {3, 2, 3}, {4, 1, 4}, {2, 3, 1}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        ncw_spec spec;
        small_spec(&spec, shapes[k][0], shapes[k][1], shapes[k][2], 100 + k);
        char *dir = ncw_make_temp_dir("corpus");
        ncw_model *m = dir ? ncw_write(&spec, dir) : NULL;
        if (!m)
            die("cannot write a NeuroChem model");
        mlff_error err;
        mlff_error_clear(&err);
        mlff_model_file *mf = NULL;
        char name[256], path[4200];
        snprintf(name, sizeof name, "ani_%de_%dm_%dh.mlff", shapes[k][0], shapes[k][1], shapes[k][2]);
        snprintf(path, sizeof path, "%s/%s", model_dir, name);
        if (mlff_neurochem_import(m->info_path, "small", &mf, &err) != MLFF_OK ||
            mlff_model_file_write(mf, path, &err) != MLFF_OK)
            die(err.message);
        mlff_model_file_destroy(mf);
        archive_size = 0;
        root_len = strlen(dir);
        nftw(dir, add_to_archive, 16, FTW_PHYS);
        snprintf(name, sizeof name, "ani_%de_%dm_%dh.nc", shapes[k][0], shapes[k][1], shapes[k][2]);
        write_file(nc_dir, name, archive, archive_size);
        ncw_model_free(m);
        ncw_remove_tree(dir);
        free(dir);
    }
    free(archive);
}

/* ANI-2x's metadata, features and self energies; one member of (features
 * -> 2 -> 1) networks. */
static void ani2x_mini(const char *ani2x, const char *out)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *ani = NULL, *mini = mlff_model_file_create();
    if (!mini || mlff_model_file_read(ani2x, &ani, &err) != MLFF_OK)
        die(err.message);
    for (size_t k = 0; k < ani->n_meta; k++)
        mlff_model_file_set_meta(mini, ani->meta[k].key,
                                 strcmp(ani->meta[k].key, "ensemble_size") ? ani->meta[k].value : "1", &err);
    for (size_t k = 0; k < ani->n_tensors; k++) {
        const mlff_model_tensor *t = &ani->tensors[k];
        char el[8];
        int layer;
        if (strncmp(t->name, "network.", 8))
            mlff_model_file_add_tensor(mini, t->name, t->dtype, t->rows, t->cols, t->data, &err);
        else if (sscanf(t->name, "network.%7[^.].0.%d.", el, &layer) == 2 && layer == 0 &&
                 strstr(t->name, ".weight")) {
            char name[96];
            float *w = calloc((size_t)t->cols * 2, sizeof *w);
            for (int64_t c = 0; w && c < t->cols; c++)
                w[c] = w[t->cols + c] = ((const float *)t->data)[c];
            const float w1[2] = {0.5f, -0.25f}, b[2] = {0.01f, -0.02f};
            const int32_t act[2] = {1, 0};
            const double alpha[2] = {0.1, 0.0};
            snprintf(name, sizeof name, "network.%s.0.0.weight", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_F32, 2, t->cols, w, &err);
            snprintf(name, sizeof name, "network.%s.0.0.bias", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_F32, 2, 1, b, &err);
            snprintf(name, sizeof name, "network.%s.0.1.weight", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_F32, 1, 2, w1, &err);
            snprintf(name, sizeof name, "network.%s.0.1.bias", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_F32, 1, 1, b, &err);
            snprintf(name, sizeof name, "network.%s.0.activation", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_I32, 2, 1, act, &err);
            snprintf(name, sizeof name, "network.%s.0.activation_alpha", el);
            mlff_model_file_add_tensor(mini, name, MLFF_DTYPE_F64, 2, 1, alpha, &err);
            free(w);
        }
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/model_file/ani-2x_mini.mlff", out);
    if (err.status != MLFF_OK || mlff_model_file_write(mini, path, &err) != MLFF_OK)
        die(err.message);
    mlff_model_file_destroy(mini);
    mlff_model_file_destroy(ani);
}

/* Calls in fuzz_api.c's byte language (its decoder says what each byte means). */
static void api(const char *out)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/api_cpu", out);
    mkdir(dir, 0755);
    /* One water molecule: context 0, one call, mlff_compute, one system of 3
     * atoms (O H H, steps of 0.96 A), a cell that is not used, every output. */
    static const uint8_t water[] = {0, 0, 1, 3, 0, 3, 80, 80, 80, 0, 128, 80, 80, 0, 32, 110, 80, 0, 7, 0, 0, 7};
    /* The same in a 3 A cubic box periodic along all three axes (float64,
     * sparse, skin 0.3, 3 atoms a chunk). */
    static const uint8_t box[] = {1, 0, 1, 3, 0, 3, 80, 80, 80, 0, 128, 80, 80, 0, 32, 110, 80, 3, 7, 1, 7, 7};
    /* Two H atoms in the thin slab cell: Lattice="0.001 0 0 0 0.001 0 0 0 10" pbc="T T F". */
    static const uint8_t slab[] = {0, 0, 1, 2, 0, 0, 80, 80, 80, 0, 80, 80, 130, 3, 3, 3, 7};
    /* A subdomain of 6 atoms, 4 owned, every output (context 3: skin 1 A, 1 atom a chunk). */
    static const uint8_t sub[] = {3, 2, 6, 3, 80, 80, 80, 0, 128, 80, 80, 0, 32, 110, 80, 1, 140, 100, 90,
                                  0, 40, 80, 80, 0, 90, 20, 80, 4, 31};
    /* Three systems: empty, one isolated atom, two atoms (context 2: dense; mlff_evaluate). */
    static const uint8_t sparse[] = {2, 1, 3, 0, 1, 2, 0, 1, 80, 80, 80, 0, 120, 90, 80, 2, 90, 80, 80,
                                     0, 7, 0, 0, 7, 0, 0, 7, 0, 0, 7};
    write_file(dir, "water", water, sizeof water);
    write_file(dir, "water_box", box, sizeof box);
    write_file(dir, "thin_slab", slab, sizeof slab);
    write_file(dir, "subdomain", sub, sizeof sub);
    write_file(dir, "empty_and_isolated", sparse, sizeof sparse);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: make_corpus ANI2X_MODEL OUT_DIR");
    mkdir(argv[2], 0755);
    models(argv[2]);
    ani2x_mini(argv[1], argv[2]);
    api(argv[2]);
    return 0;
}
