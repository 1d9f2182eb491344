/*
 * Importer for ANI models in the NeuroChem file layout (the files TorchANI
 * and the ANI model zoo publish):
 *
 *   NAME.info          4 lines: constants file, self-energy file, ensemble
 *                      prefix, ensemble size (paths relative to the .info)
 *   *.params           AEV constants, "key = value", arrays "[a,b,...]"
 *   sae_linfit.dat     self energies, lines "Sym,index=value" (Hartree)
 *   PREFIX<m>/networks/ANN-<Sym>.nnf
 *                      ASCII decimal length, "=\n", then a bzip2 stream of a
 *                      text network description naming the weight files
 *   PREFIX<m>/networks/ANN-<Sym>.nnf-l<k>.wparam and .bparam
 *                      raw little-endian float32; weights [out][in]
 *
 * The result is an mlff_model_file that follows the ANI contract written at
 * the top of models/ani.h. Metadata: family, name, elements, energy_unit,
 * length_unit, ensemble_size, source, license, provenance (in that order);
 * source and license get neutral defaults that callers replace with
 * mlff_model_file_set_meta (which keeps the order). Tensors: AEV constants,
 * self energies, then every network: elements in Atyp order, members
 * ascending, layers ascending. Nothing in the result depends on where the
 * files lie or when the import ran, so a conversion is reproducible byte for
 * byte.
 *
 * Errors: MLFF_ERROR_IO for a missing or unreadable file,
 * MLFF_ERROR_MODEL_FORMAT for malformed or inconsistent files (the message
 * names the file and, for text, the line), MLFF_ERROR_UNSUPPORTED for valid
 * NeuroChem features mlff does not implement (activation codes other than
 * 6 and 9, several EtaR/Zeta/EtaA values, non-dense layers).
 */
#ifndef MLFF_MODELS_NEUROCHEM_H
#define MLFF_MODELS_NEUROCHEM_H

#include "core/error.h"
#include "model_file.h"

/* NeuroChem activation codes mlff understands. */
enum { MLFF_NEUROCHEM_ACTIVATION_LINEAR = 6, MLFF_NEUROCHEM_ACTIVATION_CELU = 9 };
/* CELU's alpha in NeuroChem's activation 9 (as TorchANI uses it). */
#define MLFF_NEUROCHEM_CELU_ALPHA 0.1

/*
 * Reads the model described by info_path. model_name becomes the "name"
 * metadata; NULL takes the .info file name without its extension
 * ("ani-2x_8x"). On success *out is a new model file (destroy it with
 * mlff_model_file_destroy); on error *out is NULL.
 */
mlff_status mlff_neurochem_import(const char *info_path, const char *model_name,
                                  mlff_model_file **out, mlff_error *err);

#endif
