/* bench.h - what the files of sarbp bench share: the command's session, the
 * defaults and the precision columns, the measuring helpers (SER, medians,
 * the scene, the exact image, JSON members) and one entry per kind of bench.
 * Private to src/cli/bench; the command itself is cmd_bench in cli.h. */
#ifndef SARBP_CLI_BENCH_H
#define SARBP_CLI_BENCH_H

#include <stddef.h>

#include "cli.h"
#include "sarbp/bench.h" /* the CUDA kernel bench, sarbp_ffbp_cuda_timed */

/* The command's one session (made by cmd_bench, freed before it returns):
 * every form of the bench takes its plans' resources from it, so that the
 * repetitions reuse what the first one made, as a caller forming image
 * after image does. */
extern sarbp_session *bench_session;

/* The end-to-end and scaling benches' fixed arrays of runs: more --reps are
 * clipped to it there. */
#define SCALING_REPS_MAX 16
/* The side of the central window the exact image covers (--exact-window). */
#define EXACT_WINDOW 64
/* The rows direct backprojection forms as FFBP's reference (--bp-rows). */
#define FFBP_REF_ROWS 256

/* The precisions of the kernel table, in column order: prec[] indexes these. */
enum { PREC_FP32, PREC_FP16, PREC_MIXED, NPREC };
extern const char *const bench_prec_names[NPREC];

/* One --interp entry: KERNEL[:UPSAMPLE]. */
struct interp_cfg {
    sarbp_interp interp;
    int upsample;
};

/* bench_util.c */
/* SER in dB of t[n] against the reference r[n]; INFINITY when they are equal. */
double bench_ser_db(const sarbp_c32 *t, const sarbp_c32 *r, size_t n);
/* SER of the window (x0, y0, w) of a full image t[g->ny][g->nx] against r[w.ny][w.nx]. */
double bench_window_ser_db(const sarbp_c32 *t, const sarbp_grid *g, const sarbp_grid *w,
                           size_t x0, size_t y0, const sarbp_c32 *r);
/* JSON members: ,"key":value with NaN as null (cli_json_num); the first
 * member of an object passes first = 1. */
void bench_jnum(const char *key, double v);
void bench_jstr(const char *key, const char *v, int first);
/* The Gotcha-like scene: 200 clutter points and 4 bright targets. */
/* hill (may be NULL): {H, R}, every target on sarbp_hill_z's hill */
sarbp_status bench_make_scene(size_t npulses, size_t nsamples, const double *hill, sarbp_phd **out);
/* Range compression of every pulse of p into *out (the caller frees it). */
sarbp_status bench_compress_with(const sarbp_phd *p, const sarbp_rc_params *rc,
                                 sarbp_precision prec, sarbp_profiles **out);
/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* The exact image of window w into *out (w->nx * w->ny, the caller frees it). */
sarbp_status bench_exact_window(const sarbp_phd *p, const sarbp_grid *w, sarbp_c32 **out);

/* bench.c */
/* Parses NAME[:TXxTY[:PPT[:MINB]]] of --variant into kc; 0 or -1. */
int bench_parse_variant(char *tok, char name[16], sarbp_cuda_kernel_cfg *kc);

/* bench_cuda.c */
/* The median wall time of reps forms of p into one reused image. */
sarbp_status bench_reused_median(const sarbp_phd *p, const sarbp_grid *g,
                                 const sarbp_rc_params *rc, const sarbp_bp_options *o, int reps,
                                 double *median_s);

/* The benches: each prints its table (or JSON lines) and returns a CLI exit code. */
int bench_cpu(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
              int reps, int json);
int bench_ffbp(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
               int reps, double max_error_db, size_t ref_rows, size_t exact_n, int json);
/* ics_given: --interp named the configurations; the end-to-end runs then
 * form with the first (else with form's default kernel of each precision) */
int bench_cuda(const sarbp_phd *p, const sarbp_grid *g, char *variants, const int *prec,
               const struct interp_cfg *ics, int nic, int ics_given, size_t exact_n,
               size_t pulse_block, int reps, const sarbp_bp_options *devs, int json);
int bench_cuda_ffbp(const sarbp_phd *p, const sarbp_grid *g, size_t exact_n, int reps,
                    double max_error_db, int device, size_t pulse_block, int json);
/* bench_autofocus.c: autofocus against direct formation (cuda: on device) */
int bench_autofocus(const sarbp_phd *p, const sarbp_grid *g, int cuda, int device, int reps, int json);

#endif
