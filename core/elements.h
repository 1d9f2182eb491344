#ifndef MLFF_CORE_ELEMENTS_H
#define MLFF_CORE_ELEMENTS_H

#define MLFF_MAX_ATOMIC_NUMBER 118

const char *mlff_element_symbol_internal(int z);
int mlff_element_number_internal(const char *symbol);

#endif
