/*
 * Model families behind one table. A family (ANI today) says what it reads
 * from a model file and builds, from it, the energy graph of a set of the
 * model's elements; it may also choose among forms of that graph by batch
 * (ANI: how its element networks run). The runtime finds the family by the
 * file's "family" metadata and never names one: adding a family is a new
 * file under models/ and a row in family.c.
 */
#ifndef MLFF_MODELS_FAMILY_H
#define MLFF_MODELS_FAMILY_H

#include <stdint.h>

#include "core/elements.h"
#include "core/graph.h"
#include "core/tuning.h"
#include "model_file.h"

/* What the runtime asks a family's graph to be. */
typedef struct mlff_graph_request {
    const mlff_element_set *elements; /* the model's elements it serves (numbered from 0 in the
                                       * model's order in the graph's species); NULL: all */
    int form;                         /* a form plan_form chose, or default_form */
} mlff_graph_request;

typedef struct mlff_model_family {
    const char *name;            /* the model file's "family" ("ani") */
    const char *const *metadata; /* the metadata keys it reads besides name and elements (NULL-ended) */
    const char *const *tensors;  /* the tensors it reads, by name or by a prefix ending in '.' (NULL-ended) */
    /* Appends to g the energy graph: per system in eV (MLFF_OUTPUT_ENERGY),
     * counting owned atoms only (graph.h); the runtime adds the reverse pass. */
    mlff_status (*build_graph)(const mlff_model_file *mf, const mlff_graph_request *request, mlff_graph *g,
                               mlff_error *err);
    /* The form of a graph for a batch of `atoms` atoms of `n_elements` of
     * the model's elements, by the device's tuning record. NULL: the
     * family has one form, default_form. */
    int (*plan_form)(int n_elements, int64_t atoms, const mlff_tuning *tuning);
    int default_form; /* of the graph of every element, built when the model is read */
} mlff_model_family;

/* The family called name, or NULL. */
const mlff_model_family *mlff_model_family_find(const char *name);

/* The family of a model file, checked to find in it what the family reads;
 * NULL, with a message naming the file (path) and what is missing, if not. */
const mlff_model_family *mlff_model_family_of(const mlff_model_file *mf, const char *path, mlff_error *err);

#endif
