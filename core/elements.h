#ifndef MLFF_CORE_ELEMENTS_H
#define MLFF_CORE_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

#define MLFF_MAX_ATOMIC_NUMBER 118

/* A set of a model's elements, by their index in the model's element list. */
typedef struct mlff_element_set {
    uint64_t bits[(MLFF_MAX_ATOMIC_NUMBER + 63) / 64];
} mlff_element_set;

static inline void mlff_element_set_add(mlff_element_set *set, int element)
{
    set->bits[element / 64] |= UINT64_C(1) << (element % 64);
}

static inline int mlff_element_set_has(const mlff_element_set *set, int element)
{
    return (int)(set->bits[element / 64] >> (element % 64) & 1u);
}

/* Whether set a holds every element of set b. */
static inline int mlff_element_set_holds(const mlff_element_set *a, const mlff_element_set *b)
{
    for (size_t k = 0; k < sizeof a->bits / sizeof *a->bits; k++)
        if (b->bits[k] & ~a->bits[k])
            return 0;
    return 1;
}

static inline int mlff_element_set_size(const mlff_element_set *set)
{
    int n = 0;
    for (size_t k = 0; k < sizeof set->bits / sizeof *set->bits; k++)
        n += __builtin_popcountll(set->bits[k]);
    return n;
}

const char *mlff_element_symbol_internal(int z);
int mlff_element_number_internal(const char *symbol);

#endif
