/*
 * pair_style mlff: machine-learned potentials (ANI-2x, ...) evaluated by the
 * mlff library, one MPI rank's subdomain at a time (owned atoms, then the
 * ghosts LAMMPS placed around them).
 *
 *   pair_style mlff [model PATH] [device auto|cpu|opencl|vulkan] [device_index N]
 *                   [precision float32|float64] [skin A] [verbose yes|no]
 *   pair_coeff * * H O ...        (one element per atom type)
 *
 * One source, three ways in (lammps/README.md):
 *  - copied into LAMMPS's src/ (the PairStyle line below registers it);
 *  - as a plugin (`plugin load`, LAMMPS built with PKG_PLUGIN): built with
 *    MLFF_LAMMPS_PLUGIN defined, lammpsplugin_init() is the entry;
 *  - into a running LAMMPS without the PLUGIN package (Debian 12's lmp):
 *    mlff_lammps_register(lmp), called through ctypes from the input
 *    script's `python` command, adds "mlff" to the instance's pair styles.
 *
 * This file is part of mlff (MIT licence). It only includes LAMMPS's headers
 * and contains none of LAMMPS's code.
 */
#ifdef PAIR_CLASS
// clang-format off
PairStyle(mlff,PairMLFF);
// clang-format on
#else

#ifndef LMP_PAIR_MLFF_H
#define LMP_PAIR_MLFF_H

#include "pair.h"

#include <cstdint>
#include <string>
#include <vector>

struct mlff_context;
struct mlff_model;

namespace LAMMPS_NS {

class PairMLFF : public Pair {
 public:
  PairMLFF(class LAMMPS *);
  ~PairMLFF() override;

  void compute(int, int) override;
  void settings(int, char **) override;
  void coeff(int, char **) override;
  void init_style() override;
  double init_one(int, int) override;
  double memory_usage() override;

 private:
  // pair_style options
  std::string model_path;    // empty: mlff's default model
  int device_kind;           // mlff_device_kind
  int device_index;          // -1: one GPU per rank (node rank % GPUs), else this one
  int precision;             // mlff_precision
  double skin;               // < 0: LAMMPS's neighbor skin
  int verbose;

  // the open context
  mlff_context *ctx;
  mlff_model *model;
  double model_cutoff;
  int model_layers;          // interaction layers: ghosts must reach model_layers x model_cutoff
  double ghost_depth;        // how far the ghosts surely reach beyond owned atoms (init_style)
  double skin_in_use;        // the skin the context was made with
  std::string model_name;
  std::vector<int> model_elements;

  int *type_to_z;            // [ntypes + 1]: atomic number of each LAMMPS type
  double energy_scale;       // eV -> LAMMPS energy units (1 in metal, qe2f in real)

  // what the previous call saw: a call after LAMMPS re-neighboured, or with
  // other atoms, tells mlff that its kept pair lists are stale
  bigint last_neighbor_calls;
  int last_nlocal, last_nall;
  int force_renumber;

  std::vector<std::int32_t> numbers;
  std::vector<double> forces_buf, atom_energies_buf, atom_virials_buf;

  void allocate();
  void open_context();
  void close_context();
  int threads_per_rank(int *node_rank) const;
  [[noreturn]] void fail(const std::string &what, int status);
};

}    // namespace LAMMPS_NS

#endif
#endif
