/*
 * pair_style mlff (see pair_mlff.h and lammps/README.md).
 *
 * Each rank hands mlff its subdomain: atoms 0 .. nlocal-1 owned, then the
 * ghosts LAMMPS placed around them (periodic images and the neighbours'
 * atoms) out to the model's cutoff plus the neighbor skin. mlff searches the
 * pairs itself, so no LAMMPS neighbor list is requested: the ghost shell is
 * all it needs, and LAMMPS makes that from the cutoff init_one() returns
 * (comm cutoff = cutoff + skin) in every version. The energy counts the
 * owned atoms; the forces of ghosts go back to their owners by LAMMPS's
 * reverse communication, hence newton pair on. The virial is this rank's
 * share (the sum of x (x) F over owned and ghost atoms), so the global
 * virial is mlff's, not LAMMPS's f dot r.
 *
 * A model of L > 1 interaction layers (message passing) gives an atom an
 * energy that depends on atoms L cutoffs away. Its ghosts must reach
 * L x cutoff (plus the skin): init_style raises the user's ghost cutoff
 * (comm->cutghostuser, what `comm_modify cutoff` sets, in both LAMMPS
 * versions) to that, and mlff runs the whole graph over owned and ghost
 * atoms, counting owned atoms' energies. init_one still returns the
 * model's cutoff, so other styles' neighbor lists are not widened.
 *
 * LAMMPS versions: this file builds unchanged against 29 Sep 2021 (Debian
 * 12) and 4 Feb 2025 (Debian 13) and the releases between; the API that
 * changed in between and that styles usually guard by version (neighbor
 * list requests: neighbor->request() and requests[] until 2022,
 * neighbor->add_request() after) is not used, as no list is requested. The
 * builds define MLFF_LAMMPS_VERSION (yyyymmdd, from LAMMPS's version):
 * older than the oldest checked is refused below, and checks that a later
 * LAMMPS may need go by it; a build without it (a copy in LAMMPS's src/)
 * is taken to be recent.
 *
 * This file is part of mlff (MIT licence). It includes LAMMPS's headers and
 * contains none of LAMMPS's code.
 */
#include "pair_mlff.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "lammps.h"
#include "memory.h"
#include "neighbor.h"
#include "update.h"
#include "utils.h"

#include "mlff.h"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#if defined(MLFF_LAMMPS_VERSION) && MLFF_LAMMPS_VERSION < 20210929
#error "pair_style mlff needs LAMMPS 29 Sep 2021 or later (centroid virials, utils::logmesg)"
#endif

#ifdef MLFF_LAMMPS_PLUGIN
#include "lammpsplugin.h"
#include "version.h"
#endif

using namespace LAMMPS_NS;

namespace {

const char *device_name(int kind)
{
  switch (kind) {
    case MLFF_DEVICE_CPU: return "cpu";
    case MLFF_DEVICE_OPENCL: return "opencl";
    case MLFF_DEVICE_VULKAN: return "vulkan";
    default: return "auto";
  }
}

// A whole, non-negative integer, or -1.
long parse_count(const char *s)
{
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < 0) return -1;
  return v;
}

// A finite number, else NaN.
double parse_number(const char *s)
{
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || !std::isfinite(v)) return NAN;
  return v;
}

Pair *create_pair_mlff(LAMMPS *lmp)
{
  return new PairMLFF(lmp);
}

}    // namespace

/* ---------------------------------------------------------------------- */

PairMLFF::PairMLFF(LAMMPS *lmp) :
    Pair(lmp), device_kind(MLFF_DEVICE_AUTO), device_index(-1), precision(MLFF_PRECISION_FLOAT32),
    skin(-1.0), verbose(0), ctx(nullptr), model(nullptr), model_cutoff(0.0), model_layers(1),
    ghost_depth(0.0), skin_in_use(-1.0),
    type_to_z(nullptr), energy_scale(1.0), last_neighbor_calls(-1), last_nlocal(-1),
    last_nall(-1), force_renumber(1)
{
  single_enable = 0;
  restartinfo = 0;
  one_coeff = 1;
  manybody_flag = 1;
  reinitflag = 0;
  // The global virial comes from mlff (each rank's share, ghosts included).
  no_virial_fdotr_compute = 1;
  // Per-atom virials in the centroid form (cvatom): compute centroid/stress/atom
  // and heat flux read them; compute stress/atom reads vatom.
  centroidstressflag = CENTROID_AVAIL;
}

PairMLFF::~PairMLFF()
{
  if (verbose && ctx && comm->me == 0) {
    mlff_stats st;
    if (mlff_get_stats(ctx, &st) == MLFF_OK) {
      std::ostringstream out;
      out << "pair mlff (rank 0): " << st.evaluations << " evaluations, " << st.neighbor_builds
          << " neighbor list builds, " << st.plan_builds << " plan builds\n";
      utils::logmesg(lmp, out.str());
    }
  }
  close_context();
  if (allocated) {
    memory->destroy(setflag);
    memory->destroy(cutsq);
    memory->destroy(type_to_z);
  }
}

/* ---------------------------------------------------------------------- */

void PairMLFF::allocate()
{
  allocated = 1;
  const int n = atom->ntypes;
  memory->create(setflag, n + 1, n + 1, "pair:setflag");
  memory->create(cutsq, n + 1, n + 1, "pair:cutsq");
  memory->create(type_to_z, n + 1, "pair:type_to_z");
  for (int i = 0; i <= n; i++) {
    type_to_z[i] = 0;
    for (int j = 0; j <= n; j++) setflag[i][j] = 0;
  }
}

void PairMLFF::fail(const std::string &what, int status)
{
  std::string message = "pair mlff: " + what + ": ";
  const char *detail = ctx ? mlff_last_error(ctx) : "";
  message += (detail && *detail) ? detail : mlff_strerror((mlff_status) status);
  error->one(FLERR, message);
}

/* ----------------------------------------------------------------------
   CPU threads for this rank's mlff context: OMP_NUM_THREADS where set
   (LAMMPS users set it per rank), else the cores this rank may run on
   divided among the ranks of the node that may run on them too (a launcher
   that bound each rank to its cores leaves them all to it). Also returns
   the rank's index on its node, for the choice of a GPU.
------------------------------------------------------------------------- */

int PairMLFF::threads_per_rank(int *node_rank) const
{
#ifdef MPI_STUBS
  // a serial LAMMPS (its MPI stubs): one rank
  *node_rank = 0;
  const char *omp = std::getenv("OMP_NUM_THREADS");
  const long n = omp ? std::strtol(omp, nullptr, 10) : 0;
  return n > 0 ? (int) n : 0;    // 0: every core the process may use
#else
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0, size = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  *node_rank = rank;

  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&mine);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++) CPU_SET(c, &mine);
  }
  std::vector<cpu_set_t> all(size);
  MPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, all.data(), (int) sizeof mine, MPI_BYTE, node);
  MPI_Comm_free(&node);

  const char *omp = std::getenv("OMP_NUM_THREADS");
  if (omp && *omp) {
    // "4" or a nested list "4,2": the first level is this rank's
    long n = std::strtol(omp, nullptr, 10);
    if (n > 0) return (int) n;
  }
  int sharing = 0;
  for (int r = 0; r < size; r++) {
    cpu_set_t both;
    CPU_AND(&both, &mine, &all[r]);
    if (CPU_COUNT(&both) > 0) sharing++;
  }
  const int cores = CPU_COUNT(&mine);
  const int n = sharing > 0 ? cores / sharing : cores;
  return n > 0 ? n : 1;
#endif
}

/* ---------------------------------------------------------------------- */

void PairMLFF::close_context()
{
  mlff_context_destroy(ctx);    // frees its models too
  ctx = nullptr;
  model = nullptr;
}

// Opens the device and loads the model on every rank; an error that every
// rank met is reported once (error->all), one that some ranks met by each of them.
void PairMLFF::open_context()
{
  close_context();

  mlff_settings s;
  mlff_default_settings(&s);
  s.device = (mlff_device_kind) device_kind;
  s.precision = (mlff_precision) precision;
  int node_rank = 0;
  s.n_threads = threads_per_rank(&node_rank);
  s.skin = skin >= 0.0 ? skin : neighbor->skin;
  if (device_index >= 0) {
    s.device_index = device_index;
  } else if (device_kind != MLFF_DEVICE_CPU) {
    // One GPU per rank: the rank's index on its node modulo the GPUs. Where
    // the count fails (a backend not built in), mlff_open says why below.
    int devices = 0, gpus = 0;
    if (mlff_count_devices(s.device, &devices, &gpus) == MLFF_OK && gpus > 0)
      s.device_index = node_rank % gpus;
  }

  mlff_status st = mlff_open(&s, model_path.empty() ? nullptr : model_path.c_str(), &ctx, &model);
  std::string message;
  if (st != MLFF_OK) {
    const char *detail = ctx ? mlff_last_error(ctx) : "";
    message = std::string("pair mlff: cannot open device '") + device_name(device_kind) + "'";
    if (s.device_index >= 0) message += " index " + std::to_string(s.device_index);
    message += " or model '" + (model_path.empty() ? std::string("(default)") : model_path) +
        "': " + ((detail && *detail) ? detail : mlff_strerror(st));
    close_context();
  } else {
    mlff_model_info info;
    st = mlff_model_get_info(model, &info);
    if (st != MLFF_OK) {
      message = std::string("pair mlff: model information: ") + mlff_last_error(ctx);
      close_context();
    } else {
      model_cutoff = info.cutoff;
      model_name = info.name ? info.name : "";
      st = mlff_model_get_interaction_layers(model, &model_layers);
      if (st != MLFF_OK) {
        message = std::string("pair mlff: model interaction layers: ") + mlff_last_error(ctx);
        close_context();
      }
    }
    if (st == MLFF_OK) {
      model_elements.assign(info.atomic_numbers, info.atomic_numbers + info.n_elements);
      skin_in_use = s.skin;
    }
  }

  int failed = st != MLFF_OK, n_failed = 0;
  MPI_Allreduce(&failed, &n_failed, 1, MPI_INT, MPI_SUM, world);
  if (n_failed == comm->nprocs) error->all(FLERR, message);
  if (failed) error->one(FLERR, message);
  if (n_failed) error->all(FLERR, "pair mlff: the device or model failed on another rank");

  if (comm->me == 0) {
    std::ostringstream out;
    out << "pair mlff: " << model_name << " (cutoff " << model_cutoff << " A";
    if (model_layers > 1) out << ", " << model_layers << " interaction layers";
    out << ") on "
        << mlff_device_description(ctx) << " (rank 0 of " << comm->nprocs << "), "
        << (precision == MLFF_PRECISION_FLOAT64 ? "float64" : "float32") << ", skin "
        << skin_in_use << " A\n";
    utils::logmesg(lmp, out.str());
  }
  force_renumber = 1;
}

/* ----------------------------------------------------------------------
   pair_style mlff [model PATH] [device auto|cpu|opencl|vulkan] [device_index N]
                   [precision float32|float64] [skin A] [verbose yes|no]
------------------------------------------------------------------------- */

void PairMLFF::settings(int narg, char **arg)
{
  model_path.clear();
  device_kind = MLFF_DEVICE_AUTO;
  device_index = -1;
  precision = MLFF_PRECISION_FLOAT32;
  skin = -1.0;
  verbose = 0;

  for (int i = 0; i < narg; i += 2) {
    const std::string key = arg[i];
    if (i + 1 >= narg) error->all(FLERR, "pair_style mlff: " + key + " needs a value");
    const char *value = arg[i + 1];
    if (key == "model") {
      model_path = value;
    } else if (key == "device") {
      if (!strcmp(value, "auto")) device_kind = MLFF_DEVICE_AUTO;
      else if (!strcmp(value, "cpu")) device_kind = MLFF_DEVICE_CPU;
      else if (!strcmp(value, "opencl")) device_kind = MLFF_DEVICE_OPENCL;
      else if (!strcmp(value, "vulkan")) device_kind = MLFF_DEVICE_VULKAN;
      else
        error->all(FLERR,
                   std::string("pair_style mlff: device must be auto, cpu, opencl or vulkan, not ") +
                       value);
    } else if (key == "device_index") {
      long n = parse_count(value);
      if (n < 0 || n > 4096)
        error->all(FLERR, std::string("pair_style mlff: device_index must be an integer >= 0, not ") +
                              value);
      device_index = (int) n;
    } else if (key == "precision") {
      if (!strcmp(value, "float32")) precision = MLFF_PRECISION_FLOAT32;
      else if (!strcmp(value, "float64")) precision = MLFF_PRECISION_FLOAT64;
      else
        error->all(FLERR,
                   std::string("pair_style mlff: precision must be float32 or float64, not ") + value);
    } else if (key == "skin") {
      double v = parse_number(value);
      if (!(v >= 0.0))
        error->all(FLERR, std::string("pair_style mlff: skin must be a distance >= 0, not ") + value);
      skin = v;
    } else if (key == "verbose") {
      if (!strcmp(value, "yes")) verbose = 1;
      else if (!strcmp(value, "no")) verbose = 0;
      else error->all(FLERR, std::string("pair_style mlff: verbose must be yes or no, not ") + value);
    } else {
      error->all(FLERR,
                 "pair_style mlff: unknown keyword " + key +
                     " (model, device, device_index, precision, skin, verbose)");
    }
  }
  open_context();
}

/* ----------------------------------------------------------------------
   pair_coeff * * El1 El2 ...: the element of each atom type
------------------------------------------------------------------------- */

void PairMLFF::coeff(int narg, char **arg)
{
  if (!model) error->all(FLERR, "pair_coeff mlff: pair_style mlff has no model");
  const int ntypes = atom->ntypes;
  if (narg != 2 + ntypes)
    error->all(FLERR,
               "pair_coeff mlff: expected * * and " + std::to_string(ntypes) +
                   " element symbols (one per atom type), got " + std::to_string(narg) +
                   " arguments");
  if (strcmp(arg[0], "*") != 0 || strcmp(arg[1], "*") != 0)
    error->all(FLERR, "pair_coeff mlff: only pair_coeff * * El1 El2 ... is allowed");
  if (!allocated) allocate();

  std::string known;
  for (int z : model_elements) known += std::string(known.empty() ? "" : " ") + mlff_element_symbol(z);
  for (int t = 1; t <= ntypes; t++) {
    const char *symbol = arg[1 + t];
    if (!strcmp(symbol, "NULL"))
      error->all(FLERR,
                 "pair_coeff mlff: type " + std::to_string(t) +
                     " is NULL; pair style mlff computes every atom, so every type needs an element"
                     " (pair_style hybrid cannot leave types out of a many-body model either)");
    const int z = mlff_element_number(symbol);
    if (z == 0)
      error->all(FLERR,
                 "pair_coeff mlff: type " + std::to_string(t) + ": " + symbol +
                     " is not a chemical element symbol (H, C, O, Cl, ...)");
    bool found = false;
    for (int e : model_elements) found = found || e == z;
    if (!found)
      error->all(FLERR,
                 "pair_coeff mlff: type " + std::to_string(t) + ": element " + symbol +
                     " is not in model " + model_name + " (" + known + ")");
    type_to_z[t] = z;
  }
  for (int i = 1; i <= ntypes; i++)
    for (int j = i; j <= ntypes; j++) setflag[i][j] = 1;
}

/* ---------------------------------------------------------------------- */

void PairMLFF::init_style()
{
  if (!model) error->all(FLERR, "pair mlff: no model (pair_style mlff failed)");
  if (force->newton_pair == 0)
    error->all(FLERR,
               "pair mlff: needs newton pair on (ghost atoms get forces that LAMMPS must add to "
               "their owners)");
  if (!strcmp(update->unit_style, "metal")) {
    energy_scale = 1.0;
  } else if (!strcmp(update->unit_style, "real")) {
    // eV -> kcal/mol with LAMMPS's own constant: qe2f turns charge (e) times
    // potential (V) into energy / distance, i.e. 1 eV into kcal/mol in real units.
    energy_scale = force->qe2f;
  } else {
    error->all(FLERR,
               std::string("pair mlff: units ") + update->unit_style +
                   " are not supported; use units metal (eV, Angstrom) or real (kcal/mol, Angstrom)");
  }
  // By default the kept pair lists use LAMMPS's skin, so that mlff searches
  // again when LAMMPS re-neighbours; the neighbor command may have come after
  // pair_style.
  if (skin < 0.0 && neighbor->skin != skin_in_use) open_context();
  force_renumber = 1;

  // Ghosts reach the communication cutoff at re-neighbouring; atoms then
  // move less than the skin relative to each other before the next one, so
  // the ghosts surely cover the communication cutoff less the skin.
  if (model_layers > 1) {
    if (comm->mode != Comm::SINGLE)
      error->all(FLERR,
                 "pair mlff: model " + model_name + " has " + std::to_string(model_layers) +
                     " interaction layers and needs ghosts " + std::to_string(model_layers) +
                     " x its cutoff deep, which pair mlff sets through comm_modify mode single");
    const double needed = model_layers * model_cutoff + neighbor->skin;
    if (comm->cutghostuser < needed) {
      comm->cutghostuser = needed;
      if (comm->me == 0) {
        std::ostringstream out;
        out << "pair mlff: " << model_layers << " interaction layers: ghost atoms out to "
            << needed << " A (comm_modify cutoff)\n";
        utils::logmesg(lmp, out.str());
      }
    }
  }
  ghost_depth = std::max(comm->cutghostuser, model_cutoff + neighbor->skin) - neighbor->skin;
  // No neighbor list request: mlff finds the pairs among owned and ghost atoms.
}

double PairMLFF::init_one(int, int)
{
  return model_cutoff;
}

/* ---------------------------------------------------------------------- */

void PairMLFF::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);

  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const int renumbered = force_renumber || neighbor->ncalls != last_neighbor_calls ||
      neighbor->ago == 0 || nlocal != last_nlocal || nall != last_nall;

  // A rank that owns no atoms has nothing to compute: its ghosts feel only
  // the owned atoms' energies (force_renumber: mlff did not see these atoms).
  if (nlocal == 0) {
    force_renumber = 1;
    return;
  }
  last_neighbor_calls = neighbor->ncalls;
  last_nlocal = nlocal;
  last_nall = nall;

  numbers.resize(nall);
  const int *type = atom->type;
  for (int i = 0; i < nall; i++) numbers[i] = type_to_z[type[i]];
  forces_buf.resize(3 * (size_t) nall);

  double energy = 0.0, w[9] = {0.0};
  mlff_subdomain sub;
  std::memset(&sub, 0, sizeof sub);
  sub.n_owned = nlocal;
  sub.n_atoms = nall;
  sub.atomic_numbers = numbers.data();
  sub.positions = &atom->x[0][0];    // LAMMPS's arrays are contiguous rows of 3
  sub.renumbered = renumbered;
  sub.ghost_depth = ghost_depth;

  mlff_subdomain_results res;
  std::memset(&res, 0, sizeof res);
  res.energy = &energy;
  res.forces = forces_buf.data();
  if (vflag_global) res.virial = w;
  if (eflag_atom) {
    atom_energies_buf.resize(nlocal);
    res.atom_energies = atom_energies_buf.data();
  }
  if (vflag_atom || cvflag_atom) {
    atom_virials_buf.resize(9 * (size_t) nall);
    res.atom_virials = atom_virials_buf.data();
  }

  mlff_status st = mlff_compute_subdomain(model, &sub, &res);
  if (st != MLFF_OK) {
    force_renumber = 1;
    std::string where;
    int64_t system = -1, at = -1;
    if (st == MLFF_ERROR_BAD_INPUT && mlff_last_error_location(ctx, &system, &at) == MLFF_OK &&
        at >= 0 && at < nall) {
      // mlff counts this rank's owned atoms, then its ghosts, from 0
      const long long id = atom->tag ? (long long) atom->tag[at] : (long long) at;
      where = std::string(", ") + (atom->tag ? "atom ID " : "atom index ") + std::to_string(id) +
          (at < nlocal ? " (" : " (a ghost; ") + "mlff's atom " + std::to_string((long long) at + 1) +
          " of this rank's " + std::to_string(nlocal) + " owned and " + std::to_string(nall - nlocal) +
          " ghost atoms)";
    }
    fail("step " + std::to_string((long long) update->ntimestep) + where, st);
  }
  force_renumber = 0;

  const double k = energy_scale;
  double **f = atom->f;
  for (int i = 0; i < nall; i++) {
    f[i][0] += k * forces_buf[3 * i + 0];
    f[i][1] += k * forces_buf[3 * i + 1];
    f[i][2] += k * forces_buf[3 * i + 2];
  }
  if (eflag_global) eng_vdwl += k * energy;
  if (eflag_atom)
    for (int i = 0; i < nlocal; i++) eatom[i] += k * atom_energies_buf[i];
  if (vflag_global) {
    // LAMMPS's order xx yy zz xy xz yz, with xy = sum x F_y as its f dot r
    virial[0] += k * w[0];
    virial[1] += k * w[4];
    virial[2] += k * w[8];
    virial[3] += k * w[1];
    virial[4] += k * w[2];
    virial[5] += k * w[5];
  }
  if (vflag_atom) {
    for (int i = 0; i < nall; i++) {
      const double *v = &atom_virials_buf[9 * (size_t) i];
      vatom[i][0] += k * v[0];
      vatom[i][1] += k * v[4];
      vatom[i][2] += k * v[8];
      vatom[i][3] += k * v[1];
      vatom[i][4] += k * v[2];
      vatom[i][5] += k * v[5];
    }
  }
  if (cvflag_atom) {
    // xx yy zz xy xz yz yx zx zy
    for (int i = 0; i < nall; i++) {
      const double *v = &atom_virials_buf[9 * (size_t) i];
      cvatom[i][0] += k * v[0];
      cvatom[i][1] += k * v[4];
      cvatom[i][2] += k * v[8];
      cvatom[i][3] += k * v[1];
      cvatom[i][4] += k * v[2];
      cvatom[i][5] += k * v[5];
      cvatom[i][6] += k * v[3];
      cvatom[i][7] += k * v[6];
      cvatom[i][8] += k * v[7];
    }
  }
}

double PairMLFF::memory_usage()
{
  double bytes = Pair::memory_usage();
  bytes += (double) numbers.capacity() * sizeof(std::int32_t);
  bytes += (double) (forces_buf.capacity() + atom_energies_buf.capacity() +
                     atom_virials_buf.capacity()) * sizeof(double);
  return bytes;
}

/* ----------------------------------------------------------------------
   Registration into a running LAMMPS that has no PLUGIN package (Debian
   12's lmp): the input script's `python` command loads this library with
   ctypes and calls this with the LAMMPS instance (lammps/README.md).
   Returns 0, or -1 for a NULL instance.
------------------------------------------------------------------------- */

extern "C" __attribute__((visibility("default"))) int mlff_lammps_register(void *lmp)
{
  LAMMPS *instance = static_cast<LAMMPS *>(lmp);
  if (!instance || !instance->force || !instance->force->pair_map) return -1;
  (*instance->force->pair_map)["mlff"] = &create_pair_mlff;
  return 0;
}

#ifdef MLFF_LAMMPS_PLUGIN
/* ----------------------------------------------------------------------
   Plugin entry (`plugin load`, LAMMPS built with PKG_PLUGIN)
------------------------------------------------------------------------- */

extern "C" __attribute__((visibility("default"))) void lammpsplugin_init(void *lmp, void *handle,
                                                                         void *regfunc)
{
  lammpsplugin_t plugin;
  lammpsplugin_regfunc register_plugin = (lammpsplugin_regfunc) regfunc;
  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.name = "mlff";
  plugin.info = "mlff: machine-learned potentials (ANI-2x) on CPU, OpenCL and Vulkan";
  plugin.author = "the mlff authors";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &create_pair_mlff;
  plugin.handle = handle;
  (*register_plugin)(&plugin, lmp);
}
#endif
