/* Test helper: writes NeuroChem-format ANI models (see neurochem_writer.h). */
#include "neurochem_writer.h"

#include <bzlib.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ncw_spec_ani1x_like(ncw_spec *spec)
{
    static const char *const elements[] = {"H", "C", "N", "O"};
    /* ANI-1x self energies (Hartree). */
    static const double sae[] = {-0.600952980000, -38.08316124000, -54.70775770000,
                                 -75.19446356000};
    memset(spec, 0, sizeof *spec);
    spec->n_elements = 4;
    for (int i = 0; i < 4; i++) {
        spec->elements[i] = elements[i];
        spec->self_energies[i] = sae[i];
    }
    spec->rcr = 5.2;
    spec->rca = 3.5;
    spec->etar = 16.0;
    spec->n_shfr = 16;
    for (int i = 0; i < 16; i++)
        spec->shfr[i] = 0.9 + 0.26875 * i;
    spec->zeta = 32.0;
    spec->n_shfz = 8;
    for (int i = 0; i < 8; i++)
        spec->shfz[i] = M_PI / 16 + i * M_PI / 8; /* not float-exact: exercises the widening */
    spec->etaa = 8.0;
    spec->n_shfa = 4;
    for (int i = 0; i < 4; i++)
        spec->shfa[i] = 0.9 + 0.65 * i;
    spec->ensemble_size = 2;
    spec->n_layers = 3;
    const int sizes[] = {16, 8, 1}, codes[] = {9, 9, 6};
    for (int l = 0; l < 3; l++) {
        spec->layer_sizes[l] = sizes[l];
        spec->activation_codes[l] = codes[l];
    }
    spec->seed = 12345;
    spec->weight_scale = 1.0;
}

int ncw_aev_length(const ncw_spec *spec)
{
    int n = spec->n_elements;
    return n * spec->n_shfr + n * (n + 1) / 2 * spec->n_shfa * spec->n_shfz;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("neurochem_writer: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

int ncw_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return fail("cannot create %s: %s", path, strerror(errno));
    int ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : fail("cannot write %s", path);
}

int ncw_read_file(const char *path, char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return fail("cannot read %s", path);
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return 0;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return fail("cannot create directory %s: %s", path, strerror(errno));
    return 0;
}

char *ncw_make_temp_dir(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = format("%s/mlff-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (dir && !mkdtemp(dir)) {
        fail("cannot create a temporary directory %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int ncw_remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int ncw_write_nnf(const char *path, const char *text, size_t len)
{
    /* bzip2's documented worst case: 1% more plus 600 bytes. */
    unsigned cap = (unsigned)(len + len / 100 + 600);
    size_t header_cap = 32;
    char *buf = malloc(header_cap + cap);
    if (!buf)
        return fail("out of memory");
    int header = snprintf(buf, header_cap, "%zu=\n", len);
    unsigned out_len = cap;
    int rc = BZ2_bzBuffToBuffCompress(buf + header, &out_len, (char *)text, (unsigned)len, 9, 0, 0);
    int r = rc == BZ_OK ? ncw_write_file(path, buf, (size_t)header + out_len)
                        : fail("bzip2 compression failed (%d)", rc);
    free(buf);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Weights                                                                  */

/* splitmix64: small, fast, and the same everywhere. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1), a multiple of 2^-23 so float holds it exactly. */
static double uniform(uint64_t *state)
{
    return (double)(int64_t)(next_random(state) >> 40) / (double)(1 << 23) - 1.0;
}

static int input_size(const ncw_spec *spec)
{
    return spec->inputsize > 0 ? spec->inputsize : ncw_aev_length(spec);
}

static int fill_network(const ncw_spec *spec, uint64_t *state, ncw_network *net)
{
    net->n_layers = spec->n_layers;
    if (!(net->layers = calloc((size_t)spec->n_layers, sizeof *net->layers)))
        return fail("out of memory");
    int in = input_size(spec);
    double scale = spec->weight_scale > 0 ? spec->weight_scale : 1.0;
    for (int l = 0; l < spec->n_layers; l++) {
        ncw_layer *ly = &net->layers[l];
        ly->in = in;
        ly->out = spec->layer_sizes[l];
        ly->activation_code = spec->activation_codes[l];
        ly->weights = malloc((size_t)ly->in * (size_t)ly->out * sizeof *ly->weights);
        ly->biases = malloc((size_t)ly->out * sizeof *ly->biases);
        if (!ly->weights || !ly->biases)
            return fail("out of memory");
        double w_scale = scale / sqrt((double)ly->in);
        for (long i = 0; i < (long)ly->in * ly->out; i++)
            ly->weights[i] = (float)(w_scale * uniform(state));
        for (int i = 0; i < ly->out; i++)
            ly->biases[i] = (float)(0.1 * uniform(state));
        in = ly->out;
    }
    return 0;
}

static int write_floats(const char *path, const float *v, size_t n)
{
    unsigned char *b = malloc(n * 4 + 1);
    if (!b)
        return fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        for (int k = 0; k < 4; k++)
            b[4 * i + (size_t)k] = (unsigned char)(bits >> (8 * k)); /* little-endian */
    }
    int r = ncw_write_file(path, b, n * 4);
    free(b);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Text files                                                               */

/* Appends printf output to a growing string; returns 0 on success. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static int append(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int append(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s)
            return -1;
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
    return 0;
}

static int append_array(text *t, const char *key, const double *v, int n)
{
    int r = append(t, "%s = [", key);
    for (int i = 0; i < n && r == 0; i++)
        r = append(t, "%s%.7e", i ? "," : "", v[i]);
    return r == 0 ? append(t, "]\n") : r;
}

/* The .params text, in NeuroChem's key order, training settings included. */
static char *params_text(const ncw_spec *spec)
{
    text t = {0};
    int r = append(&t, "DESC = ANI_NORMAL\nTM = 1\nCG = 0\nRP = 0\nAC = 0\n");
    r = r ? r : append(&t, "Rcr = %.17g\nRca = %.17g\n", spec->rcr, spec->rca);
    r = r ? r : append_array(&t, "EtaR", &spec->etar, 1);
    r = r ? r : append_array(&t, "ShfR", spec->shfr, spec->n_shfr);
    r = r ? r : append_array(&t, "Zeta", &spec->zeta, 1);
    r = r ? r : append_array(&t, "ShfZ", spec->shfz, spec->n_shfz);
    r = r ? r : append_array(&t, "EtaA", &spec->etaa, 1);
    r = r ? r : append_array(&t, "ShfA", spec->shfa, spec->n_shfa);
    r = r ? r : append(&t, "Atyp = [");
    for (int i = 0; i < spec->n_elements && r == 0; i++)
        r = append(&t, "%s%s", i ? "," : "", spec->elements[i]);
    r = r ? r : append(&t, "]\n");
    if (r) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

static char *sae_text(const ncw_spec *spec)
{
    text t = {0};
    int r = 0;
    for (int i = 0; i < spec->n_elements && r == 0; i++)
        r = append(&t, "%s,%d=%.17g\n", spec->elements[i], i, spec->self_energies[i]);
    if (r) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* A network description as NeuroChem writes it, training settings and the
 * trailing " $" and NUL included. */
static char *network_text(const ncw_spec *spec, const char *element)
{
    text t = {0};
    int r = append(&t, "inputsize=%d;\natom_net %s $\n", input_size(spec), element);
    int in = input_size(spec);
    for (int l = 0; l < spec->n_layers && r == 0; l++) {
        int out = spec->layer_sizes[l];
        r = append(&t, "layer [\nnodes=%d;\nactivation=%d;\ntype=0;\nblocksize=%d;\ndropout=0;\n"
                   "dropset=0.000000;\nmaskupdate=0.000000;\nmaxnorm=0;\nnorm=0.000000;\n"
                   "normupdate=0.000000;\nl2norm=1;\nl2valu=0.000001;\nbtchnorm=0;\n"
                   "weights=FILE:ANN-%s.nnf-l%d.wparam[%ld];\n"
                   "biases=FILE:ANN-%s.nnf-l%d.bparam[%d];\n]\n",
                   out, spec->activation_codes[l], in, element, l + 1, (long)out * in, element,
                   l + 1, out);
        in = out;
    }
    r = r ? r : append(&t, "\n $");
    if (r) {
        free(t.s);
        return NULL;
    }
    return t.s; /* its NUL is written too: ncw_write_nnf gets strlen + 1 */
}

char *ncw_network_text(const ncw_model *m, int element, int member)
{
    (void)member; /* every member has the same description */
    return network_text(&m->spec, m->spec.elements[element]);
}

char *ncw_path(const ncw_model *m, int element, int member, const char *suffix)
{
    return format("%s%d/networks/ANN-%s.nnf%s", m->prefix, member, m->spec.elements[element],
                  suffix);
}

/* ------------------------------------------------------------------------ */
/* The model                                                                */

static double as_float32_text(double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.7e", v);
    return (double)(float)strtod(buf, NULL);
}

static void fill_aev(ncw_model *m)
{
    const ncw_spec *s = &m->spec;
    m->aev.rcr = s->rcr;
    m->aev.rca = s->rca;
    m->aev.etar = as_float32_text(s->etar);
    m->aev.zeta = as_float32_text(s->zeta);
    m->aev.etaa = as_float32_text(s->etaa);
    for (int i = 0; i < s->n_shfr; i++)
        m->aev.shfr[i] = as_float32_text(s->shfr[i]);
    for (int i = 0; i < s->n_shfz; i++)
        m->aev.shfz[i] = as_float32_text(s->shfz[i]);
    for (int i = 0; i < s->n_shfa; i++)
        m->aev.shfa[i] = as_float32_text(s->shfa[i]);
}

static int write_text_file(const char *path, char *content)
{
    int r = content ? ncw_write_file(path, content, strlen(content)) : fail("out of memory");
    free(content);
    return r;
}

static int write_member_network(ncw_model *m, int e, int member)
{
    const ncw_network *net = ncw_get_network(m, e, member);
    char *nnf = ncw_path(m, e, member, "");
    char *desc = network_text(&m->spec, m->spec.elements[e]);
    int r = nnf && desc ? ncw_write_nnf(nnf, desc, strlen(desc) + 1) : fail("out of memory");
    for (int l = 0; l < net->n_layers && r == 0; l++) {
        char suffix[32];
        const ncw_layer *ly = &net->layers[l];
        snprintf(suffix, sizeof suffix, "-l%d.wparam", l + 1);
        char *w = ncw_path(m, e, member, suffix);
        snprintf(suffix, sizeof suffix, "-l%d.bparam", l + 1);
        char *b = ncw_path(m, e, member, suffix);
        r = w && b ? write_floats(w, ly->weights, (size_t)ly->in * (size_t)ly->out) : -1;
        r = r ? r : write_floats(b, ly->biases, (size_t)ly->out);
        free(w);
        free(b);
    }
    free(nnf);
    free(desc);
    return r;
}

static int write_all(ncw_model *m)
{
    const ncw_spec *s = &m->spec;
    char *model_dir = format("%s/model", m->dir);
    char *params = format("%s/model/aev.params", m->dir);
    char *sae = format("%s/model/sae_linfit.dat", m->dir);
    int r = model_dir && params && sae ? make_dir(model_dir) : fail("out of memory");
    r = r ? r : write_text_file(m->info_path, format("model/aev.params\nmodel/sae_linfit.dat\n"
                                                      "model/train\n%d\n", s->ensemble_size));
    r = r ? r : write_text_file(params, params_text(s));
    r = r ? r : write_text_file(sae, sae_text(s));
    free(model_dir);
    free(params);
    free(sae);
    for (int member = 0; member < s->ensemble_size && r == 0; member++) {
        char *d1 = format("%s%d", m->prefix, member), *d2 = format("%s%d/networks", m->prefix, member);
        r = d1 && d2 ? make_dir(d1) : fail("out of memory");
        r = r ? r : make_dir(d2);
        free(d1);
        free(d2);
    }
    /* Weights are drawn element by element, member by member, layer by layer. */
    uint64_t state = s->seed;
    for (int e = 0; e < s->n_elements && r == 0; e++)
        for (int member = 0; member < s->ensemble_size && r == 0; member++) {
            r = fill_network(s, &state, &m->networks[e * s->ensemble_size + member]);
            r = r ? r : write_member_network(m, e, member);
        }
    return r;
}

ncw_model *ncw_write(const ncw_spec *spec, const char *dir)
{
    if (spec->n_elements < 1 || spec->n_elements > NCW_MAX_ELEMENTS || spec->ensemble_size < 1 ||
        spec->n_layers < 1 || spec->n_layers > NCW_MAX_LAYERS || spec->n_shfr > NCW_MAX_SHIFTS ||
        spec->n_shfz > NCW_MAX_SHIFTS || spec->n_shfa > NCW_MAX_SHIFTS) {
        fail("bad spec");
        return NULL;
    }
    ncw_model *m = calloc(1, sizeof *m);
    if (!m) {
        fail("out of memory");
        return NULL;
    }
    m->spec = *spec;
    fill_aev(m);
    m->dir = strdup(dir);
    m->info_path = format("%s/model.info", dir);
    m->prefix = format("%s/model/train", dir);
    m->networks = calloc((size_t)spec->n_elements * (size_t)spec->ensemble_size,
                         sizeof *m->networks);
    if (!m->dir || !m->info_path || !m->prefix || !m->networks || write_all(m) != 0) {
        if (!m->dir || !m->info_path || !m->prefix || !m->networks)
            fail("out of memory");
        ncw_model_free(m);
        return NULL;
    }
    return m;
}

void ncw_model_free(ncw_model *m)
{
    if (!m)
        return;
    if (m->networks) {
        for (int i = 0; i < m->spec.n_elements * m->spec.ensemble_size; i++) {
            ncw_network *net = &m->networks[i];
            for (int l = 0; net->layers && l < net->n_layers; l++) {
                free(net->layers[l].weights);
                free(net->layers[l].biases);
            }
            free(net->layers);
        }
    }
    free(m->networks);
    free(m->dir);
    free(m->info_path);
    free(m->prefix);
    free(m);
}

const ncw_network *ncw_get_network(const ncw_model *m, int element, int member)
{
    return &m->networks[element * m->spec.ensemble_size + member];
}
