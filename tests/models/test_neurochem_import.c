/*
 * The NeuroChem importer on small models written by neurochem_writer: every
 * imported tensor equals what was written (values, shapes, the float32
 * rounding of the AEV constants), the metadata and the order of everything,
 * and the error cases (missing, short, corrupt or inconsistent files) give
 * the right status with a message naming the file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/model_file.h"
#include "models/neurochem.h"
#include "neurochem_writer.h"
#include "tests/common/check.h"


static char *root; /* temp directory for the whole test */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        exit(1);
    return s;
}

/* A fresh model in its own directory under root. */
static ncw_model *write_model(const ncw_spec *spec, const char *tag)
{
    char *dir = fmt("%s/%s", root, tag);
    if (mkdir(dir, 0755) != 0) {
        fprintf(stderr, "cannot create %s\n", dir);
        exit(1);
    }
    ncw_model *m = ncw_write(spec, dir);
    free(dir);
    if (!m)
        exit(1);
    return m;
}

/* ------------------------------------------------------------------------ */
/* A good model                                                             */

static const mlff_model_tensor *need(const mlff_model_file *mf, const char *name, mlff_dtype dtype,
                                     int64_t rows, int64_t cols)
{
    const mlff_model_tensor *t = mlff_model_file_tensor(mf, name);
    CHECK(t != NULL, "tensor %s missing", name);
    if (!t)
        return NULL;
    CHECK(t->dtype == dtype && t->rows == rows && t->cols == cols,
          "tensor %s: dtype %d [%lld, %lld], expected %d [%lld, %lld]", name, t->dtype,
          (long long)t->rows, (long long)t->cols, dtype, (long long)rows, (long long)cols);
    return t->dtype == dtype && t->rows == rows && t->cols == cols ? t : NULL;
}

static void check_f64(const mlff_model_file *mf, const char *name, const double *expected, int n)
{
    const mlff_model_tensor *t = need(mf, name, MLFF_DTYPE_F64, n, 1);
    for (int i = 0; t && i < n; i++)
        CHECK(((const double *)t->data)[i] == expected[i], "%s[%d] = %.17g, expected %.17g", name,
              i, ((const double *)t->data)[i], expected[i]);
}

static void check_meta(const mlff_model_file *mf, const char *key, const char *expected)
{
    const char *v = mlff_model_file_meta(mf, key);
    CHECK(v && !strcmp(v, expected), "meta %s = '%s', expected '%s'", key, v ? v : "(none)",
          expected);
}

static void check_networks(const mlff_model_file *mf, const ncw_model *m)
{
    const ncw_spec *s = &m->spec;
    for (int e = 0; e < s->n_elements; e++)
        for (int member = 0; member < s->ensemble_size; member++) {
            const ncw_network *net = ncw_get_network(m, e, member);
            const char *el = s->elements[e];
            int32_t codes[NCW_MAX_LAYERS];
            double alphas[NCW_MAX_LAYERS];
            for (int l = 0; l < net->n_layers; l++) {
                const ncw_layer *ly = &net->layers[l];
                char *wn = fmt("network.%s.%d.%d.weight", el, member, l);
                char *bn = fmt("network.%s.%d.%d.bias", el, member, l);
                const mlff_model_tensor *w = need(mf, wn, MLFF_DTYPE_F32, ly->out, ly->in);
                const mlff_model_tensor *b = need(mf, bn, MLFF_DTYPE_F32, ly->out, 1);
                CHECK(!w || !memcmp(w->data, ly->weights, (size_t)ly->out * ly->in * 4),
                      "%s differs from what was written", wn);
                CHECK(!b || !memcmp(b->data, ly->biases, (size_t)ly->out * 4),
                      "%s differs from what was written", bn);
                codes[l] = ly->activation_code == 9 ? 1 : 0;
                alphas[l] = ly->activation_code == 9 ? 0.1 : 0.0;
                free(wn);
                free(bn);
            }
            char *an = fmt("network.%s.%d.activation", el, member);
            char *aln = fmt("network.%s.%d.activation_alpha", el, member);
            const mlff_model_tensor *a = need(mf, an, MLFF_DTYPE_I32, net->n_layers, 1);
            CHECK(!a || !memcmp(a->data, codes, (size_t)net->n_layers * 4), "%s wrong", an);
            check_f64(mf, aln, alphas, net->n_layers);
            free(an);
            free(aln);
        }
}

/* Names in the order the contract fixes: constants, self energies, then
 * elements in Atyp order, members ascending, layers ascending. */
static void check_order(const mlff_model_file *mf, const ncw_model *m)
{
    const ncw_spec *s = &m->spec;
    static const char *const head[] = {
        "aev.radial.cutoff", "aev.radial.eta", "aev.radial.shift", "aev.angular.cutoff",
        "aev.angular.zeta", "aev.angular.shift_theta", "aev.angular.eta", "aev.angular.shift_r",
        "self_energy"};
    size_t i = 0, n_head = sizeof head / sizeof *head;
    size_t expected = n_head + (size_t)(s->n_elements * s->ensemble_size * (2 * s->n_layers + 2));
    CHECK(mf->n_tensors == expected, "%zu tensors, expected %zu", mf->n_tensors, expected);
    if (mf->n_tensors != expected)
        return;
    for (; i < n_head; i++)
        CHECK(!strcmp(mf->tensors[i].name, head[i]), "tensor %zu is %s, expected %s", i,
              mf->tensors[i].name, head[i]);
    for (int e = 0; e < s->n_elements; e++)
        for (int member = 0; member < s->ensemble_size; member++) {
            for (int l = 0; l < s->n_layers; l++) {
                char *w = fmt("network.%s.%d.%d.weight", s->elements[e], member, l);
                char *b = fmt("network.%s.%d.%d.bias", s->elements[e], member, l);
                CHECK(!strcmp(mf->tensors[i].name, w), "tensor %zu is %s, expected %s", i,
                      mf->tensors[i].name, w);
                i++;
                CHECK(!strcmp(mf->tensors[i].name, b), "tensor %zu is %s, expected %s", i,
                      mf->tensors[i].name, b);
                i++;
                free(w);
                free(b);
            }
            char *a = fmt("network.%s.%d.activation", s->elements[e], member);
            char *al = fmt("network.%s.%d.activation_alpha", s->elements[e], member);
            CHECK(!strcmp(mf->tensors[i].name, a), "tensor %zu is %s, expected %s", i,
                  mf->tensors[i].name, a);
            i++;
            CHECK(!strcmp(mf->tensors[i].name, al), "tensor %zu is %s, expected %s", i,
                  mf->tensors[i].name, al);
            i++;
            free(a);
            free(al);
        }
    static const char *const keys[] = {"family", "name", "elements", "energy_unit", "length_unit",
                                       "ensemble_size", "source", "license", "provenance"};
    CHECK(mf->n_meta == sizeof keys / sizeof *keys, "%zu metadata entries", mf->n_meta);
    for (size_t k = 0; k < mf->n_meta && k < sizeof keys / sizeof *keys; k++)
        CHECK(!strcmp(mf->meta[k].key, keys[k]), "metadata %zu is %s, expected %s", k,
              mf->meta[k].key, keys[k]);
}

static void check_model(const mlff_model_file *mf, const ncw_model *m, const char *name)
{
    const ncw_spec *s = &m->spec;
    const ncw_aev *a = &m->aev;
    check_meta(mf, "family", "ani");
    check_meta(mf, "name", name);
    char elements[64] = "";
    for (int e = 0; e < s->n_elements; e++)
        strcat(strcat(elements, e ? " " : ""), s->elements[e]);
    check_meta(mf, "elements", elements);
    check_meta(mf, "energy_unit", "hartree");
    check_meta(mf, "length_unit", "angstrom");
    char members[16];
    snprintf(members, sizeof members, "%d", s->ensemble_size);
    check_meta(mf, "ensemble_size", members);
    const char *prov = mlff_model_file_meta(mf, "provenance");
    CHECK(prov && strstr(prov, "mlff-convert") && strstr(prov, "model.info"),
          "provenance '%s'", prov ? prov : "(none)");
    CHECK(prov && !strstr(prov, root), "provenance depends on where the files were: %s", prov);
    CHECK(mlff_model_file_meta(mf, "source") && mlff_model_file_meta(mf, "license"),
          "source and license present");

    check_f64(mf, "aev.radial.cutoff", &a->rcr, 1);
    check_f64(mf, "aev.radial.eta", &a->etar, 1);
    check_f64(mf, "aev.radial.shift", a->shfr, s->n_shfr);
    check_f64(mf, "aev.angular.cutoff", &a->rca, 1);
    check_f64(mf, "aev.angular.zeta", &a->zeta, 1);
    check_f64(mf, "aev.angular.shift_theta", a->shfz, s->n_shfz);
    check_f64(mf, "aev.angular.eta", &a->etaa, 1);
    check_f64(mf, "aev.angular.shift_r", a->shfa, s->n_shfa);
    check_f64(mf, "self_energy", s->self_energies, s->n_elements);
    check_f64(mf, "aev.radial.cutoff", &s->rcr, 1); /* cutoffs are not rounded to float */
    /* The float32 widening really happened: ShfZ values are not float-exact. */
    const mlff_model_tensor *z = mlff_model_file_tensor(mf, "aev.angular.shift_theta");
    if (z) {
        double v = ((const double *)z->data)[0];
        CHECK(v == (double)(float)v, "ShfZ[0] %.17g is a float32 value", v);
        CHECK(v != s->shfz[0], "ShfZ[0] was not rounded to float32 (%.17g)", v);
    }
    check_networks(mf, m);
    check_order(mf, m);
}

static void test_good(void)
{
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    CHECK(ncw_aev_length(&spec) == 384, "ANI-1x-like AEV length %d", ncw_aev_length(&spec));
    ncw_model *m = write_model(&spec, "good");
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL, *mf2 = NULL, *back = NULL;
    mlff_status s = mlff_neurochem_import(m->info_path, "ANI-1x-like", &mf, &err);
    CHECK(s == MLFF_OK, "import: %s", err.message);
    if (mf)
        check_model(mf, m, "ANI-1x-like");

    /* Without a name: the .info file's name. */
    s = mlff_neurochem_import(m->info_path, NULL, &mf2, &err);
    CHECK(s == MLFF_OK, "import without a name: %s", err.message);
    if (mf2)
        check_meta(mf2, "name", "model");

    /* Through the file format and back; two conversions give the same bytes. */
    char *p1 = fmt("%s/a.mlff", root), *p2 = fmt("%s/b.mlff", root);
    if (mf && mf2) {
        mlff_model_file_set_meta(mf2, "name", "ANI-1x-like", &err);
        CHECK(mlff_model_file_write(mf, p1, &err) == MLFF_OK, "write: %s", err.message);
        CHECK(mlff_model_file_write(mf2, p2, &err) == MLFF_OK, "write: %s", err.message);
        CHECK(mlff_model_file_read(p1, &back, &err) == MLFF_OK, "read: %s", err.message);
        if (back)
            check_model(back, m, "ANI-1x-like");
        char *b1, *b2;
        size_t n1, n2;
        if (ncw_read_file(p1, &b1, &n1) == 0 && ncw_read_file(p2, &b2, &n2) == 0) {
            CHECK(n1 == n2 && !memcmp(b1, b2, n1), "two conversions differ");
            free(b1);
            free(b2);
        }
    }
    free(p1);
    free(p2);
    mlff_model_file_destroy(back);
    mlff_model_file_destroy(mf2);
    mlff_model_file_destroy(mf);
    ncw_model_free(m);
}

/* A one-element model with a different architecture: 4 layers, no CELU. */
static void test_other_shape(void)
{
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    spec.n_elements = 2;
    spec.elements[0] = "C";
    spec.elements[1] = "Cl";
    spec.ensemble_size = 3;
    spec.n_layers = 4;
    const int sizes[] = {5, 4, 3, 1}, codes[] = {6, 9, 6, 6};
    for (int l = 0; l < 4; l++) {
        spec.layer_sizes[l] = sizes[l];
        spec.activation_codes[l] = codes[l];
    }
    spec.n_shfr = 3;
    spec.n_shfz = 2;
    spec.n_shfa = 1;
    spec.seed = 99;
    ncw_model *m = write_model(&spec, "other");
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    CHECK(mlff_neurochem_import(m->info_path, "two", &mf, &err) == MLFF_OK, "import: %s",
          err.message);
    if (mf)
        check_model(mf, m, "two");
    mlff_model_file_destroy(mf);
    ncw_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

static void expect_error(const ncw_model *m, mlff_status status, const char *file_phrase,
                         const char *phrase, const char *what)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = (mlff_model_file *)1;
    mlff_status s = mlff_neurochem_import(m->info_path, "x", &mf, &err);
    CHECK(s == status, "%s: status %d, expected %d (%s)", what, s, status, err.message);
    CHECK(s == MLFF_OK || mf == NULL, "%s: output not NULL after failure", what);
    if (file_phrase)
        CHECK(strstr(err.message, file_phrase) != NULL, "%s: message does not name %s: %s", what,
              file_phrase, err.message);
    if (phrase)
        CHECK(strstr(err.message, phrase) != NULL, "%s: message lacks '%s': %s", what, phrase,
              err.message);
    if (s == MLFF_OK)
        mlff_model_file_destroy(mf);
    else
        printf("  %-36s -> %s\n", what, err.message);
}

/* Replaces the first occurrence of old in text (new string). */
static char *replace(const char *text, const char *old, const char *new_text)
{
    const char *at = strstr(text, old);
    if (!at) {
        fprintf(stderr, "'%s' not in the network text\n", old);
        exit(1);
    }
    return fmt("%.*s%s%s", (int)(at - text), text, new_text, at + strlen(old));
}

/* Rewrites element e, member 1's network text with one substitution. */
static void edit_network(const ncw_model *m, int e, const char *old, const char *new_text)
{
    char *text = ncw_network_text(m, e, 1), *edited = replace(text, old, new_text);
    char *path = ncw_path(m, e, 1, "");
    if (ncw_write_nnf(path, edited, strlen(edited) + 1) != 0)
        exit(1);
    free(path);
    free(edited);
    free(text);
}

static void write_text(const char *path, const char *text)
{
    if (ncw_write_file(path, text, strlen(text)) != 0)
        exit(1);
}

static void test_network_errors(const ncw_spec *spec)
{
    ncw_model *m;
    char *p;

    m = write_model(spec, "missing-nnf");
    p = ncw_path(m, 2, 1, "");
    remove(p);
    expect_error(m, MLFF_ERROR_IO, "train1/networks/ANN-N.nnf", "No such file", "missing .nnf");
    free(p);
    ncw_model_free(m);

    m = write_model(spec, "missing-wparam");
    p = ncw_path(m, 0, 0, "-l2.wparam");
    remove(p);
    expect_error(m, MLFF_ERROR_IO, "ANN-H.nnf-l2.wparam", NULL, "missing weight file");
    free(p);
    ncw_model_free(m);

    m = write_model(spec, "short-wparam");
    p = ncw_path(m, 1, 1, "-l1.wparam");
    if (truncate(p, 384 * 16 * 4 - 4) != 0)
        exit(1);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-C.nnf-l1.wparam", "24572 bytes",
                 "weight file 4 bytes short");
    free(p);
    ncw_model_free(m);

    m = write_model(spec, "long-bparam");
    p = ncw_path(m, 3, 0, "-l3.bparam");
    write_text(p, "12345678");
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-O.nnf-l3.bparam", NULL, "bias file too long");
    free(p);
    ncw_model_free(m);

    m = write_model(spec, "activation");
    edit_network(m, 1, "activation=9", "activation=5");
    expect_error(m, MLFF_ERROR_UNSUPPORTED, "train1/networks/ANN-C.nnf", "activation code 5",
                 "activation code 5");
    ncw_model_free(m);

    m = write_model(spec, "truncated-bz2");
    p = ncw_path(m, 0, 1, "");
    char *data;
    size_t size;
    if (ncw_read_file(p, &data, &size) != 0)
        exit(1);
    if (ncw_write_file(p, data, size - 20) != 0)
        exit(1);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "train1/networks/ANN-H.nnf", "truncated",
                 "truncated bzip2 stream");
    memset(data + size / 2, 0x55, 8); /* corrupt the middle of the stream */
    if (ncw_write_file(p, data, size) != 0)
        exit(1);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "train1/networks/ANN-H.nnf", NULL,
                 "corrupt bzip2 stream");
    memcpy(data + 6, "XY", 2); /* "BZh" magic broken (header is "1xxx=\n" or so) */
    if (ncw_write_file(p, data, size) != 0)
        exit(1);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-H.nnf", NULL, "not bzip2");
    write_text(p, "hello");
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-H.nnf", "length", "no length header");
    free(data);
    free(p);
    ncw_model_free(m);

    m = write_model(spec, "length-mismatch");
    p = ncw_path(m, 0, 1, "");
    char *text = ncw_network_text(m, 0, 1);
    if (ncw_write_nnf(p, text, strlen(text) + 1) != 0 || ncw_read_file(p, &data, &size) != 0)
        exit(1);
    data[0] = data[0] == '9' ? '8' : (char)(data[0] + 1); /* declared length off */
    if (ncw_write_file(p, data, size) != 0)
        exit(1);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-H.nnf", NULL, "declared length wrong");
    free(text);
    free(data);
    free(p);
    ncw_model_free(m);

    static const struct { const char *old, *new_text, *phrase, *what; } edits[] = {
        {"blocksize=384;", "block size=384;", "line ", "garbage in a layer"},
        {"nodes=16;", "nodes=16;\n@@@", "unexpected character '@'", "stray character"},
        {"inputsize=384;", "inputsize=383;", "inputsize 383", "inputsize mismatch"},
        {"inputsize=384;", "inputsize=abc;", "inputsize", "inputsize not a number"},
        {"atom_net C $", "atom_net N $", "element N", "wrong element"},
        {"atom_net C $", "atom_net C", "expected '$'", "missing '$'"},
        {"blocksize=16;", "blocksize=17;", "blocksize 17", "layer sizes do not chain"},
        {"nodes=16;", "nodes=16;\nnodes=16;", "twice", "key given twice"},
        {"nodes=8;", "", "lacks", "layer without nodes"},
        {"[6144]", "[6000]", "6000 weights", "weight count not nodes x blocksize"},
        {"weights=FILE:ANN-C.nnf-l1.wparam", "weights=FILE:../ANN-C.nnf-l1.wparam", "bad value",
         "weight file outside the network folder"},
        {"dropout=0;", "dropout=lots;", "bad value", "non-numeric setting"},
        {"type=0;", "type=1;", "layer type 1", "non-dense layer"},
        {"\n $", "\n $ extra", "after the network", "text after the end"},
        {"l2norm=1;", "l2norm=1", "expected ';'", "missing ';'"},
        {"layer [", "layer {", "unexpected character '{'", "wrong bracket"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        char *tag = fmt("edit%zu", i);
        m = write_model(spec, tag);
        edit_network(m, 1, edits[i].old, edits[i].new_text);
        mlff_status want = strstr(edits[i].what, "non-dense") ? MLFF_ERROR_UNSUPPORTED
                                                              : MLFF_ERROR_MODEL_FORMAT;
        expect_error(m, want, "train1/networks/ANN-C.nnf", edits[i].phrase, edits[i].what);
        free(tag);
        ncw_model_free(m);
    }

    /* A network whose last layer has two outputs (written consistently). */
    ncw_spec two_out = *spec;
    two_out.layer_sizes[2] = 2;
    m = write_model(&two_out, "two-outputs");
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "ANN-H.nnf", "2 nodes", "last layer of 2 nodes");
    ncw_model_free(m);
}

static void test_text_file_errors(const ncw_spec *spec)
{
    ncw_model *m = write_model(spec, "texts");
    char *params = fmt("%s/model/aev.params", m->dir), *sae = fmt("%s/model/sae_linfit.dat", m->dir);
    char *good_params, *good_sae, *good_info;
    size_t n;
    if (ncw_read_file(params, &good_params, &n) || ncw_read_file(sae, &good_sae, &n) ||
        ncw_read_file(m->info_path, &good_info, &n))
        exit(1);

    static const struct { int file; const char *old, *new_text, *phrase; mlff_status status; } edits[] = {
        /* file 0: .info, 1: .params, 2: sae */
        {0, "\n2\n", "\ntwo\n", "ensemble size", MLFF_ERROR_MODEL_FORMAT},
        {0, "\n2\n", "\n", "has 3 lines", MLFF_ERROR_MODEL_FORMAT},
        {0, "\n2\n", "\n2\nmore\n", "extra line", MLFF_ERROR_MODEL_FORMAT},
        {0, "\n2\n", "\n3\n", "train2/networks/ANN-H.nnf", MLFF_ERROR_IO},
        {0, "aev.params", "nope.params", "nope.params", MLFF_ERROR_IO},
        {1, "Rcr = ", "Rcx = ", "lacks Rcr", MLFF_ERROR_MODEL_FORMAT},
        {1, "Rca = 3.5", "Rca = 3.5x", "Rca", MLFF_ERROR_MODEL_FORMAT},
        {1, "EtaR = [", "EtaR = [1.0,", "EtaR has 2 values", MLFF_ERROR_UNSUPPORTED},
        {1, "ShfA = [", "ShfA = [nan,", "ShfA", MLFF_ERROR_MODEL_FORMAT},
        {1, "ShfZ = [", "ShfZ = (", "ShfZ", MLFF_ERROR_MODEL_FORMAT},
        {1, "Atyp = [H,", "Atyp = [H,H,", "Atyp", MLFF_ERROR_MODEL_FORMAT},
        {1, "Atyp = [H,", "Atyp = [h,", "Atyp", MLFF_ERROR_MODEL_FORMAT},
        {1, "TM = 1\n", "TM 1\n", "line 2", MLFF_ERROR_MODEL_FORMAT},
        {1, "TM = 1\n", "TM = 1\nRcr = 5\n", "Rcr given twice", MLFF_ERROR_MODEL_FORMAT},
        /* one more ShfR value: the networks' inputsize no longer matches */
        {1, "ShfR = [", "ShfR = [0.5,", "inputsize 384 differs", MLFF_ERROR_MODEL_FORMAT},
        {2, "C,1=", "C,2=", "index", MLFF_ERROR_MODEL_FORMAT},
        {2, "C,1=", "S,1=", "not in", MLFF_ERROR_MODEL_FORMAT},
        {2, "C,1=", "C;1=", "Symbol,index=energy", MLFF_ERROR_MODEL_FORMAT},
        {2, "O,3=", "O,3=x", "energy", MLFF_ERROR_MODEL_FORMAT},
        {2, "\nO,3=", "\nO,3=1\nO,3=", "given twice", MLFF_ERROR_MODEL_FORMAT},
    };
    const char *paths[] = {m->info_path, params, sae};
    const char *goods[] = {good_info, good_params, good_sae};
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        int f = edits[i].file;
        char *edited = replace(goods[f], edits[i].old, edits[i].new_text);
        write_text(paths[f], edited);
        const char *names[] = {"model.info", "aev.params", "sae_linfit.dat"};
        const char *file_phrase = edits[i].status == MLFF_ERROR_IO ? NULL : names[f];
        if (strstr(edits[i].phrase, "inputsize"))
            file_phrase = "ANN-H.nnf";
        char *what = fmt("%s: '%s' -> '%s'", names[f], edits[i].old, edits[i].new_text);
        for (char *c = what; *c; c++)
            if (*c == '\n')
                *c = ' ';
        expect_error(m, edits[i].status, file_phrase, edits[i].phrase, what);
        free(what);
        free(edited);
        write_text(paths[f], goods[f]);
    }
    /* Self energy missing for one element. */
    char *edited = replace(good_sae, "N,2=", "#");
    char *cut = strchr(edited, '#'), *eol = strchr(cut, '\n');
    memmove(cut, eol + 1, strlen(eol + 1) + 1);
    write_text(sae, edited);
    expect_error(m, MLFF_ERROR_MODEL_FORMAT, "sae_linfit.dat", "no self energy for N",
                 "missing self energy");
    write_text(sae, good_sae);
    free(edited);

    /* Everything restored: the import works again. */
    expect_error(m, MLFF_OK, NULL, NULL, "restored");

    /* A missing .info. */
    char *missing = fmt("%s/none.info", root);
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    CHECK(mlff_neurochem_import(missing, NULL, &mf, &err) == MLFF_ERROR_IO &&
              strstr(err.message, missing) && strstr(err.message, "No such file or directory"),
          "missing .info: %s", err.message);
    free(missing);

    free(good_params);
    free(good_sae);
    free(good_info);
    free(params);
    free(sae);
    ncw_model_free(m);
}

int main(void)
{
    if (!(root = ncw_make_temp_dir("neurochem")))
        return 1;
    test_good();
    test_other_shape();
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    printf("error cases:\n");
    test_network_errors(&spec);
    test_text_file_errors(&spec);
    ncw_remove_tree(root);
    free(root);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("neurochem import: all checks pass\n");
    return failures ? 1 : 0;
}
