/* Peak single-precision FMA throughput of this machine, measured, for the
 * benchmark's "fraction of peak" column. */
#ifndef MLFF_BENCH_PEAK_H
#define MLFF_BENCH_PEAK_H

/* GFLOP/s of FMA chains on n_threads threads, widest vectors available. */
double bench_peak_gflops(int n_threads, const char **isa);

#endif
