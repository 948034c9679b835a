/* ffbp.cu - fast factorized backprojection in FP32: the same algorithm as
 * the FP64 CPU prototype (src/backproject/ffbp.c), one kernel per step.
 *
 * Variants: one, v1, the straightforward kernels below (the default and
 * only one; a faster variant is to be measured against it):
 *   stage0    backprojects each stage-0 sub-aperture's `base` pulses onto
 *             its polar grid, reading the FP32 profiles as B-splines
 *             (cubic: coefficients, 4 taps; linear: 2 taps), demodulated
 *             by kc;
 *   prefilter turns a stage's samples into cubic B-spline coefficients:
 *             the prototype's recursive filter (mirror ends) applied as
 *             its truncated symmetric FIR (ffbp_kernels.h), first along
 *             rho (one output per thread, neighbours from L1), then along
 *             theta (SARBP_FFBP_PF_R outputs per thread from one sliding
 *             pass down the column: the rows are far apart in memory);
 *   merge     each parent polar sample summed from its `merge` children,
 *             4 x 4 B-spline taps each, remodulated (no atomics);
 *   final     every pixel summed from the last stage's sub-images.
 * The per-thread arithmetic is in ffbp_kernels.h (shared with the CPU
 * emulation that the unit tests check); its header says how FP32 keeps the
 * phase (block-relative geometry, FP64 once per block and source).
 *
 * Work split. Row kernels: a block of SARBP_FFBP_SEG threads owns a run of
 * consecutive rho samples of one theta row of one sub-image (blockIdx.x
 * the row of the stage's row table, blockIdx.y the run along it): the
 * warp's threads take consecutive rho samples, so writes are coalesced and
 * child reads (same rho spacing in every stage) nearly so. The prefilter
 * along rho takes one sample per thread; along theta, the blocks of rows
 * j = 0, R, 2R, ... take R rows each (the others exit at once). stage0/merge take SARBP_FFBP_SPT samples
 * per thread, SARBP_FFBP_SEG apart (a run of SARBP_FFBP_RUN), so that the
 * block's serial FP64 prologue (its reference point, then each source's
 * reference) is shared by more work; per chunk of SARBP_FFBP_CHUNK sources
 * (pulses or children), threads 0..chunk-1 compute each source's reference
 * in FP64 into shared memory, then every thread adds the chunk's
 * contributions to its samples from registers. final: a block of
 * SARBP_FFBP_TILE_X x (TILE_Y / PPT) threads owns a tile of
 * SARBP_FFBP_TILE_X x SARBP_FFBP_TILE_Y pixels, referenced at its centre
 * pixel; thread (tx, ty) owns the pixels (tx, ty + k TILE_Y / PPT); per
 * chunk of sub-images likewise. Reads go through __ldg (L1). */
#include <cuda_runtime.h>

#include "ffbp_kernels.h"

/* ---- kernels --------------------------------------------------------------- */

typedef struct {
    const sarbp_ffbp_dsub *par;   /* this stage's sub-images */
    const sarbp_ffbp_dsub *kids;  /* merge: the previous stage's */
    const sarbp_ffbp_drow *rows;  /* this stage's rows */
    const sarbp_dpulse *pulses;   /* stage 0 */
    const sarbp_c32 *src;         /* stage 0: profiles; merge: children; prefilter: samples */
    sarbp_c32 *dst;
    int nbins, cubic;
    double z, kc;
} stage_args;

/* The body of stage 0 (PULSES) and merge: see the work split above. */
template <bool PULSES>
__device__ __forceinline__ void row_block(const stage_args &a)
{
    __shared__ sarbp_ffbp_ref ref[SARBP_FFBP_CHUNK];
    __shared__ sarbp_ffbp_rowref rr;
    const sarbp_ffbp_drow row = a.rows[blockIdx.x];
    const sarbp_ffbp_dsub P = a.par[row.sub];
    const int i0 = blockIdx.y * SARBP_FFBP_RUN;
    if (i0 >= P.nr) return; /* the whole block */
    if (threadIdx.x == 0) ffbp_rowref(&P, row.j, i0 + SARBP_FFBP_RUN / 2, a.z, &rr);
    __syncthreads();
    float dl[SARBP_FFBP_SPT], sh[SARBP_FFBP_SPT], ar[SARBP_FFBP_SPT], ai[SARBP_FFBP_SPT];
#pragma unroll
    for (int q = 0; q < SARBP_FFBP_SPT; q++) {
        ffbp_offsets(&rr, i0 + (int)threadIdx.x + q * SARBP_FFBP_SEG, &dl[q], &sh[q]);
        ar[q] = ai[q] = 0.0f;
    }
    for (int c0 = P.s0; c0 < P.s1; c0 += SARBP_FFBP_CHUNK) {
        const int n = min(SARBP_FFBP_CHUNK, P.s1 - c0);
        if ((int)threadIdx.x < n) {
            if (PULSES)
                ffbp_ref_pulse(&a.pulses[c0 + threadIdx.x], c0 + threadIdx.x, a.nbins, &P, &rr, a.kc,
                               &ref[threadIdx.x]);
            else
                ffbp_ref_sub(&a.kids[c0 + threadIdx.x], &P, &rr, a.kc, &ref[threadIdx.x]);
        }
        __syncthreads();
        for (int k = 0; k < n; k++)
#pragma unroll
            for (int q = 0; q < SARBP_FFBP_SPT; q++) {
                if (PULSES) ffbp_pulse_add(a.src, a.cubic, &ref[k], dl[q], sh[q], &ar[q], &ai[q]);
                else ffbp_child_add(a.src, &ref[k], dl[q], sh[q], &ar[q], &ai[q]);
            }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < SARBP_FFBP_SPT; q++) {
        const int i = i0 + (int)threadIdx.x + q * SARBP_FFBP_SEG;
        if (i < P.nr) {
            sarbp_c32 o = {ar[q], ai[q]};
            a.dst[P.off + (long long)row.j * P.nr + i] = o;
        }
    }
}

__global__ void __launch_bounds__(SARBP_FFBP_SEG) ffbp_stage0_kernel(stage_args a)
{
    row_block<true>(a);
}

__global__ void __launch_bounds__(SARBP_FFBP_SEG) ffbp_merge_kernel(stage_args a)
{
    row_block<false>(a);
}

/* THETA 0: along rho (within the row); 1: along theta (down the column) */
template <int THETA>
__global__ void __launch_bounds__(SARBP_FFBP_SEG) ffbp_prefilter_kernel(stage_args a)
{
    const sarbp_ffbp_drow row = a.rows[blockIdx.x];
    const sarbp_ffbp_dsub P = a.par[row.sub];
    const int i = blockIdx.y * SARBP_FFBP_SEG + threadIdx.x;
    if (i >= P.nr) return;
    if (THETA) { /* rows j = 0, R, 2R, ... each do R rows' outputs */
        if (row.j % SARBP_FFBP_PF_R == 0)
            ffbp_prefilter_run(a.src + P.off + i, P.nt, P.nr, row.j, a.dst + P.off + i, P.nr);
    } else {
        a.dst[P.off + (long long)row.j * P.nr + i] =
            ffbp_prefilter_at(a.src + P.off + (long long)row.j * P.nr, P.nr, 1, i);
    }
}

typedef struct {
    const sarbp_ffbp_dsub *subs; /* the last stage's */
    int nsubs;
    const sarbp_c32 *src;
    sarbp_c32 *img;
    int nx, ny;
    int ty0;                     /* the launch's first tile row */
    double x0, y0, dx, dy, z, kc;
} final_args;

#define FINAL_THREADS (SARBP_FFBP_TILE_X * SARBP_FFBP_TILE_Y / SARBP_FFBP_PPT)
#define FINAL_ROWS (SARBP_FFBP_TILE_Y / SARBP_FFBP_PPT) /* blockDim.y */

__global__ void __launch_bounds__(FINAL_THREADS) ffbp_final_kernel(final_args a)
{
    __shared__ sarbp_ffbp_ref ref[SARBP_FFBP_CHUNK];
    const int ixm = blockIdx.x * SARBP_FFBP_TILE_X + SARBP_FFBP_TILE_X / 2;
    const int iym = (blockIdx.y + a.ty0) * SARBP_FFBP_TILE_Y + SARBP_FFBP_TILE_Y / 2;
    const int dix = (int)threadIdx.x - SARBP_FFBP_TILE_X / 2;
    const int t = threadIdx.y * SARBP_FFBP_TILE_X + threadIdx.x;
    const float sx = (float)dix * (float)a.dx;
    float ar[SARBP_FFBP_PPT], ai[SARBP_FFBP_PPT];
#pragma unroll
    for (int q = 0; q < SARBP_FFBP_PPT; q++) ar[q] = ai[q] = 0.0f;
    for (int c0 = 0; c0 < a.nsubs; c0 += SARBP_FFBP_CHUNK) {
        const int n = min(SARBP_FFBP_CHUNK, a.nsubs - c0);
        if (t < n)
            ffbp_ref_pixel(&a.subs[c0 + t], a.x0 + ixm * a.dx, a.y0 + iym * a.dy, a.z, a.dx, a.dy,
                           a.kc, &ref[t]);
        __syncthreads();
        for (int k = 0; k < n; k++)
#pragma unroll
            for (int q = 0; q < SARBP_FFBP_PPT; q++) {
                const int diy = (int)threadIdx.y + q * FINAL_ROWS - SARBP_FFBP_TILE_Y / 2;
                ffbp_pixel_add(a.src, &ref[k], dix, diy, sx, (float)diy * (float)a.dy, &ar[q], &ai[q]);
            }
        __syncthreads();
    }
    const int ix = ixm + dix;
#pragma unroll
    for (int q = 0; q < SARBP_FFBP_PPT; q++) {
        const int iy = iym + (int)threadIdx.y + q * FINAL_ROWS - SARBP_FFBP_TILE_Y / 2;
        if (ix < a.nx && iy < a.ny) {
            sarbp_c32 o = {ar[q], ai[q]};
            a.img[(long long)iy * a.nx + ix] = o;
        }
    }
}

/* ---- launchers ------------------------------------------------------------- */

/* The grid of a stage's row kernels over its rows [ra, rb), or an error
 * when it does not fit. */
static cudaError_t row_grid(const sarbp_ffbp_run *r, int s, long long ra, long long rb, int per_block,
                            dim3 *grid)
{
    const long long nrows = rb - ra;
    const long long nseg = ((long long)r->max_nr[s] + per_block - 1) / per_block;
    if (ra < 0 || rb > r->row0[s + 1] - r->row0[s] || nrows < 0 || nrows > 2147483647LL || nseg < 0 ||
        nseg > 65535)
        return cudaErrorInvalidValue;
    *grid = dim3((unsigned)nrows, (unsigned)nseg);
    return cudaSuccess;
}

/* stage s's rows, all of them */
static long long stage_rows(const sarbp_ffbp_run *r, int s) { return r->row0[s + 1] - r->row0[s]; }

static stage_args stage_of(const sarbp_ffbp_run *r, int s)
{
    stage_args a;
    a.par = r->subs + r->sub0[s];
    a.kids = s > 0 ? r->subs + r->sub0[s - 1] : NULL;
    a.rows = r->rows + r->row0[s];
    a.pulses = r->pulses;
    a.src = NULL;
    a.dst = NULL;
    a.nbins = r->nbins;
    a.cubic = r->cubic;
    a.z = r->z;
    a.kc = r->kc;
    return a;
}

/* stage s's samples in buf[out] -> coefficients in buf[out], buf[1 - out]
 * as scratch, over its rows [ra, rb) */
static cudaError_t launch_prefilter(const sarbp_ffbp_run *r, int s, int out, long long ra, long long rb,
                                   cudaStream_t st)
{
    dim3 grid;
    cudaError_t e = row_grid(r, s, ra, rb, SARBP_FFBP_SEG, &grid);
    if (e != cudaSuccess) return e;
    if (grid.x == 0 || grid.y == 0) return cudaSuccess;
    stage_args a = stage_of(r, s);
    a.rows += ra;
    a.src = r->buf[out];
    a.dst = r->buf[1 - out];
    ffbp_prefilter_kernel<0><<<grid, SARBP_FFBP_SEG, 0, st>>>(a);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    a.src = r->buf[1 - out];
    a.dst = r->buf[out];
    ffbp_prefilter_kernel<1><<<grid, SARBP_FFBP_SEG, 0, st>>>(a);
    return cudaGetLastError();
}

/* stage 0 over its rows [ra, rb) */
static cudaError_t launch_stage0(const sarbp_ffbp_run *r, long long ra, long long rb, cudaStream_t st)
{
    dim3 grid;
    cudaError_t e = row_grid(r, 0, ra, rb, SARBP_FFBP_RUN, &grid);
    if (e != cudaSuccess) return e;
    if (grid.x == 0 || grid.y == 0) return cudaSuccess;
    if (r->np <= 0 || r->nbins < 2 || !r->prof || !r->pulses) return cudaErrorInvalidValue;
    stage_args a = stage_of(r, 0);
    a.rows += ra;
    a.src = r->prof;
    a.dst = r->buf[0];
    ffbp_stage0_kernel<<<grid, SARBP_FFBP_SEG, 0, st>>>(a);
    return cudaGetLastError();
}

/* stage s (>= 1): children in buf[(s - 1) & 1], parents into buf[s & 1] */
static cudaError_t launch_merge(const sarbp_ffbp_run *r, int s, cudaStream_t st)
{
    dim3 grid;
    cudaError_t e = row_grid(r, s, 0, stage_rows(r, s), SARBP_FFBP_RUN, &grid);
    if (e != cudaSuccess) return e;
    if (grid.x == 0 || grid.y == 0) return cudaSuccess;
    stage_args a = stage_of(r, s);
    a.src = r->buf[(s - 1) & 1];
    a.dst = r->buf[s & 1];
    ffbp_merge_kernel<<<grid, SARBP_FFBP_SEG, 0, st>>>(a);
    return cudaGetLastError();
}

/* The final sum over image rows [row0, row1) (whole tile rows, or the
 * image's last rows). */
static cudaError_t launch_final(const sarbp_ffbp_run *r, int row0, int row1, cudaStream_t st)
{
    const int s = r->nstages - 1;
    final_args a;
    a.subs = r->subs + r->sub0[s];
    const long long ns = r->sub0[s + 1] - r->sub0[s];
    if (ns <= 0 || ns > 2147483647LL || r->nx <= 0 || r->ny <= 0) return cudaErrorInvalidValue;
    a.nsubs = (int)ns;
    a.src = r->buf[sarbp_ffbp_last_buf(r->nstages)];
    a.img = r->img;
    a.nx = r->nx;
    a.ny = r->ny;
    a.x0 = r->x0;
    a.y0 = r->y0;
    a.dx = r->dx;
    a.dy = r->dy;
    a.z = r->z;
    a.kc = r->kc;
    const long long gx = ((long long)r->nx + SARBP_FFBP_TILE_X - 1) / SARBP_FFBP_TILE_X;
    const long long gy = ((long long)row1 - row0 + SARBP_FFBP_TILE_Y - 1) / SARBP_FFBP_TILE_Y;
    if (gx > 2147483647LL || gy > 65535 || row0 % SARBP_FFBP_TILE_Y) return cudaErrorInvalidValue;
    if (gy <= 0) return cudaSuccess;
    a.ty0 = row0 / SARBP_FFBP_TILE_Y;
    const dim3 block(SARBP_FFBP_TILE_X, FINAL_ROWS);
    ffbp_final_kernel<<<dim3((unsigned)gx, (unsigned)gy), block, 0, st>>>(a);
    return cudaGetLastError();
}

/* ---- dispatcher ------------------------------------------------------------ */

/* records mark k when marks are given */
static cudaError_t mark(void *const *marks, int k, cudaStream_t st)
{
    return marks ? cudaEventRecord((cudaEvent_t)marks[k], st) : cudaSuccess;
}

extern "C" int sarbp_ffbp_launch(const sarbp_ffbp_run *r, void *stream, void *const *marks)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (r->nstages < 1 || r->nstages > SARBP_FFBP_MAX_STAGES || r->final_chunks > SARBP_FFBP_MAX_CHUNKS ||
        !r->buf[0] || !r->buf[1] ||
        !r->img || !r->subs || !r->rows)
        return cudaErrorInvalidValue;
    cudaError_t e = r->stage0_done ? cudaSuccess : launch_stage0(r, 0, stage_rows(r, 0), st);
    if (e == cudaSuccess) e = mark(marks, 0, st);
    if (e == cudaSuccess && !r->stage0_done) e = launch_prefilter(r, 0, 0, 0, stage_rows(r, 0), st);
    if (e == cudaSuccess) e = mark(marks, 1, st);
    for (int s = 1; s < r->nstages && e == cudaSuccess; s++) {
        e = launch_merge(r, s, st);
        if (e == cudaSuccess) e = mark(marks, 2 * s, st);
        if (e == cudaSuccess) e = launch_prefilter(r, s, s & 1, 0, stage_rows(r, s), st);
        if (e == cudaSuccess) e = mark(marks, 2 * s + 1, st);
    }
    const int nch = r->final_chunks > 0 ? r->final_chunks : 1;
    for (int c = 0; c < nch && e == cudaSuccess; c++) {
        e = launch_final(r, sarbp_ffbp_chunk_row(r->ny, nch, c), sarbp_ffbp_chunk_row(r->ny, nch, c + 1), st);
        if (e == cudaSuccess) e = mark(marks, 2 * r->nstages + c, st);
    }
    return (int)e;
}

extern "C" int sarbp_ffbp_launch_stage0(const sarbp_ffbp_run *r, long long row_a, long long row_b,
                                        void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (r->nstages < 1 || r->nstages > SARBP_FFBP_MAX_STAGES || !r->buf[0] || !r->buf[1] || !r->subs ||
        !r->rows)
        return cudaErrorInvalidValue;
    cudaError_t e = launch_stage0(r, row_a, row_b, st);
    if (e == cudaSuccess) e = launch_prefilter(r, 0, 0, row_a, row_b, st);
    return (int)e;
}
