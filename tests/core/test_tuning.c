/*
 * The tuning record's parser, printer and table (core/tuning.h), no device:
 * every key round-trips through the printer and the parser at each of its
 * named values and at numbers in its range; a bad key, a bad value and a
 * bad item are refused with their name; every row of the table parses; and
 * the table gives each kind of device the numbers it had before the record
 * existed (the constants each file held: NVIDIA's measurements for GPUs,
 * what CPU devices got).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tuning.h"
#include "tests/common/check.h"

/* A record whose every key differs from the defaults where it can. */
static void round_trips(void)
{
    int checked = 0;
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        int64_t values[16];
        int n = 0;
        for (const mlff_tuning_name *nm = key->names; nm && nm->name && n < 8; nm++)
            values[n++] = nm->value;
        if (key->min <= key->max) {
            values[n++] = key->min;
            values[n++] = key->power_of_two ? key->min * 2 : key->min + 1;
            values[n++] = key->max == INT64_MAX ? (int64_t)1 << 40 : key->max;
        }
        for (int v = 0; v < n; v++) {
            mlff_tuning t, back;
            mlff_tuning_defaults(&t);
            mlff_tuning_put(&t, key, values[v]);
            CHECK(mlff_tuning_get(&t, key) == values[v], "%s: put %lld, got %lld", key->key, (long long)values[v],
                  (long long)mlff_tuning_get(&t, key));
            /* The whole record as printed, read back into other values. */
            char text[8192];
            const int len = mlff_tuning_format(&t, text, sizeof text);
            CHECK(len > 0 && len < (int)sizeof text, "%s: the record prints in %d bytes", key->key, len);
            memset(&back, 0x5a, sizeof back);
            mlff_error err;
            mlff_error_clear(&err);
            unsigned char changed[MLFF_TUNING_MAX_KEYS] = {0};
            CHECK(mlff_tuning_set(&back, text, "the printed record", changed, &err) == MLFF_OK, "%s=%lld: %s",
                  key->key, (long long)values[v], err.message);
            for (int j = 0; j < mlff_n_tuning_keys; j++) {
                CHECK(changed[j], "%s: not set from the printed record", mlff_tuning_keys[j].key);
                CHECK(mlff_tuning_get(&back, &mlff_tuning_keys[j]) == mlff_tuning_get(&t, &mlff_tuning_keys[j]),
                      "%s=%lld: %s printed and read back as %lld, was %lld", key->key, (long long)values[v],
                      mlff_tuning_keys[j].key, (long long)mlff_tuning_get(&back, &mlff_tuning_keys[j]),
                      (long long)mlff_tuning_get(&t, &mlff_tuning_keys[j]));
            }
            checked++;
        }
    }
    printf("%d values of %d keys: printed and read back\n", checked, mlff_n_tuning_keys);
}

/* text refused, with `want` in the message. */
static void refused(const char *text, const char *want)
{
    mlff_tuning t;
    mlff_tuning_defaults(&t);
    const mlff_tuning before = t;
    mlff_error err;
    mlff_error_clear(&err);
    const mlff_status s = mlff_tuning_set(&t, text, "settings.tuning", NULL, &err);
    printf("'%s': %s\n", text, err.message);
    CHECK(s == MLFF_ERROR_INVALID_ARGUMENT && strstr(err.message, want), "'%s': status %d, '%s' (want '%s')", text,
          (int)s, err.message, want);
    (void)before;
}

static void bad_input(void)
{
    refused("no_such_key=1", "unknown key 'no_such_key'");
    refused("sum_lanes=3", "sum_lanes=3");
    refused("sum_lanes=3", "auto, 1, 2, 4, 8, 16");
    refused("sum_lanes=32", "sum_lanes=32");
    refused("mlp=fused", "mlp=fused");
    refused("mlp=fused", "auto, narrow, half, wide, layers");
    refused("gemm_splits=0x4", "gemm_splits=0x4");
    refused("gemm_splits=65", "gemm_splits=65");
    refused("dense_most_atoms=-5", "dense_most_atoms=-5");
    refused("dense_most_atoms=", "dense_most_atoms=");
    refused("mlp=wide sum_lanes", "'sum_lanes' is not key=value");
    refused("opencl_arena=lots", "opencl_arena=lots");
    /* Separators and comments; a later key wins. */
    mlff_tuning t;
    mlff_tuning_defaults(&t);
    mlff_error err;
    mlff_error_clear(&err);
    CHECK(mlff_tuning_set(&t, " mlp=wide,sum_lanes=4\n# a comment\n\tgemm_splits=3 mlp=half ", "x", NULL, &err) ==
              MLFF_OK &&
              t.mlp == MLFF_MLP_HALF && t.sum_lanes == 4 && t.gemm_splits == 3,
          "spaces, commas, new lines, comments: %s", err.message);
    CHECK(mlff_tuning_set(&t, "device_fp64=0 vulkan_staging=1 opencl_arena=off element_plans=off", "x", NULL, &err) ==
              MLFF_OK &&
              !t.device_fp64 && t.vulkan_staging == 1 && t.opencl_arena == -1 && !t.element_plans,
          "the environment's old spellings (0, 1, off): %s", err.message);
    CHECK(mlff_tuning_set(&t, NULL, "x", NULL, &err) == MLFF_OK && mlff_tuning_set(&t, "", "x", NULL, &err) == MLFF_OK,
          "nothing to set");
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        CHECK(mlff_tuning_key_named(mlff_tuning_keys[k].key) == &mlff_tuning_keys[k], "%s found by name",
              mlff_tuning_keys[k].key);
        CHECK(mlff_tuning_keys[k].help && *mlff_tuning_keys[k].help, "%s has a line of help", mlff_tuning_keys[k].key);
        for (int j = 0; j < k; j++)
            CHECK(!mlff_tuning_keys[j].env || !mlff_tuning_keys[k].env ||
                      strcmp(mlff_tuning_keys[j].env, mlff_tuning_keys[k].env) != 0,
                  "%s and %s answer to one variable", mlff_tuning_keys[j].key, mlff_tuning_keys[k].key);
    }
}

/* The numbers each file held before the record: a GPU's (measured on NVIDIA's). */
static void check_gpu(const mlff_tuning *t, const char *name, int vulkan)
{
    CHECK(t->element_plans == 1 && t->element_networks == MLFF_ELEMENT_NETWORKS_AUTO &&
              t->merged_networks_most_extra == 8 && t->stacked_networks_most_atoms == 2048,
          "%s: element networks", name);
    CHECK(t->dense_most_atoms == 48 && t->cell_lists == MLFF_CELL_LISTS_DEVICE, "%s: DENSE_MOST_ATOMS_ON_GPU", name);
    CHECK(t->cells_sorted_in_one_group_most == 1024 && t->cells_one_bin_most == 1024 &&
              t->cells_placed_on_host_most == 4096 && t->cells_counted_on_host_most == 65536 &&
              t->cells_listed_on_host_most == 1024,
          "%s: the device cell lists' limits", name);
    CHECK(t->device_fp64 == 1 && t->segment_sort == MLFF_SEGMENT_SORT_DEVICE && t->sort_fused_pairs == 1 << 20,
          "%s: MLFF_SORT_FUSED_PAIRS", name);
    CHECK(t->sum_lanes == 0 && t->sum_fill_items == 1 << 19 && t->sum_lane_entries == 2 && t->sum_few_items == 1 << 15,
          "%s: MLFF_SUM_*", name);
    CHECK(t->mlp == MLFF_MLP_AUTO && t->mlp_wide_below_groups == 64 &&
              t->mlp_half_below_groups == (vulkan ? 0 : 256) && t->mlp_vjp_half_below_groups == (vulkan ? 0 : 512),
          "%s: MLFF_MLP_*_BELOW_GROUPS (the half form on OpenCL only)", name);
    CHECK(t->gemm_splits == 0 && t->gemm_splits_most == 8 && t->gemm_split_least_k == 256, "%s: MLFF_SPLIT*", name);
    CHECK(t->opencl_gemm == MLFF_OPENCL_GEMM_AUTO && t->opencl_tiled_gemm_from_tiles == 128 &&
              t->opencl_vjp_tiled_from_tiles == 8 && t->opencl_gemm_own_below_rows == 2048 &&
              t->opencl_split_fill_per_cu == 6 && t->opencl_rows_few_groups_per_cu == 2 && t->opencl_arena == 0 &&
              t->opencl_arena_most == 1 << 30,
          "%s: CL_*", name);
    CHECK(t->vulkan_gemm == MLFF_VULKAN_GEMM_AUTO && t->vulkan_tiled_gemm_from_tiles == 96 &&
              t->vulkan_vjp_tiled_from_tiles == 8 && t->vulkan_rows_few_groups == 256 && t->vulkan_split_fill == 768 &&
              t->vulkan_mlp_layers_from_tiles == 512 && t->vulkan_fence_spin_us == 1000 && t->vulkan_replay == 1 &&
              t->vulkan_staging == 0,
          "%s: VK_*", name);
}

/* ... and a CPU device's: what the GPUs' forms left them. */
static void check_cpu(const mlff_tuning *t, const char *name)
{
    CHECK(t->sum_lanes == 1, "%s: one lane an output", name);
    CHECK(t->mlp_wide_below_groups == 0 && t->mlp_half_below_groups == 0 && t->mlp_vjp_half_below_groups == 0,
          "%s: the narrow layers", name);
    CHECK(t->opencl_tiled_gemm_from_tiles < 0 && t->opencl_vjp_tiled_from_tiles < 0 &&
              t->vulkan_tiled_gemm_from_tiles < 0 && t->vulkan_vjp_tiled_from_tiles < 0,
          "%s: no tiled GEMM", name);
    CHECK(t->opencl_split_fill_per_cu == 0 && t->vulkan_split_fill == 0 && t->vulkan_mlp_layers_from_tiles < 0,
          "%s: no splits, no layers", name);
    CHECK(t->merged_networks_most_extra < 0 && t->stacked_networks_most_atoms < 0, "%s: separate networks", name);
    CHECK(t->dense_most_atoms < 0 && t->cell_lists == MLFF_CELL_LISTS_HOST, "%s: cell lists on the host", name);
    CHECK(t->vulkan_fence_spin_us == 0, "%s: waits that block", name);
    CHECK(t->opencl_gemm_own_below_rows == 2048 && t->sort_fused_pairs == 1 << 20 && t->gemm_splits_most == 8,
          "%s: the rest as on GPUs", name);
}

static void table(void)
{
    static const char *const apis[] = {"cpu", "opencl", "vulkan"};
    static const uint32_t vendors[] = {0, MLFF_VENDOR_NVIDIA, MLFF_VENDOR_AMD, MLFF_VENDOR_INTEL, 0x10005};
    for (int a = 0; a < 3; a++)
        for (int v = 0; v < 5; v++)
            for (int gpu = 0; gpu < 2; gpu++) {
                if (a == 0 && gpu)
                    continue;
                mlff_tuning t;
                const char *row = NULL;
                char name[128];
                snprintf(name, sizeof name, "%s, vendor %#x, %s", apis[a], vendors[v], gpu ? "GPU" : "CPU");
                CHECK(mlff_tuning_for_device(&t, apis[a], vendors[v], gpu, &row) == MLFF_OK && row,
                      "%s: its row does not parse", name);
                if (gpu)
                    check_gpu(&t, name, a == 2);
                else
                    check_cpu(&t, name);
                if (v == 1 || v == 0)
                    printf("%s: %s\n", name, row);
            }
    mlff_tuning defaults;
    mlff_tuning_defaults(&defaults);
    check_gpu(&defaults, "the defaults", 0);
}

int main(void)
{
    round_trips();
    bad_input();
    table();
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
