/*
 * mlff tune (api/mlff.h, mlff_tune): the forms that matter, measured on the
 * present device, into its tuning record.
 *
 * One context on the device, started from the table's row (the environment
 * and an earlier record left out, so that they cannot bias what is
 * measured), and ANI-2x energies and forces of generated systems
 * (sample_systems.h). Each measurement warms up, then times calls whose
 * positions are moved a little each time (nothing cached between them) and
 * keeps the median. Then:
 *  - forms chosen by size: all pairs against cell lists, and the three
 *    ways of running the element networks, at each of a series of sizes; a
 *    threshold is the last size of the run of sizes where its form won,
 *    from the smallest (never, if it lost there);
 *  - on GPUs, the thresholds of the backend's kernel forms, one key at a
 *    time: each candidate (the table's value, halved, doubled, ...) timed
 *    over a set of systems, the least total kept where it beats the value
 *    before by 2% (the rest is noise).
 * The record holds the keys it measured; the table's row keeps the rest.
 */
#include "tune.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/profile.h"
#include "device_cells.h"
#include "sample_systems.h"
#include "tuning_record.h"

typedef struct tuner {
    mlff_context *ctx;
    mlff_model *model;
    mlff_tuning t; /* the record as measured so far */
    int quick;
    const mlff_tune_options *options;
    unsigned char measured[MLFF_TUNING_MAX_KEYS];
    char *notes; /* comment lines of the record */
    size_t notes_len, notes_cap;
    double *positions, *forces, *energies;
    int64_t capacity_atoms, capacity_systems;
    uint64_t seed;
} tuner;

__attribute__((format(printf, 2, 3))) static void progress(tuner *tu, const char *fmt, ...)
{
    if (!tu->options || !tu->options->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    tu->options->progress(tu->options->user, line);
}

/* A comment line of the record. */
__attribute__((format(printf, 2, 3))) static void note(tuner *tu, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (tu->notes_len + len + 4 > tu->notes_cap) {
        const size_t cap = 2 * tu->notes_cap + len + 4096;
        char *grown = realloc(tu->notes, cap);
        if (!grown)
            return;
        tu->notes = grown;
        tu->notes_cap = cap;
    }
    tu->notes_len += (size_t)snprintf(tu->notes + tu->notes_len, tu->notes_cap - tu->notes_len, "# %s\n", line);
}

static mlff_status use(tuner *tu, const mlff_tuning *t)
{
    return mlff_context_set_tuning(tu->ctx, t);
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median ms of ANI-2x energy + forces of s with the context's record. */
static mlff_status time_case(tuner *tu, const mlff_sample *s, double *ms)
{
    if (s->n_atoms > tu->capacity_atoms || s->n_systems > tu->capacity_systems) {
        free(tu->positions);
        free(tu->forces);
        free(tu->energies);
        tu->positions = malloc((size_t)s->n_atoms * 3 * sizeof *tu->positions);
        tu->forces = malloc((size_t)s->n_atoms * 3 * sizeof *tu->forces);
        tu->energies = malloc((size_t)s->n_systems * sizeof *tu->energies);
        tu->capacity_atoms = s->n_atoms;
        tu->capacity_systems = s->n_systems;
        if (!tu->positions || !tu->forces || !tu->energies) {
            tu->capacity_atoms = tu->capacity_systems = 0;
            return mlff_fail(&tu->ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
        }
    }
    const mlff_batch b = {s->n_systems, s->offsets, s->numbers, tu->positions, NULL, NULL};
    const mlff_results r = {.energies = tu->energies, .forces = tu->forces};
    const int warm = tu->quick ? 2 : 3, runs = tu->quick ? 3 : 7;
    double times[16];
    const double start = mlff_seconds();
    int n = 0;
    for (int call = 0; call < warm + runs; call++) {
        for (int64_t k = 0; k < 3 * s->n_atoms; k++) { /* up to 0.005 A, as bench/bench_ani moves them */
            tu->seed = tu->seed * 6364136223846793005ULL + 1442695040888963407ULL;
            tu->positions[k] = s->positions[k] + 0.01 * ((double)(tu->seed >> 11) / 9007199254740992.0 - 0.5);
        }
        const double t0 = mlff_seconds();
        mlff_status st = mlff_model_run(tu->model, &b, &r);
        if (st != MLFF_OK)
            return st;
        if (call >= warm)
            times[n++] = mlff_seconds() - t0;
        /* A slow device (PoCL, lavapipe) measures large systems fewer times. */
        if (call >= warm && n >= 3 && mlff_seconds() - start > (tu->quick ? 0.3 : 1.0))
            break;
    }
    qsort(times, (size_t)n, sizeof *times, by_value);
    *ms = 1e3 * times[n / 2];
    return MLFF_OK;
}

static void mark(tuner *tu, const char *key)
{
    const mlff_tuning_key *k = mlff_tuning_key_named(key);
    if (k)
        tu->measured[k - mlff_tuning_keys] = 1;
}

/* The threshold a series of sizes (ascending) gives: the last size of the
 * run of wins from the first (skipped sizes, where both forms ran alike,
 * neither end nor begin it); never where the first informative one lost;
 * where every size won, the table's value if that is larger. */
static int64_t threshold_of(const int64_t *sizes, const int *wins, int n, int64_t table)
{
    int64_t last = MLFF_TUNING_NEVER;
    for (int k = 0; k < n; k++) {
        if (wins[k] < 0)
            continue;
        if (!wins[k])
            return last;
        last = sizes[k];
    }
    return table > last ? table : last;
}

/* All pairs against cell lists, on water clusters of growing size. */
static mlff_status tune_dense(tuner *tu)
{
    static const int full[] = {1, 2, 4, 8, 12, 16, 24, 32}, quick[] = {2, 8, 16};
    const int *molecules = tu->quick ? quick : full;
    const int n = tu->quick ? 3 : 8;
    int64_t sizes[8];
    int wins[8];
    mlff_status st = MLFF_OK;
    for (int k = 0; k < n && st == MLFF_OK; k++) {
        mlff_sample s;
        if (!mlff_sample_water_cluster(&s, molecules[k]))
            return mlff_fail(&tu->ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
        sizes[k] = s.n_atoms;
        const mlff_batch b = {s.n_systems, s.offsets, s.numbers, s.positions, NULL, NULL};
        double ms[2] = {0, 0};
        const mlff_device_cells *cells = tu->model->device_cells;
        if (cells && mlff_device_cells_listed_on_host(cells, &b)) {
            wins[k] = -1; /* such lists are written by the host either way: the sparse path runs */
        } else {
            for (int dense = 0; dense < 2 && st == MLFF_OK; dense++) {
                mlff_tuning t = tu->t;
                t.dense_most_atoms = dense ? s.n_atoms : MLFF_TUNING_NEVER;
                if ((st = use(tu, &t)) == MLFF_OK)
                    st = time_case(tu, &s, &ms[dense]);
            }
            wins[k] = ms[1] < ms[0];
            progress(tu, "all pairs or cell lists: %lld atoms of water: %.3f / %.3f ms", (long long)s.n_atoms, ms[1],
                     ms[0]);
            note(tu, "dense_most_atoms: %lld atoms of water: all pairs %.3f ms, cell lists %.3f ms",
                 (long long)s.n_atoms, ms[1], ms[0]);
        }
        mlff_sample_free(&s);
    }
    if (st == MLFF_OK) {
        tu->t.dense_most_atoms = threshold_of(sizes, wins, n, tu->t.dense_most_atoms);
        mark(tu, "dense_most_atoms");
        st = use(tu, &tu->t);
    }
    return st;
}

/* The element networks merged, stacked and separate, on water clusters. */
static mlff_status tune_networks(tuner *tu, int gpu)
{
    static const int gpu_sizes[] = {1, 2, 4, 8, 32, 128, 512, 1024}, cpu_sizes[] = {1, 2, 4, 8, 16, 32},
                     quick[] = {2, 8};
    const int *molecules = tu->quick ? quick : gpu ? gpu_sizes : cpu_sizes;
    const int n = tu->quick ? 2 : gpu ? 8 : 6;
    static const char *const names[] = {"", "stacked", "merged", "separate"}; /* mlff_element_networks */
    int64_t extra[8], atoms[8];
    int merged_wins[8], stacked_wins[8];
    mlff_status st = MLFF_OK;
    for (int k = 0; k < n && st == MLFF_OK; k++) {
        mlff_sample s;
        if (!mlff_sample_water_cluster(&s, molecules[k]))
            return mlff_fail(&tu->ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
        atoms[k] = s.n_atoms;
        extra[k] = s.n_atoms; /* (elements - 1) x atoms, of two elements */
        double ms[4] = {0, 0, 0, 0};
        for (int form = MLFF_ELEMENT_NETWORKS_STACKED; form <= MLFF_ELEMENT_NETWORKS_SEPARATE && st == MLFF_OK;
             form++) {
            mlff_tuning t = tu->t;
            t.element_networks = (mlff_element_networks)form;
            if ((st = use(tu, &t)) == MLFF_OK)
                st = time_case(tu, &s, &ms[form]);
        }
        const double stacked = ms[MLFF_ELEMENT_NETWORKS_STACKED], merged = ms[MLFF_ELEMENT_NETWORKS_MERGED],
                     separate = ms[MLFF_ELEMENT_NETWORKS_SEPARATE];
        merged_wins[k] = merged < stacked && merged < separate;
        stacked_wins[k] = stacked < separate;
        progress(tu, "element networks: %lld atoms of water: %s %.3f, %s %.3f, %s %.3f ms", (long long)s.n_atoms,
                 names[2], merged, names[1], stacked, names[3], separate);
        note(tu, "element networks: %lld atoms of water: merged %.3f ms, stacked %.3f ms, separate %.3f ms",
             (long long)s.n_atoms, merged, stacked, separate);
        mlff_sample_free(&s);
    }
    if (st != MLFF_OK)
        return st;
    tu->t.element_networks = MLFF_ELEMENT_NETWORKS_AUTO;
    /* Where a form still wins at the largest size measured (--quick stops
     * at 24 atoms), the table's larger threshold stands: capping it at the
     * sizes measured ran 64 molecules (560 atoms) through separate networks
     * on the H100, 0.43 -> 0.74 ms (bench/RESULTS.md, 2026-12-06). */
    tu->t.merged_networks_most_extra = threshold_of(extra, merged_wins, n, tu->t.merged_networks_most_extra);
    tu->t.stacked_networks_most_atoms = threshold_of(atoms, stacked_wins, n, tu->t.stacked_networks_most_atoms);
    mark(tu, "element_networks");
    mark(tu, "merged_networks_most_extra");
    mark(tu, "stacked_networks_most_atoms");
    return use(tu, &tu->t);
}

/* The GPU cases: molecules, clusters and a batch of molecules, from a
 * launch of a few work-groups to thousands. */
typedef struct case_set {
    mlff_sample s[8];
    const char *names[8];
    int n;
} case_set;

static int make_cases(case_set *c, int quick)
{
    memset(c, 0, sizeof *c);
    int ok = mlff_sample_methane(&c->s[c->n]);
    c->names[c->n++] = "methane";
    ok = ok && mlff_sample_water_cluster(&c->s[c->n], quick ? 16 : 100);
    c->names[c->n++] = quick ? "16 waters" : "100 waters";
    if (!quick) {
        ok = ok && mlff_sample_benzene(&c->s[c->n]);
        c->names[c->n++] = "benzene";
        ok = ok && mlff_sample_molecules(&c->s[c->n], 64);
        c->names[c->n++] = "64 molecules";
        ok = ok && mlff_sample_water_cluster(&c->s[c->n], 512);
        c->names[c->n++] = "512 waters";
    }
    return ok;
}

static void free_cases(case_set *c)
{
    for (int k = 0; k < c->n; k++)
        mlff_sample_free(&c->s[k]);
}

/* One key: each candidate over the cases. */
static mlff_status tune_key(tuner *tu, const case_set *cases, const char *name, const int64_t *candidates, int n)
{
    const mlff_tuning_key *key = mlff_tuning_key_named(name);
    const int64_t before = mlff_tuning_get(&tu->t, key);
    double before_ms = -1, best_ms = -1;
    int64_t best = before;
    char line[512];
    int len = snprintf(line, sizeof line, "%s:", name);
    for (int c = 0; c < n; c++) {
        mlff_tuning t = tu->t;
        mlff_tuning_put(&t, key, candidates[c]);
        mlff_status st = use(tu, &t);
        double total = 0;
        for (int k = 0; k < cases->n && st == MLFF_OK; k++) {
            double ms = 0;
            st = time_case(tu, &cases->s[k], &ms);
            total += ms;
        }
        if (st != MLFF_OK)
            return st;
        char value[64];
        mlff_tuning_format_value(&t, key, value, sizeof value);
        if (len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %.3f ms", value, total);
        progress(tu, "%s=%s: %.3f ms over %d systems", name, value, total, cases->n);
        if (candidates[c] == before)
            before_ms = total;
        if (best_ms < 0 || total < best_ms) {
            best_ms = total;
            best = candidates[c];
        }
    }
    note(tu, "%s", line);
    if (before_ms >= 0 && best_ms > 0.98 * before_ms)
        best = before;
    mlff_tuning_put(&tu->t, key, best);
    tu->measured[key - mlff_tuning_keys] = 1;
    return use(tu, &tu->t);
}

/* The table's value halved and doubled (twice each), and where the key
 * takes it a value that turns its form off (0 or never). */
static int candidates_around(const mlff_tuning *t, const char *name, int64_t off, int64_t *out)
{
    const int64_t v = mlff_tuning_get(t, mlff_tuning_key_named(name));
    int n = 0;
    out[n++] = v;
    if (v > 0) {
        if (v / 4 > 0)
            out[n++] = v / 4;
        if (v / 2 > 0)
            out[n++] = v / 2;
        out[n++] = 2 * v;
        out[n++] = 4 * v;
    }
    if (v != off)
        out[n++] = off;
    return n;
}

static mlff_status tune_gpu_forms(tuner *tu, const char *api)
{
    case_set cases;
    if (!make_cases(&cases, tu->quick)) {
        free_cases(&cases);
        return mlff_fail(&tu->ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
    }
    static const struct {
        const char *api, *key;
        int64_t off;
    } keys[] = {
        {"opencl", "opencl_tiled_gemm_from_tiles", MLFF_TUNING_NEVER},
        {"opencl", "opencl_vjp_tiled_from_tiles", MLFF_TUNING_NEVER},
        {"vulkan", "vulkan_tiled_gemm_from_tiles", MLFF_TUNING_NEVER},
        {"vulkan", "vulkan_vjp_tiled_from_tiles", MLFF_TUNING_NEVER},
        {"vulkan", "vulkan_mlp_layers_from_tiles", MLFF_TUNING_NEVER},
        {NULL, "mlp_wide_below_groups", 0},
        {"opencl", "mlp_half_below_groups", 0},
        {"opencl", "mlp_vjp_half_below_groups", 0},
        {NULL, "sum_fill_items", 0},
    };
    mlff_status st = MLFF_OK;
    for (size_t k = 0; k < sizeof keys / sizeof *keys && st == MLFF_OK; k++) {
        if (keys[k].api && strcmp(keys[k].api, api))
            continue;
        int64_t candidates[8];
        const int n = candidates_around(&tu->t, keys[k].key, keys[k].off, candidates);
        st = tune_key(tu, &cases, keys[k].key, candidates, tu->quick && n > 3 ? 3 : n);
    }
    if (st == MLFF_OK && !strcmp(api, "opencl")) { /* a form: who makes the pair vectors */
        const int64_t forms[] = {MLFF_PAIR_VECTORS_IN_AEV, MLFF_PAIR_VECTORS_APART};
        st = tune_key(tu, &cases, "pair_vectors", forms, 2);
    }
    free_cases(&cases);
    return st;
}

static char *record_text(tuner *tu, const char *device, double seconds)
{
    size_t cap = tu->notes_len + 4096;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    time_t now = time(NULL);
    char when[64] = "";
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    size_t len = (size_t)snprintf(text, cap, "# measured by mlff tune%s on %s, %s, in %.1f s\n",
                                  tu->quick ? " --quick" : "", device, when, seconds);
    memcpy(text + len, tu->notes ? tu->notes : "", tu->notes_len);
    len += tu->notes_len;
    for (int k = 0; k < mlff_n_tuning_keys && len < cap; k++) {
        if (!tu->measured[k])
            continue;
        char value[64];
        mlff_tuning_format_value(&tu->t, &mlff_tuning_keys[k], value, sizeof value);
        len += (size_t)snprintf(text + len, cap - len, "%s=%s\n", mlff_tuning_keys[k].key, value);
    }
    return text;
}

mlff_status mlff_runtime_tune(const mlff_settings *settings, const mlff_tune_options *options, char **text,
                              mlff_error *err)
{
    *text = NULL;
    tuner tu;
    memset(&tu, 0, sizeof tu);
    tu.options = options;
    tu.quick = options && options->quick;
    tu.seed = 0x2545f4914f6cdd1dULL;
    const double start = mlff_seconds();
    mlff_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
    mlff_error_clear(&ctx->error);
    tu.ctx = ctx;
    mlff_status st = mlff_context_open_as(ctx, settings, MLFF_OPEN_TABLE_ONLY);
    if (st == MLFF_OK)
        st = mlff_model_open(ctx, options ? options->model : NULL, &tu.model);
    mlff_device_info info;
    memset(&info, 0, sizeof info);
    if (st == MLFF_OK) {
        ctx->iface->opened_device(ctx->backend, &info);
        tu.t = ctx->tuning;
        progress(&tu, "tuning %s%s", ctx->iface->describe(ctx->backend), tu.quick ? " (quick)" : "");
        st = tune_dense(&tu);
    }
    if (st == MLFF_OK)
        st = tune_networks(&tu, info.is_gpu);
    if (st == MLFF_OK && info.is_gpu)
        st = tune_gpu_forms(&tu, info.api);
    if (st == MLFF_OK && !(*text = record_text(&tu, ctx->iface->describe(ctx->backend), mlff_seconds() - start)))
        st = mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "mlff tune: out of memory");
    if (st == MLFF_OK && !(options && options->no_write)) {
        st = mlff_tuning_record_write(ctx->cache_dir, &info, *text, &ctx->error);
        char path[1200];
        mlff_tuning_record_path(ctx->cache_dir, &info, path, sizeof path);
        if (st == MLFF_OK)
            progress(&tu, "wrote %s (%.1f s)", path, mlff_seconds() - start);
    }
    if (st != MLFF_OK) {
        *err = ctx->error;
        free(*text);
        *text = NULL;
    }
    mlff_context_close(ctx);
    free(ctx);
    free(tu.notes);
    free(tu.positions);
    free(tu.forces);
    free(tu.energies);
    return st;
}
