/*
 * mlff-convert: NeuroChem ANI model -> mlff model file.
 *
 *   mlff-convert [--name NAME] [--source TEXT] [--license TEXT] INFO_FILE OUTPUT.mlff
 *
 * The output depends only on the input files and the options, so the build
 * can convert the committed originals and a test can pin the result.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "model_file.h"
#include "neurochem.h"

typedef struct options {
    const char *name, *source, *license;
    const char *info, *output;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: mlff-convert [--name NAME] [--source TEXT] [--license TEXT] "
               "INFO_FILE OUTPUT.mlff\n"
               "Converts an ANI model in NeuroChem files (the .info file and the files it names)\n"
               "into an mlff model file.\n"
               "  --name NAME      model name stored in the file (default: the .info file name)\n"
               "  --source TEXT    where the original files come from\n"
               "  --license TEXT   the licence of the model's parameters\n");
}

/* Returns 0 on success, 1 on a usage error (reported), 2 for --help. */
static int parse_args(int argc, char **argv, options *o)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **target = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 2;
        if (strcmp(a, "--name") == 0)
            target = &o->name;
        else if (strcmp(a, "--source") == 0)
            target = &o->source;
        else if (strcmp(a, "--license") == 0)
            target = &o->license;
        if (target) {
            if (i + 1 == argc) {
                fprintf(stderr, "mlff-convert: %s needs a value\n", a);
                return 1;
            }
            *target = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "mlff-convert: unknown option %s\n", a);
            return 1;
        } else if (positional == 0) {
            o->info = a;
            positional++;
        } else if (positional == 1) {
            o->output = a;
            positional++;
        } else {
            fprintf(stderr, "mlff-convert: too many arguments (%s)\n", a);
            return 1;
        }
    }
    if (positional != 2) {
        fprintf(stderr, "mlff-convert: expected INFO_FILE and OUTPUT.mlff\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    int r = parse_args(argc, argv, &o);
    if (r == 2) {
        usage(stdout);
        return 0;
    }
    if (r != 0) {
        usage(stderr);
        return 1;
    }
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    mlff_status s = mlff_neurochem_import(o.info, o.name, &mf, &err);
    if (s == MLFF_OK && o.source)
        s = mlff_model_file_set_meta(mf, "source", o.source, &err);
    if (s == MLFF_OK && o.license)
        s = mlff_model_file_set_meta(mf, "license", o.license, &err);
    if (s == MLFF_OK)
        s = mlff_model_file_write(mf, o.output, &err);
    mlff_model_file_destroy(mf);
    if (s != MLFF_OK) {
        fprintf(stderr, "mlff-convert: %s\n", err.message);
        return 1;
    }
    return 0;
}
