#ifndef MLFF_CORE_ELEMENTS_H
#define MLFF_CORE_ELEMENTS_H

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

const char *mlff_element_symbol_internal(int z);
int mlff_element_number_internal(const char *symbol);

#endif
