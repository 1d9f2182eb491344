/*
 * Conversion of the committed ANI-2x NeuroChem files is deterministic and
 * reproduces the committed checksum; so does the model the build made.
 *
 * Usage: test_convert MLFF_CONVERT INFO_FILE SHA256_FILE BUILD_MODEL [CONVERT_OPTIONS...]
 * (CONVERT_OPTIONS: the --name/--source/--license the build passes.)
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sha256.h"
#include "models/model_file.h"
#include "neurochem_writer.h"
#include "tests/common/check.h"


/* Runs argv[0] with argv; returns its exit status (-1 if it did not exit). */
static int run(char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execv(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static int convert(const char *exe, char **options, int n_options, const char *info,
                   const char *out)
{
    char **argv = calloc((size_t)n_options + 4, sizeof *argv);
    if (!argv)
        exit(1);
    argv[0] = (char *)exe;
    for (int i = 0; i < n_options; i++)
        argv[1 + i] = options[i];
    argv[1 + n_options] = (char *)info;
    argv[2 + n_options] = (char *)out;
    int r = run(argv);
    free(argv);
    return r;
}

static int file_sha256(const char *path, char hex[65], char **bytes, size_t *size)
{
    char *data;
    size_t n;
    if (ncw_read_file(path, &data, &n) != 0)
        return 0;
    uint8_t digest[32];
    mlff_sha256(data, n, digest);
    mlff_sha256_hex(digest, hex);
    if (bytes) {
        *bytes = data;
        *size = n;
    } else {
        free(data);
    }
    return 1;
}

/* The first word of a sha256sum line. */
static int committed_sha256(const char *path, char hex[65])
{
    char *data;
    size_t n;
    if (ncw_read_file(path, &data, &n) != 0)
        return 0;
    int ok = n >= 64;
    for (int i = 0; ok && i < 64; i++)
        ok = isxdigit((unsigned char)data[i]) && !isupper((unsigned char)data[i]);
    ok = ok && (n == 64 || isspace((unsigned char)data[64]));
    if (ok) {
        memcpy(hex, data, 64);
        hex[64] = '\0';
    }
    free(data);
    return ok;
}

static void check_content(const char *path)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    CHECK(mlff_model_file_read(path, &mf, &err) == MLFF_OK, "read %s: %s", path, err.message);
    if (!mf)
        return;
    const char *name = mlff_model_file_meta(mf, "name"), *el = mlff_model_file_meta(mf, "elements");
    const char *members = mlff_model_file_meta(mf, "ensemble_size");
    CHECK(name && !strcmp(name, "ANI-2x"), "name %s", name ? name : "(none)");
    CHECK(el && !strcmp(el, "H C N O S F Cl"), "elements %s", el ? el : "(none)");
    CHECK(members && !strcmp(members, "8"), "ensemble size %s", members ? members : "(none)");
    CHECK(mf->n_tensors == 9 + 7 * 8 * (4 * 2 + 2), "%zu tensors", mf->n_tensors);
    const mlff_model_tensor *t = mlff_model_file_tensor(mf, "aev.radial.eta");
    CHECK(t && t->dtype == MLFF_DTYPE_F64 && *(double *)t->data == (double)19.7f, "EtaR");
    t = mlff_model_file_tensor(mf, "aev.radial.cutoff");
    CHECK(t && *(double *)t->data == 5.1, "Rcr stays double");
    t = mlff_model_file_tensor(mf, "aev.angular.shift_theta");
    CHECK(t && t->rows == 4 && ((double *)t->data)[0] == (double)0.39269908f, "ShfZ");
    t = mlff_model_file_tensor(mf, "self_energy");
    CHECK(t && t->rows == 7 && ((double *)t->data)[0] == -0.5978583943827134 &&
              ((double *)t->data)[6] == -460.1681939421027, "self energies");
    t = mlff_model_file_tensor(mf, "network.H.0.0.weight");
    CHECK(t && t->dtype == MLFF_DTYPE_F32 && t->rows == 256 && t->cols == 1008, "H first layer");
    t = mlff_model_file_tensor(mf, "network.Cl.7.3.bias");
    CHECK(t && t->rows == 1 && t->cols == 1, "Cl output bias");
    t = mlff_model_file_tensor(mf, "network.O.3.activation");
    CHECK(t && t->rows == 4 && ((int32_t *)t->data)[0] == 1 && ((int32_t *)t->data)[3] == 0,
          "activations");
    mlff_model_file_destroy(mf);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MLFF_CONVERT INFO_FILE SHA256_FILE BUILD_MODEL [OPTIONS...]\n",
                argv[0]);
        return 2;
    }
    const char *exe = argv[1], *info = argv[2], *sha_file = argv[3], *build_model = argv[4];
    char **options = argv + 5;
    int n_options = argc - 5;
    char *dir = ncw_make_temp_dir("convert");
    if (!dir)
        return 1;
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/a.mlff", dir);
    snprintf(b, sizeof b, "%s/b.mlff", dir);

    CHECK(convert(exe, options, n_options, info, a) == 0, "first conversion failed");
    CHECK(convert(exe, options, n_options, info, b) == 0, "second conversion failed");
    char hex_a[65] = "", hex_b[65] = "", hex_build[65] = "", hex_committed[65] = "";
    char *bytes_a = NULL, *bytes_b = NULL;
    size_t size_a = 0, size_b = 0;
    CHECK(file_sha256(a, hex_a, &bytes_a, &size_a), "cannot read %s", a);
    CHECK(file_sha256(b, hex_b, &bytes_b, &size_b), "cannot read %s", b);
    CHECK(bytes_a && bytes_b && size_a == size_b && !memcmp(bytes_a, bytes_b, size_a),
          "two conversions of the same files differ");
    CHECK(committed_sha256(sha_file, hex_committed), "no SHA-256 line in %s", sha_file);
    CHECK(!strcmp(hex_a, hex_committed), "conversion gives %s but %s says %s: if the format or "
          "importer changed on purpose, update it with the new sha256sum", hex_a, sha_file,
          hex_committed);
    CHECK(file_sha256(build_model, hex_build, NULL, NULL), "cannot read %s", build_model);
    CHECK(!strcmp(hex_build, hex_committed), "the build's %s has SHA-256 %s, committed %s",
          build_model, hex_build, hex_committed);
    printf("ANI-2x conversion: %zu bytes, SHA-256 %s\n", size_a, hex_a);
    check_content(a);

    /* Failures exit with 1. */
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/missing.info", dir);
    CHECK(convert(exe, NULL, 0, missing, b) == 1, "missing input does not exit with 1");
    char *usage[] = {(char *)exe, "--bogus", NULL};
    CHECK(run(usage) == 1, "bad option does not exit with 1");

    free(bytes_a);
    free(bytes_b);
    ncw_remove_tree(dir);
    free(dir);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
