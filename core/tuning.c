/* The tuning record's keys, its parser and printer, its defaults and the
 * table of devices (tuning.h). */
#include "tuning.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mlff_tuning_name on_off[] = {{"on", 1}, {"off", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
static const mlff_tuning_name never[] = {{"never", MLFF_TUNING_NEVER}, {NULL, 0}};
static const mlff_tuning_name automatic[] = {{"auto", 0}, {NULL, 0}};
static const mlff_tuning_name element_networks[] = {{"auto", MLFF_ELEMENT_NETWORKS_AUTO},
                                                    {"stacked", MLFF_ELEMENT_NETWORKS_STACKED},
                                                    {"merged", MLFF_ELEMENT_NETWORKS_MERGED},
                                                    {"separate", MLFF_ELEMENT_NETWORKS_SEPARATE},
                                                    {NULL, 0}};
static const mlff_tuning_name cell_lists[] = {{"host", MLFF_CELL_LISTS_HOST}, {"device", MLFF_CELL_LISTS_DEVICE}, {NULL, 0}};
static const mlff_tuning_name segment_sort[] = {{"device", MLFF_SEGMENT_SORT_DEVICE},
                                                {"host", MLFF_SEGMENT_SORT_HOST},
                                                {"device_unfused", MLFF_SEGMENT_SORT_DEVICE_UNFUSED},
                                                {NULL, 0}};
static const mlff_tuning_name pair_vectors[] = {{"auto", MLFF_PAIR_VECTORS_AUTO},
                                                {"in_aev", MLFF_PAIR_VECTORS_IN_AEV},
                                                {"apart", MLFF_PAIR_VECTORS_APART},
                                                {NULL, 0}};
static const mlff_tuning_name mlp[] = {{"auto", MLFF_MLP_AUTO},   {"narrow", MLFF_MLP_NARROW}, {"half", MLFF_MLP_HALF},
                                       {"wide", MLFF_MLP_WIDE},   {"layers", MLFF_MLP_LAYERS}, {NULL, 0}};
static const mlff_tuning_name opencl_gemm[] = {{"auto", MLFF_OPENCL_GEMM_AUTO},
                                               {"own", MLFF_OPENCL_GEMM_OWN},
                                               {"clblast", MLFF_OPENCL_GEMM_CLBLAST},
                                               {"tiled", MLFF_OPENCL_GEMM_TILED},
                                               {NULL, 0}};
static const mlff_tuning_name vulkan_gemm[] = {{"auto", MLFF_VULKAN_GEMM_AUTO},         {"rows", MLFF_VULKAN_GEMM_ROWS},
                                               {"tiled", MLFF_VULKAN_GEMM_TILED},       {"subgroup", MLFF_VULKAN_GEMM_SUBGROUP},
                                               {"direct", MLFF_VULKAN_GEMM_DIRECT},     {NULL, 0}};
static const mlff_tuning_name arena[] = {{"on", 0}, {"off", -1}, {NULL, 0}};
static const mlff_tuning_name staging[] = {{"auto", 0}, {"on", 1}, {"1", 1}, {"off", 0}, {"0", 0}, {NULL, 0}};

#define FIELD(f) offsetof(mlff_tuning, f), sizeof(((mlff_tuning *)0)->f)
#define NAMES_ONLY 1, 0
#define COUNT 0, INT64_MAX
#define BIG ((int64_t)1 << 40)

const mlff_tuning_key mlff_tuning_keys[] = {
    {"element_plans", "MLFF_ELEMENT_PLANS", FIELD(element_plans), on_off, NAMES_ONLY, 0, 0,
     "a graph per set of elements a batch holds (on), or every batch through the graph of all the model's elements"},
    {"element_networks", "MLFF_ELEMENT_NETWORKS", FIELD(element_networks), element_networks, NAMES_ONLY, 0, 0,
     "how the element networks run; auto: merged, stacked or separate by the two thresholds below"},
    {"merged_networks_most_extra", NULL, FIELD(merged_networks_most_extra), never, COUNT, 0, 0,
     "merged element networks while (elements - 1) x atoms stays within this"},
    {"stacked_networks_most_atoms", NULL, FIELD(stacked_networks_most_atoms), never, COUNT, 0, 0,
     "else stacked element networks for batches of up to this many atoms, then separate"},
    {"dense_most_atoms", NULL, FIELD(dense_most_atoms), never, COUNT, 0, 0,
     "settings.neighbors auto: all pairs (no cell lists) for batches of up to this many atoms without periodic ones"},
    {"cell_lists", "MLFF_CELL_LISTS", FIELD(cell_lists), cell_lists, NAMES_ONLY, 0, 0,
     "where the sparse path's cell lists run (device: the batch's pair lists made there too)"},
    {"cells_sorted_in_one_group_most", NULL, FIELD(cells_sorted_in_one_group_most), NULL, COUNT, 0, 0,
     "device cell lists: atoms binned and placed by one work-group, one launch"},
    {"cells_one_bin_most", NULL, FIELD(cells_one_bin_most), NULL, COUNT, 0, 0,
     "device cell lists: a system without periodic axes of up to this many atoms is one bin"},
    {"cells_placed_on_host_most", NULL, FIELD(cells_placed_on_host_most), NULL, COUNT, 0, 0,
     "device cell lists: atoms of one-bin systems placed in their bins by the host"},
    {"cells_counted_on_host_most", NULL, FIELD(cells_counted_on_host_most), NULL, COUNT, 0, 0,
     "device cell lists: pairs to test (atoms squared, summed) counted by the host"},
    {"cells_listed_on_host_most", NULL, FIELD(cells_listed_on_host_most), NULL, COUNT, 0, 0,
     "device cell lists: pairs to test for which the host writes the lists too"},
    {"hessian_groups_from_atoms", NULL, FIELD(hessian_groups_from_atoms), never, COUNT, 0, 0,
     "Hessians: a molecule of at least this many atoms takes its Hessian as a sum over groups of its atoms, each "
     "with its neighbours' directions alone (memory and work with the atoms near each, not all)"},
    {"hessian_group_atoms", NULL, FIELD(hessian_group_atoms), automatic, 1, BIG, 0, 0,
     "the atoms a group owns; auto: by the molecule's size, so that a pass's memory stays near the Hessian's"},
    {"device_fp64", "MLFF_DEVICE_FP64", FIELD(device_fp64), on_off, NAMES_ONLY, 0, 1,
     "off: the GPU kernels use no doubles (float sums, float64 refused), as on a device without them"},
    {"pair_vectors", NULL, FIELD(pair_vectors), pair_vectors, NAMES_ONLY, 0, 0,
     "where launches cost (OpenCL): the AEV makes its lists' pair vectors (in_aev), or kernels of their own do "
     "(apart); auto: in_aev"},
    {"segment_sort", "MLFF_SEGMENT_SORT", FIELD(segment_sort), segment_sort, NAMES_ONLY, 0, 1,
     "where index entries are sorted for the deterministic sums (all give the same bits)"},
    {"sort_fused_pairs", NULL, FIELD(sort_fused_pairs), NULL, COUNT, 0, 0,
     "a symmetric pair list of fewer pairs has its entries placed in one launch, else two"},
    {"sum_lanes", "MLFF_SUM_LANES", FIELD(sum_lanes), automatic, 1, 16, 1, 0,
     "work-items an output of the ops that walk a list per output; auto: by the three thresholds below"},
    {"sum_fill_items", NULL, FIELD(sum_fill_items), NULL, COUNT, 0, 0,
     "sum lanes are doubled while the launch stays within this many items ..."},
    {"sum_lane_entries", NULL, FIELD(sum_lane_entries), NULL, COUNT, 0, 0,
     "... and each lane keeps this many entries on average ..."},
    {"sum_few_items", NULL, FIELD(sum_few_items), NULL, COUNT, 0, 0,
     "... or one, while the launch stays within this many items"},
    {"mlp", "MLFF_MLP", FIELD(mlp), mlp, NAMES_ONLY, 0, 0,
     "the element networks' fused layers: narrow, half, wide or (Vulkan) a GEMM a layer; auto: by the thresholds"},
    {"mlp_wide_below_groups", NULL, FIELD(mlp_wide_below_groups), NULL, COUNT, 0, 0,
     "the wide form where the narrow one would launch fewer work-groups than this"},
    {"mlp_half_below_groups", NULL, FIELD(mlp_half_below_groups), NULL, COUNT, 0, 0,
     "else the half form where the narrow one would launch fewer than this (forward)"},
    {"mlp_vjp_half_below_groups", NULL, FIELD(mlp_vjp_half_below_groups), NULL, COUNT, 0, 0,
     "... and fewer than this (reverse pass)"},
    {"gemm_splits", "MLFF_GEMM_SPLITS", FIELD(gemm_splits), automatic, 1, 64, 0, 0,
     "work-groups sharing each tile of a layer's input gradient, each summing its share of K; auto: below"},
    {"gemm_splits_most", NULL, FIELD(gemm_splits_most), NULL, COUNT, 0, 0,
     "splits are doubled up to this many, while the work-groups stay within the API's fill ..."},
    {"gemm_split_least_k", NULL, FIELD(gemm_split_least_k), NULL, COUNT, 0, 0,
     "... and each split keeps this many terms"},
    {"opencl_gemm", "MLFF_OPENCL_GEMM", FIELD(opencl_gemm), opencl_gemm, NAMES_ONLY, 0, 0,
     "OpenCL dense layers: our kernels alone, our tiled one alone, or CLBlast alone; auto: by the thresholds"},
    {"opencl_tiled_gemm_from_tiles", NULL, FIELD(opencl_tiled_gemm_from_tiles), never, COUNT, 0, 0,
     "OpenCL: the tiled GEMM for a layer of this many tiles of 64 x 64 or more"},
    {"opencl_vjp_tiled_from_tiles", NULL, FIELD(opencl_vjp_tiled_from_tiles), never, COUNT, 0, 0,
     "OpenCL: ... for an input gradient of this many or more"},
    {"opencl_gemm_own_below_rows", NULL, FIELD(opencl_gemm_own_below_rows), NULL, COUNT, 0, 0,
     "OpenCL: else our GEMM for few rows below this many rows, CLBlast above"},
    {"opencl_split_fill_per_cu", NULL, FIELD(opencl_split_fill_per_cu), NULL, COUNT, 0, 0,
     "OpenCL: GEMM splits while their work-groups stay within this many a compute unit"},
    {"opencl_rows_few_groups_per_cu", NULL, FIELD(opencl_rows_few_groups_per_cu), NULL, COUNT, 0, 0,
     "OpenCL: the GEMM for few rows gives an output more lanes while it launches fewer groups than this a CU"},
    {"opencl_arena", "MLFF_OPENCL_ARENA", FIELD(opencl_arena), arena, 1, BIG, 0, 1,
     "OpenCL buffers of up to this many bytes in one device buffer (on: an eighth of its largest size; off: none)"},
    {"opencl_arena_most", NULL, FIELD(opencl_arena_most), NULL, 1 << 20, BIG, 0, 1,
     "OpenCL: the arena's largest size in bytes (at most the device's largest buffer)"},
    {"vulkan_gemm", "MLFF_VULKAN_GEMM", FIELD(vulkan_gemm), vulkan_gemm, NAMES_ONLY, 0, 0,
     "Vulkan dense layers: few rows, tiled, subgroup shuffles or direct; auto: by the thresholds (CPUs: subgroup "
     "where they shuffle, else direct)"},
    {"vulkan_tiled_gemm_from_tiles", NULL, FIELD(vulkan_tiled_gemm_from_tiles), never, COUNT, 0, 0,
     "Vulkan: the tiled GEMM for a layer of this many tiles of 64 x 64 or more, else rows"},
    {"vulkan_vjp_tiled_from_tiles", NULL, FIELD(vulkan_vjp_tiled_from_tiles), never, COUNT, 0, 0,
     "Vulkan: ... for an input gradient of this many or more"},
    {"vulkan_rows_few_groups", NULL, FIELD(vulkan_rows_few_groups), NULL, COUNT, 0, 0,
     "Vulkan: the GEMM for few rows gives an output more lanes while it launches fewer groups than this"},
    {"vulkan_split_fill", NULL, FIELD(vulkan_split_fill), NULL, COUNT, 0, 0,
     "Vulkan: GEMM splits while their work groups stay within this many"},
    {"vulkan_mlp_layers_from_tiles", NULL, FIELD(vulkan_mlp_layers_from_tiles), never, COUNT, 0, 0,
     "Vulkan: the element networks a GEMM a layer where the first layer makes this many tiles or more"},
    {"vulkan_fence_spin_us", NULL, FIELD(vulkan_fence_spin_us), NULL, 0, 1000000, 0, 0,
     "Vulkan: microseconds the host polls a submission's fence before it blocks"},
    {"vulkan_replay", "MLFF_VULKAN_REPLAY", FIELD(vulkan_replay), on_off, NAMES_ONLY, 0, 1,
     "Vulkan: replay a recorded command buffer while the pipelines and buffers stay the same"},
    {"vulkan_staging", "MLFF_VULKAN_STAGING", FIELD(vulkan_staging), staging, NAMES_ONLY, 0, 1,
     "Vulkan: on: device-local buffers behind a staging buffer even where mapped memory would do"},
};
const int mlff_n_tuning_keys = (int)(sizeof mlff_tuning_keys / sizeof *mlff_tuning_keys);
_Static_assert(sizeof mlff_tuning_keys / sizeof *mlff_tuning_keys <= MLFF_TUNING_MAX_KEYS, "MLFF_TUNING_MAX_KEYS");

void mlff_tuning_defaults(mlff_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->element_plans = 1;
    t->element_networks = MLFF_ELEMENT_NETWORKS_AUTO;
    /* Merged networks won for methane and lost from 15 atoms of water;
     * stacked ones lost to separate ones from about 5000 atoms (their
     * padded widths): H200, bench/RESULTS.md (2026-11-25). */
    t->merged_networks_most_extra = 8;
    t->stacked_networks_most_atoms = 2048;
    /* Dense (searched on the host, its lists uploaded and sorted) won only
     * while the whole batch was small: up to 36-54 atoms through OpenCL
     * and Vulkan on the H200; 64 molecules of 9 atoms ran faster sparse
     * (bench_neighbors, bench_ani: RESULTS.md, 2026-11-25). */
    t->dense_most_atoms = 48;
    /* Built on the device, the sparse path's lists won on GPUs. */
    t->cell_lists = MLFF_CELL_LISTS_DEVICE;
    /* The device cell lists' steps done by one work-group or by the host
     * for small batches (runtime/device_cells.c says what each saves); the
     *100-water cluster's 90000 tests took the H100's host as long as the
     * device's count, and writing the lists of the 64 molecules cost the
     * host more than the launch it saved (RESULTS.md). */
    t->cells_sorted_in_one_group_most = 1024;
    t->cells_one_bin_most = 1024;
    t->cells_placed_on_host_most = 4096;
    t->cells_counted_on_host_most = 65536;
    t->cells_listed_on_host_most = 1024;
    /* By groups from 256 atoms: the 300-atom cluster took 107-144 ms in
     * groups of 16 atoms against 136 ms whole, in 0.3 GB instead of 4 GB;
     * 999 atoms 0.6-0.8 s against 1.5 s (H100, RESULTS.md). */
    t->hessian_groups_from_atoms = 256;
    t->hessian_group_atoms = 0;
    t->device_fp64 = 1;
    t->segment_sort = MLFF_SEGMENT_SORT_DEVICE;
    /* Each entry finding its runs itself cost more than a second launch
     * from about a million pairs (RESULTS.md). */
    t->sort_fused_pairs = (int64_t)1 << 20;
    /* Lanes doubled while the launch stays within 2^19 items and each keeps
     * 2 entries, one while it stays within 2^15 (a molecule, where only the
     * chain of loads counts): H200, RESULTS.md. */
    t->sum_lanes = 0;
    t->sum_fill_items = (int64_t)1 << 19;
    t->sum_lane_entries = 2;
    t->sum_few_items = (int64_t)1 << 15;
    /* The wide form below 64 work-groups (a molecule's); OpenCL's half form
     * below 256 forward and 512 back (the 100-water cluster's, twice the
     * groups to spread over the GPU): H100 and H200, RESULTS.md. */
    t->mlp = MLFF_MLP_AUTO;
    t->mlp_wide_below_groups = 64;
    t->mlp_half_below_groups = 256;
    t->mlp_vjp_half_below_groups = 512;
    /* K split up to 8 ways, each keeping 256 terms (ANI's first layer: 8
     * members x 256 a sum): the best of 1, 2, 4 and 8 at each size measured
     * (RESULTS.md). */
    t->gemm_splits = 0;
    t->gemm_splits_most = 8;
    t->gemm_split_least_k = 256;
    /* OpenCL, H200, the first layer's us, few rows / tiled: benzene (64
     * tiles) 8 / 14, the cluster (192) 35 / 19. An input gradient tiled
     * and split from 8 tiles: the cluster (12 tiles) 52 / 29 us on the H100,
     * 1536 atoms (50) 92 / 60 on the H200. Splits while the work-groups stay
     * within 6 a compute unit; the GEMM for few rows gives more lanes while
     * it would leave compute units idle (2 groups each). RESULTS.md. */
    t->opencl_gemm = MLFF_OPENCL_GEMM_AUTO;
    t->opencl_tiled_gemm_from_tiles = 128;
    t->opencl_vjp_tiled_from_tiles = 8;
    t->opencl_gemm_own_below_rows = 2048;
    t->opencl_split_fill_per_cu = 6;
    t->opencl_rows_few_groups_per_cu = 2;
    /* NVIDIA's OpenCL spends about 0.4 us of host time on each buffer
     * argument of a launch (bench_cl_launch): kernels take one arena. */
    t->opencl_arena = 0;
    t->opencl_arena_most = (int64_t)1 << 30;
    /* Vulkan, H200: tiled from 96 tiles (fewer than OpenCL's 128: NVIDIA's
     * Vulkan driver runs the GEMM for few rows slower; the cluster and the
     * 64 molecules took 8% less), an input gradient from 8 (the cluster's
     * 37 / 28 us, 1536 atoms 177 / 71). Vulkan has no count of compute
     * units: 256 groups (few rows) and 768 (splits) are about 2 and 6 per SM
     * of an H200. A GEMM a layer gained from 1536 atoms (600 tiles) and lost
     * for the cluster (144). RESULTS.md. */
    t->vulkan_gemm = MLFF_VULKAN_GEMM_AUTO;
    t->vulkan_tiled_gemm_from_tiles = 96;
    t->vulkan_vjp_tiled_from_tiles = 8;
    t->vulkan_rows_few_groups = 256;
    t->vulkan_split_fill = 768;
    t->vulkan_mlp_layers_from_tiles = 512;
    /* On NVIDIA's driver a blocked wait returned some 60-80 us after
     * polling would have (H200: the cell lists' count 0.126 -> 0.050 ms). */
    t->vulkan_fence_spin_us = 1000;
    t->vulkan_replay = 1;
    t->vulkan_staging = 0;
}

/* The table: changes to the defaults by API, vendor and kind, in the
 * syntax of settings.tuning. The first row that matches applies. */
typedef struct tuning_row {
    const char *api;  /* NULL: any */
    uint32_t vendor;  /* 0: any */
    int is_gpu;
    const char *name;
    const char *changes;
} tuning_row;

/* CPU devices (the CPU backend, PoCL, lavapipe) keep what they had before
 * the GPUs' forms were measured: each output summed by one work-item (the
 * trees of lanes take PoCL and lavapipe seconds to compile), the narrow
 * element networks' layers, no tiled GEMM (they run barriers in loops
 * slowly), separate element networks, cell lists on the host's threads
 * (faster than the devices' own), never all pairs (neither path won by
 * more than the noise on the CPU), and waits that block at once (lavapipe
 * needs the cores for its own threads). */
#define CPU_ROW                                                                                                        \
    "sum_lanes=1 mlp_wide_below_groups=0 mlp_half_below_groups=0 mlp_vjp_half_below_groups=0 "                        \
    "opencl_tiled_gemm_from_tiles=never opencl_vjp_tiled_from_tiles=never opencl_split_fill_per_cu=0 "              \
    "vulkan_tiled_gemm_from_tiles=never vulkan_vjp_tiled_from_tiles=never vulkan_split_fill=0 "                      \
    "vulkan_mlp_layers_from_tiles=never merged_networks_most_extra=never stacked_networks_most_atoms=never "          \
    "dense_most_atoms=never cell_lists=host vulkan_fence_spin_us=0"
/* Vulkan's half form of the layers was not measured faster (lowering.h). */
#define VULKAN_GPU "mlp_half_below_groups=0 mlp_vjp_half_below_groups=0"

static const tuning_row rows[] = {
    {NULL, 0, 0, "CPU devices (the CPU backend, PoCL, lavapipe)", CPU_ROW},
    {"opencl", MLFF_VENDOR_NVIDIA, 1, "an NVIDIA GPU through OpenCL (measured on the H100 and H200)", ""},
    {"vulkan", MLFF_VENDOR_NVIDIA, 1, "an NVIDIA GPU through Vulkan (measured on the H100 and H200)", VULKAN_GPU},
    {"opencl", MLFF_VENDOR_AMD, 1, "an AMD GPU through OpenCL (NVIDIA's numbers: not measured on AMD)", ""},
    {"vulkan", MLFF_VENDOR_AMD, 1, "an AMD GPU through Vulkan (NVIDIA's numbers: not measured on AMD)", VULKAN_GPU},
    {"opencl", MLFF_VENDOR_INTEL, 1, "an Intel GPU through OpenCL (NVIDIA's numbers: not measured on Intel)", ""},
    {"vulkan", MLFF_VENDOR_INTEL, 1, "an Intel GPU through Vulkan (NVIDIA's numbers: not measured on Intel)",
     VULKAN_GPU},
    {"opencl", 0, 1, "a GPU through OpenCL (NVIDIA's numbers: not measured on its vendor)", ""},
    {"vulkan", 0, 1, "a GPU through Vulkan (NVIDIA's numbers: not measured on its vendor)", VULKAN_GPU},
    {NULL, 0, 1, "a GPU (NVIDIA's numbers)", ""},
};

mlff_status mlff_tuning_for_device(mlff_tuning *t, const char *api, uint32_t vendor, int is_gpu, const char **row)
{
    mlff_tuning_defaults(t);
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        const tuning_row *r = &rows[k];
        if ((r->api && (!api || strcmp(r->api, api))) || (r->vendor && r->vendor != vendor) ||
            !r->is_gpu != !is_gpu)
            continue;
        mlff_error err;
        if (row)
            *row = r->name;
        return mlff_tuning_set(t, r->changes, r->name, NULL, &err); /* tests/core/test_tuning.c tries every row */
    }
    if (row)
        *row = "the defaults";
    return MLFF_OK;
}

const mlff_tuning_key *mlff_tuning_key_named(const char *name)
{
    for (int k = 0; k < mlff_n_tuning_keys; k++)
        if (!strcmp(mlff_tuning_keys[k].key, name))
            return &mlff_tuning_keys[k];
    return NULL;
}

int64_t mlff_tuning_get(const mlff_tuning *t, const mlff_tuning_key *k)
{
    const char *at = (const char *)t + k->offset;
    if (k->size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    int v;
    memcpy(&v, at, sizeof v);
    return v;
}

void mlff_tuning_put(mlff_tuning *t, const mlff_tuning_key *k, int64_t value)
{
    char *at = (char *)t + k->offset;
    if (k->size == sizeof(int64_t)) {
        memcpy(at, &value, sizeof value);
    } else {
        const int v = (int)value;
        memcpy(at, &v, sizeof v);
    }
}

int mlff_tuning_format_values(const mlff_tuning_key *k, char *buf, size_t size)
{
    char list[512] = "";
    size_t len = 0;
    int n = 0;
    for (const mlff_tuning_name *nm = k->names; nm && nm->name; nm++) {
        int seen = 0; /* aliases ("1" for "on") are not listed */
        for (const mlff_tuning_name *p = k->names; p < nm; p++)
            seen |= p->value == nm->value;
        if (!seen && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n++ ? ", " : "", nm->name);
    }
    if (k->min <= k->max && len < sizeof list) {
        if (k->power_of_two) {
            for (int64_t v = k->min; v <= k->max && len < sizeof list; v *= 2)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld", n++ ? ", " : "", (long long)v);
        } else if (k->max == INT64_MAX) {
            snprintf(list + len, sizeof list - len, "%sa number from %lld", n++ ? ", " : "", (long long)k->min);
        } else {
            snprintf(list + len, sizeof list - len, "%sa number from %lld to %lld", n++ ? ", " : "",
                     (long long)k->min, (long long)k->max);
        }
    }
    return snprintf(buf, size, "%s", list);
}

mlff_status mlff_tuning_set_value(mlff_tuning *t, const mlff_tuning_key *k, const char *text, const char *where,
                                  mlff_error *err)
{
    for (const mlff_tuning_name *nm = k->names; nm && nm->name; nm++)
        if (!strcmp(nm->name, text)) {
            mlff_tuning_put(t, k, nm->value);
            return MLFF_OK;
        }
    if (k->min <= k->max && *text) {
        char *end;
        errno = 0;
        const long long v = strtoll(text, &end, 10);
        if (!errno && !*end && v >= k->min && v <= k->max && (!k->power_of_two || (v & (v - 1)) == 0)) {
            mlff_tuning_put(t, k, v);
            return MLFF_OK;
        }
    }
    char values[512];
    mlff_tuning_format_values(k, values, sizeof values);
    return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "%s=%s: %s takes %s", where, text, k->key, values);
}

mlff_status mlff_tuning_set(mlff_tuning *t, const char *text, const char *where, unsigned char *changed,
                            mlff_error *err)
{
    const char *p = text ? text : "";
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p == '#') { /* a comment, to the end of its line */
            while (*p && *p != '\n')
                p++;
            continue;
        }
        if (!*p)
            return MLFF_OK;
        const char *end = p;
        while (*end && *end != ' ' && *end != ',' && *end != '\t' && *end != '\n' && *end != '\r' && *end != '#')
            end++;
        char item[256];
        const size_t len = (size_t)(end - p);
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        char *eq = strchr(item, '=');
        if (!eq)
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "%s: '%s' is not key=value (mlff tune --keys lists "
                             "the keys)", where, item);
        *eq = 0;
        const mlff_tuning_key *k = mlff_tuning_key_named(item);
        if (!k)
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "%s: unknown key '%s' (mlff tune --keys lists them)",
                             where, item);
        char context[300];
        snprintf(context, sizeof context, "%s: %s", where, item);
        mlff_status s = mlff_tuning_set_value(t, k, eq + 1, context, err);
        if (s != MLFF_OK)
            return s;
        if (changed)
            changed[k - mlff_tuning_keys] = 1;
        p = end;
    }
}

int mlff_tuning_format_value(const mlff_tuning *t, const mlff_tuning_key *k, char *buf, size_t size)
{
    const int64_t v = mlff_tuning_get(t, k);
    for (const mlff_tuning_name *nm = k->names; nm && nm->name; nm++)
        if (nm->value == v)
            return snprintf(buf, size, "%s", nm->name);
    return snprintf(buf, size, "%lld", (long long)v);
}

int mlff_tuning_format(const mlff_tuning *t, char *buf, size_t size)
{
    size_t len = 0;
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        char value[64];
        mlff_tuning_format_value(t, &mlff_tuning_keys[k], value, sizeof value);
        const int n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s=%s\n",
                               mlff_tuning_keys[k].key, value);
        if (n < 0)
            return n;
        len += (size_t)n;
    }
    if (size > 0 && len == 0)
        buf[0] = 0;
    return (int)len;
}
