/*
 * ANI models (ANI-1x, ANI-2x, ...) as operator graphs.
 *
 * What an ANI model file holds (written by the NeuroChem importer,
 * models/neurochem.c; read here; nothing else about ANI is hard-coded):
 *
 * metadata
 *   family          "ani"
 *   name            e.g. "ANI-2x"
 *   elements        element symbols in network order, space separated ("H C N O S F Cl")
 *   energy_unit     "hartree" (the networks' unit; the graph converts to eV)
 *   length_unit     "angstrom"
 *   ensemble_size   number of members, decimal
 *   source, license, provenance  free text
 * tensors (F64 unless said; [rows, cols])
 *   aev.radial.cutoff        [1, 1]  Rcr
 *   aev.radial.eta           [1, 1]  EtaR (the float32 value of the file, widened exactly)
 *   aev.radial.shift         [R, 1]  ShfR (float32 values, widened)
 *   aev.angular.cutoff       [1, 1]  Rca
 *   aev.angular.zeta         [1, 1]  Zeta (float32, widened)
 *   aev.angular.shift_theta  [Z, 1]  ShfZ (float32, widened)
 *   aev.angular.eta          [1, 1]  EtaA (float32, widened)
 *   aev.angular.shift_r      [Ra, 1] ShfA (float32, widened)
 *   self_energy              [n_elements, 1] Hartree, in element order
 *   network.<El>.<m>.<l>.weight      F32 [out, in]   member m, layer l (from 0)
 *   network.<El>.<m>.<l>.bias        F32 [out, 1]
 *   network.<El>.<m>.activation      I32 [layers, 1]  0 = identity, 1 = CELU
 *   network.<El>.<m>.activation_alpha F64 [layers, 1] CELU alpha (0 for identity)
 */
#ifndef MLFF_MODELS_ANI_H
#define MLFF_MODELS_ANI_H

#include "core/elements.h"
#include "core/graph.h"
#include "core/tuning.h"
#include "family.h"
#include "model_file.h"

enum { MLFF_ACTIVATION_IDENTITY = 0, MLFF_ACTIVATION_CELU = 1 };

/* The ANI family's row of the table (family.h). Its graph forms are the
 * ways its element networks run (mlff_element_networks, core/tuning.h). */
extern const mlff_model_family mlff_family_ani;

#endif
