/* cuda/plan_bp.c - the CUDA back end: cuFFT range compression and the
 * backprojection kernels of kernels/, with pulse blocks streamed.
 *
 * NSLOT slots of buffers (pinned host staging, raw samples, FFT scratch,
 * lerp-ready profiles, pulse table), each with its own stream, take the
 * blocks in turn: while block k-1 is backprojected, block k is read by the
 * caller, copied to the device and range-compressed on its own stream.
 * Backprojections are chained across the streams by events (they accumulate
 * into one image) and launched one block behind, so the device always has
 * the next one queued. The pass's last NSLOT blocks are held and run
 * together in row chunks; each chunk is copied back as soon as it is final,
 * while the later chunks compute ("last" by pulse position: the blocks
 * that end within NSLOT blocks of the aperture's end; finish launches
 * whatever is still held). Device memory is bounded by the block size and
 * the region, not by the number of pulses. A plan forms one region (a band
 * of whole tile rows) at a time; which bands, on which device, is the
 * partition layer's choice (form.c). With keep_pulses the profiles are
 * compressed straight into a resident store (with their pulse table and
 * FP16 bound), and later regions backproject them without samples.
 *
 * Range compression runs on the GPU. FREQ data: window and prefilter,
 * centring, zero-pad and fftshift in one pack pass, batched inverse cuFFT
 * over a 16-pulse scratch, then one pass to interpolation-ready bins. CHIRP
 * data: the block's echoes zero-padded, forward cuFFT, the matched filter
 * (window and prefilter in it) into the upsampled spectrum with the motion
 * compensation, inverse cuFFT, interpolation-ready bins. With --precision
 * fp16 the profiles are stored as FP16 with a power-of-two scale per block
 * (bp_kernels.h); raw samples may travel as FP16 too (raw_fp16). With
 * --precision mixed, cubic bins keep A and B in FP32 and C and D in FP16
 * (24 bytes a bin instead of 32), under the same per-block scale; linear
 * bins have no C, D and are FP32. */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_kernels.h"
#include "copy.h"
#include "internal.h"
#include "rc.h"
#include "device.h"
#include "backproject/plan.h"
#include "backproject/session_internal.h"
#include "backproject/ffbp/gpu_plan.h"
#include "core/half.h"
#include "core/sample_check.h"
#include "sarbp/bench.h"
#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"
#include "sarbp/progress.h"

#define CUDA_DEFAULT_BLOCK 256

/* The backprojection dispatcher, which may also refuse a launch whose
 * geometry breaks its variant's preconditions: the message is built here
 * (the kernels never print). */
#define BP_LAUNCH_TRY(cfg, a, stream)                                                    \
    do {                                                                                 \
        const int r_ = sarbp_bp_launch_kernel(cfg, a, stream);                           \
        if (r_ == SARBP_BP_EPRECOND) {                                                   \
            char w_[200] = "kernel launch precondition failed";                          \
            (void)sarbp_bp_launch_check(cfg, a, w_, sizeof w_);                          \
            return sarbp_error(SARBP_ERR_INVALID, "%s", w_);                             \
        }                                                                                \
        if (r_ != cudaSuccess)                                                           \
            return sarbp_error(r_ == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA, \
                               "sarbp_bp_launch_kernel(%s) failed at %s:%d: %s", #a,     \
                               __FILE__, __LINE__, cudaGetErrorString((cudaError_t)r_)); \
    } while (0)

struct slot {
    void *h_raw;             /* pinned [block][K] c32, or half2 (FREQ with raw_half) */
    sarbp_dpulse *h_pulses;  /* pinned [block] */
    size_t h_raw_n, h_pulses_n; /* their bytes */
    void *mem;               /* one device allocation, mem_bytes, holding the five below */
    size_t mem_bytes;
    void *d_raw;             /* [block][K] raw samples */
    void *d_fft;             /* [sub][nbins] c32 FFT scratch (CHIRP: sub = block) */
    void *d_spec;            /* CHIRP: [block][nmf] c32, the echoes' spectra */
    void *d_prof;            /* [block][nbins] interpolation-ready bins (bp_kernels.h); unused when kept */
    float *d_bound;          /* fp16, mixed: the block's magnitude bound */
    sarbp_dpulse *d_pulses;
    cufftHandle fft;         /* inverse, nbins, batch of sub pulses; one per slot (own work area) */
    cufftHandle fwd;         /* CHIRP: forward, nmf, batch of block pulses */
    int fft_ok, fwd_ok;
    cudaStream_t stream;
    cudaEvent_t ev[5];       /* last unit: before upload, uploaded, compressed, bp start, done */
    int pending;             /* ev[] recorded and not yet counted */
    int held;                /* its unit ends within NSLOT blocks of the aperture's end */
    int fresh;               /* its unit's profiles were compressed by it (not kept ones) */
    sarbp_bp_launch la;      /* the unit's backprojection, prepared by execute() */
};

#define NSLOT 3              /* pulse-block buffers: the last NSLOT blocks of a region are
                                backprojected together in ROW_CHUNKS row chunks so the
                                image copy back (about a third of the backprojection time
                                at 4096^2 x 2048) overlaps them */
#define ROW_CHUNKS 8

struct cuda_plan {
    sarbp_bp_plan base;      /* first: ops and common state (meta, grid, region, block) */
    sarbp_bp_config cfg;
    int device, half, raw_half, cubic;
    int mixed;               /* cubic bins with A, B FP32 and C, D FP16 (precision mixed), or
                                quadratic bins (A FP32, B, C FP16): bins_mixed */
    int scaled;              /* half or mixed: profiles carry a per-block scale (d_bound) */
    size_t kc;               /* FREQ: the sample at frequency index 0 (profiles centred) */
    size_t sub, K, nbins;
    size_t band_row0, band_ny; /* the current region */
    sarbp_rc_plan *rc;       /* CPU plan: window and filter tables, geometry */
    sarbp_profiles *hpr;     /* per-pulse geometry of one block */
    struct slot s[NSLOT];
    struct slot *pend[NSLOT]; /* units whose backprojections are not launched, oldest first */
    int npend;
    int next, have_prev;
    cudaEvent_t prev_bp;     /* last backprojection launched (any slot) */
    cudaEvent_t chunk_ev[ROW_CHUNKS];
    size_t chunk_row[ROW_CHUNKS + 1], nchunks; /* row chunks of the held units (region rows) */
    sarbp_cuda_rc_tables_t tab; /* azimuth and pack weights, CHIRP's matched filter (rc.h) */
    size_t nmf;              /* CHIRP: matched-filter FFT length */
    void *d_img;             /* [max_rows][nx] float2 (img_alloc bytes) */
    size_t img_alloc;
    double *d_height;        /* terrain: [max_rows][nx], the region's rows of the grid's heights */
    size_t fill_blocks;      /* blocks a launch needs to fill the device twice (16 a SM) */
    sarbp_d2h *copier;       /* the image's way back to the caller's memory */
    sarbp_cuda_device *dev;  /* the session's context of the device: memory, kept sets */
    sarbp_session *own;      /* a session of the plan's own, when it was given none */
    /* kept profiles of pulses [0, keep_pulses) */
    void *d_keep;            /* [keep][nbins] bins */
    sarbp_dpulse *d_keep_pulses, *h_keep_pulses; /* [keep] */
    float *d_keep_bound;     /* fp16, mixed: [keep], the bound of a unit at its first pulse */
    size_t *keep_unit0;      /* [keep]: the first pulse of the unit that compressed it */
    size_t setup_bytes[2];   /* pulse and image bytes, for stats */
    int kit_ready;           /* streams, events and cuFFT plans all made (give_kit) */
};

/* ---- streams, events and cuFFT plans kept for the next plan ---------------- */

/* Making them costs a plan about a millisecond (three cuFFT plans, three
 * streams, two dozen events) and destroying them about as much again; a
 * plan gives them back to its device's context in the session (device.h),
 * with its image band's device memory and its slots' buffers and pinned
 * staging, and the next plan on the device with the same FFT shapes takes
 * them (the memory if it fits). The context frees the set when a plan
 * needs its memory or the session ends. */
struct kit {
    size_t nbins, sub, nmf, fwd_batch; /* the FFT shapes (nmf 0: FREQ, no forward plans) */
    cufftHandle fft[NSLOT], fwd[NSLOT];
    int fft_ok[NSLOT], fwd_ok[NSLOT];  /* made (kit_make may stop half way) */
    cudaStream_t stream[NSLOT];
    cudaEvent_t ev[NSLOT][5], prev_bp, chunk_ev[ROW_CHUNKS];
    void *d_img;                       /* an image band's memory, img_bytes (or NULL) */
    size_t img_bytes;
    sarbp_cuda_rc_tables_t tab;        /* the range compression's tables' memory */
    void *slot_mem[NSLOT];             /* the slots' device buffers (slot_layout), slot_bytes each */
    size_t slot_bytes;
    void *h_raw[NSLOT], *h_pulses[NSLOT]; /* the slots' pinned staging (or NULL) */
    size_t h_raw_n, h_pulses_n;
};

/* Frees everything k holds (its device current); dev: where its memory
 * came from. */
static void kit_free(sarbp_cuda_device *dev, struct kit *k)
{
    for (int j = 0; j < NSLOT; j++) {
        if (k->fft_ok[j]) cufftDestroy(k->fft[j]);
        if (k->fwd_ok[j]) cufftDestroy(k->fwd[j]);
        if (k->stream[j]) cudaStreamDestroy(k->stream[j]);
        for (int e = 0; e < 5; e++)
            if (k->ev[j][e]) cudaEventDestroy(k->ev[j][e]);
        sarbp_cuda_dfree(dev, k->slot_mem[j]);
        sarbp_cuda_pinned_put(dev, k->h_raw[j]);
        sarbp_cuda_pinned_put(dev, k->h_pulses[j]);
    }
    if (k->prev_bp) cudaEventDestroy(k->prev_bp);
    for (int c = 0; c < ROW_CHUNKS; c++)
        if (k->chunk_ev[c]) cudaEventDestroy(k->chunk_ev[c]);
    sarbp_cuda_dfree(dev, k->d_img);
    sarbp_cuda_rc_tables_free(dev, &k->tab);
    memset(k, 0, sizeof *k);
}

/* A kept set's free function (device.h). */
static void kit_free_set(sarbp_cuda_device *dev, void *set)
{
    kit_free(dev, set);
    free(set);
}

/* Offsets in a slot's one allocation (slot_layout): raw samples, FFT
 * scratch, CHIRP spectra, bins, pulse table, bound. */
enum { SL_RAW, SL_FFT, SL_SPEC, SL_PROF, SL_PULSES, SL_BOUND, SL_N };

/* The bytes of a slot's buffers for blocks of `block` pulses of K samples
 * (raw_e bytes each), inverse FFTs of nbins in batches of sub, CHIRP
 * spectra of nmf (0: FREQ) and bins of prof_row bytes a pulse; each
 * buffer's offset into off[]. The bins are always there (a plan that keeps
 * every pulse's profiles does not use them). */
static size_t slot_layout(size_t block, size_t K, size_t raw_e, size_t sub, size_t nbins, size_t nmf,
                          size_t prof_row, size_t off[SL_N])
{
    const size_t size[SL_N] = {block * K * raw_e, sub * nbins * 8, block * nmf * 8, block * prof_row,
                               block * sizeof(sarbp_dpulse), sizeof(float)};
    size_t n = 0;
    for (int k = 0; k < SL_N; k++) {
        off[k] = n;
        n += (size[k] + 255) / 256 * 256;
    }
    return n;
}

/* A set on the current device for inverse FFTs of nbins bins in batches of
 * sub and (nmf > 0, CHIRP) forward FFTs of nmf in batches of block; *k is
 * left empty when this fails. */
static sarbp_status kit_make(struct kit *k, size_t nbins, size_t sub, size_t nmf, size_t block)
{
    memset(k, 0, sizeof *k);
    k->nbins = nbins;
    k->sub = sub;
    k->nmf = nmf;
    k->fwd_batch = nmf ? block : 0;
    int dims[1] = {(int)nbins}, fdims[1] = {(int)nmf};
    size_t ws = 0;
    cudaError_t ce = cudaSuccess;
    cufftResult fe = CUFFT_SUCCESS;
    for (int j = 0; j < NSLOT && !ce && !fe; j++) {
        ce = cudaStreamCreateWithFlags(&k->stream[j], cudaStreamNonBlocking);
        /* the last, the unit's backprojection done, is waited for while
         * kernels run: the waiting thread sleeps instead of spinning */
        for (int e = 0; e < 5 && !ce; e++)
            ce = cudaEventCreateWithFlags(&k->ev[j][e], e == 4 ? cudaEventBlockingSync : cudaEventDefault);
        if (!ce) fe = cufftCreate(&k->fft[j]);
        k->fft_ok[j] = !ce && !fe;
        if (!ce && !fe)
            fe = cufftMakePlanMany(k->fft[j], 1, dims, NULL, 1, dims[0], NULL, 1, dims[0], CUFFT_C2C,
                                   (int)sub, &ws);
        if (!ce && !fe && nmf) {
            fe = cufftCreate(&k->fwd[j]);
            k->fwd_ok[j] = !fe;
            if (!fe)
                fe = cufftMakePlanMany(k->fwd[j], 1, fdims, NULL, 1, fdims[0], NULL, 1, fdims[0],
                                       CUFFT_C2C, (int)block, &ws);
        }
    }
    if (!ce && !fe) ce = cudaEventCreateWithFlags(&k->prev_bp, cudaEventDisableTiming);
    for (int c = 0; c < ROW_CHUNKS && !ce && !fe; c++)
        ce = cudaEventCreateWithFlags(&k->chunk_ev[c], cudaEventDisableTiming | cudaEventBlockingSync);
    if (ce || fe) {
        kit_free(NULL, k); /* no memory yet */
        if (ce) return sarbp_error(ce == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA,
                                   "making the streams and events of a plan: %s", cudaGetErrorString(ce));
        return sarbp_error(fe == CUFFT_ALLOC_FAILED ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA,
                           "making the cuFFT plans of a plan: cuFFT error %d", (int)fe);
    }
    return SARBP_OK;
}

/* Moves set k into p's slots (p owns it; k is left empty). */
static void kit_install(struct cuda_plan *p, struct kit *k)
{
    for (int j = 0; j < NSLOT; j++) {
        struct slot *s = &p->s[j];
        s->fft = k->fft[j];
        s->fft_ok = 1;
        s->fwd = k->fwd[j];
        s->fwd_ok = p->nmf != 0;
        s->stream = k->stream[j];
        memcpy(s->ev, k->ev[j], sizeof s->ev);
        s->mem = k->slot_mem[j];
        s->mem_bytes = k->slot_mem[j] ? k->slot_bytes : 0;
        s->h_raw = k->h_raw[j];
        s->h_raw_n = k->h_raw[j] ? k->h_raw_n : 0;
        s->h_pulses = k->h_pulses[j];
        s->h_pulses_n = k->h_pulses[j] ? k->h_pulses_n : 0;
    }
    p->prev_bp = k->prev_bp;
    memcpy(p->chunk_ev, k->chunk_ev, sizeof p->chunk_ev);
    p->d_img = k->d_img;
    p->img_alloc = k->img_bytes;
    p->tab = k->tab;
    p->kit_ready = 1;
    memset(k, 0, sizeof *k);
}

/* Whether kept set k has plan p's FFT shapes (device_take's test). */
static int kit_fits(const void *set, const void *plan)
{
    const struct kit *k = set;
    const struct cuda_plan *p = plan;
    return k->nbins == p->nbins && k->sub == p->sub && k->nmf == p->nmf &&
           k->fwd_batch == (p->nmf ? p->base.block : 0);
}

/* Takes a kept set of p's shapes from its device's context into p (1), or
 * finds none (0). */
static int take_kit(struct cuda_plan *p)
{
    struct kit *k = sarbp_cuda_device_take(p->dev, SARBP_KEEP_BP, kit_fits, p);
    if (!k) return 0;
    kit_install(p, k);
    free(k); /* emptied by kit_install */
    return 1;
}

/* Gives p's set (idle: the device was synchronised) to its device's context
 * for the next plan, and clears it from p. */
static void give_kit(struct cuda_plan *p)
{
    if (!p->kit_ready || !p->dev) return;
    struct kit *k = calloc(1, sizeof *k);
    if (!k) return; /* p frees it all */
    k->nbins = p->nbins;
    k->sub = p->sub;
    k->nmf = p->nmf;
    k->fwd_batch = p->nmf ? p->base.block : 0;
    for (int j = 0; j < NSLOT; j++) {
        struct slot *s = &p->s[j];
        k->fft[j] = s->fft;
        k->fwd[j] = s->fwd;
        k->fft_ok[j] = s->fft_ok;
        k->fwd_ok[j] = s->fwd_ok;
        k->stream[j] = s->stream;
        memcpy(k->ev[j], s->ev, sizeof s->ev);
        s->fft_ok = s->fwd_ok = 0;
        s->stream = NULL;
        memset(s->ev, 0, sizeof s->ev);
        k->slot_mem[j] = s->mem;
        k->slot_bytes = s->mem_bytes;
        s->mem = NULL;
        k->h_raw[j] = s->h_raw;
        k->h_raw_n = s->h_raw_n;
        k->h_pulses[j] = (void *)s->h_pulses;
        k->h_pulses_n = s->h_pulses_n;
        s->h_raw = NULL;
        s->h_pulses = NULL;
    }
    k->prev_bp = p->prev_bp;
    memcpy(k->chunk_ev, p->chunk_ev, sizeof k->chunk_ev);
    k->d_img = p->d_img;
    k->img_bytes = p->d_img ? p->img_alloc : 0;
    p->d_img = NULL;
    k->tab = p->tab;
    memset(&p->tab, 0, sizeof p->tab);
    p->prev_bp = NULL;
    memset(p->chunk_ev, 0, sizeof p->chunk_ev);
    p->kit_ready = 0;
    const size_t tab_bytes = k->tab.waz_n + k->tab.w_n + k->tab.filt_n;
    sarbp_cuda_device_keep(p->dev, SARBP_KEEP_BP, k, k->img_bytes + NSLOT * k->slot_bytes + tab_bytes,
                           kit_free_set);
}

/* Waits for everything p queued: its slots' streams (the copier's jobs
 * return finished). Never the whole device: other forms may share it. */
static sarbp_status plan_sync(struct cuda_plan *p)
{
    cudaError_t first = cudaSuccess;
    for (int k = 0; k < NSLOT; k++) {
        if (!p->s[k].stream) continue;
        const cudaError_t e = cudaStreamSynchronize(p->s[k].stream);
        if (first == cudaSuccess) first = e;
    }
    CUDA_TRY(first);
    return SARBP_OK;
}

sarbp_status sarbp_cuda_check_device(int device)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return sarbp_error(SARBP_ERR_NODEVICE, "no usable CUDA device (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    if (device < 0 || device >= ndev)
        return sarbp_error(SARBP_ERR_NODEVICE, "there is no CUDA device %d (%d found)", device, ndev);
    return SARBP_OK;
}

static int cuda_available_dev(int device)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n > 0 && device < n;
}

int sarbp_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

/* SARBP_ERR_UNSUPPORTED unless variant v reads the profile format. */
static sarbp_status check_variant_format(const char *v, int mixed)
{
    const sarbp_cuda_variant *vt = sarbp_cuda_variant_find(v);
    if (!mixed || !vt || (vt->flags & SARBP_CUDA_VARIANT_MIXED)) return SARBP_OK;
    char names[128] = "";
    size_t nv, k = 0;
    const sarbp_cuda_variant *t = sarbp_cuda_variants(&nv);
    for (size_t i = 0; i < nv && k < sizeof names; i++)
        if (t[i].flags & SARBP_CUDA_VARIANT_MIXED) {
            const int w = snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", t[i].name);
            if (w < 0) break;
            k += (size_t)w;
        }
    return sarbp_error(SARBP_ERR_UNSUPPORTED,
                       "kernel variant %s does not read mixed profiles (precision mixed): use one of %s",
                       vt->name, names);
}

/* Whether bins of kernel k at precision prec are mixed (bp_kernels.h):
 * cubic at precision mixed, and the quadratic always (its one form: A FP32,
 * B, C FP16). The quadratic has no FP16 form: it would be no smaller. */
static sarbp_status bins_mixed(sarbp_precision prec, sarbp_interp k, int *mixed)
{
    if (k == SARBP_INTERP_QUADRATIC && prec == SARBP_FP16)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "quadratic interpolation has no fp16 form (its bins are 16 bytes with "
                           "the value in FP32): use fp32, or cubic with fp16");
    *mixed = k == SARBP_INTERP_QUADRATIC || (k == SARBP_INTERP_CUBIC && prec == SARBP_MIXED);
    return SARBP_OK;
}

void sarbp_cuda_options_default(sarbp_cuda_options *o)
{
    *o = (sarbp_cuda_options){0};
    o->precision = SARBP_FP32;
}

static void cuda_destroy(sarbp_bp_plan *bp)
{
    struct cuda_plan *p = (struct cuda_plan *)bp;
    cudaSetDevice(p->device);
    (void)plan_sync(p);
    give_kit(p); /* what it keeps is cleared from p */
    for (int k = 0; k < NSLOT; k++) {
        struct slot *s = &p->s[k];
        sarbp_cuda_pinned_put(p->dev, s->h_raw);
        sarbp_cuda_pinned_put(p->dev, s->h_pulses);
        sarbp_cuda_dfree(p->dev, s->mem);
        if (s->fft_ok) cufftDestroy(s->fft);
        if (s->fwd_ok) cufftDestroy(s->fwd);
        if (s->stream) cudaStreamDestroy(s->stream);
        for (int e = 0; e < 5; e++)
            if (s->ev[e]) cudaEventDestroy(s->ev[e]);
    }
    if (p->prev_bp) cudaEventDestroy(p->prev_bp);
    for (int c = 0; c < ROW_CHUNKS; c++)
        if (p->chunk_ev[c]) cudaEventDestroy(p->chunk_ev[c]);
    sarbp_cuda_rc_tables_free(p->dev, &p->tab);
    sarbp_cuda_dfree(p->dev, p->d_img);
    sarbp_cuda_dfree(p->dev, p->d_height);
    sarbp_d2h_destroy(p->copier);
    sarbp_cuda_dfree(p->dev, p->d_keep);
    sarbp_cuda_dfree(p->dev, p->d_keep_pulses);
    sarbp_cuda_dfree(p->dev, p->d_keep_bound);
    free(p->h_keep_pulses);
    free(p->keep_unit0);
    sarbp_rc_plan_free(p->rc);
    sarbp_profiles_free(p->hpr);
    sarbp_bp_plan_release(&p->base);
    sarbp_session_free(p->own); /* a plan's own session: nothing kept outlives it */
    free(p);
}

static size_t cuda_block(const sarbp_phd *meta, const sarbp_cuda_options *o)
{
    const size_t dflt = o->algorithm == SARBP_ALGO_FFBP ? SARBP_CUDA_FFBP_BLOCK : CUDA_DEFAULT_BLOCK;
    size_t b = o->pulse_block ? o->pulse_block : dflt;
    return b > meta->npulses ? meta->npulses : b;
}

/* The cuda FFBP plan's model (cuda/plan_ffbp.c): every pulse's FP32 profile,
 * the range compression's block buffers, cuFFT work and tables (a margin
 * without a session); and a run per band: its image, two polar buffers and tables. The polar
 * grids of a band cover its footprint, whose range extent stays the
 * image's width: they shrink far less than its rows (a 1-row band of a
 * 2048^2 grid at 2048 pulses: two buffers of 33 MiB against 126 MiB for
 * the whole grid), so no per-row share bounds them. The largest band of
 * d's region that fits m->budget is searched instead (each measure plans
 * the factorization of at most 64 bands on the host, sarbp_ffbp_cuda_run_bytes),
 * and its run counted in fixed: per_row is the image row alone, and
 * max_band_rows caps the layout's bands at the band measured. Every pulse's
 * profile is resident already, so keeping them for later bands costs
 * nothing more. */
static sarbp_status ffbp_memory(const sarbp_bp_desc *d, const sarbp_cuda_options *o, sarbp_cuda_device *dev,
                                size_t block, size_t nbins, size_t nmf, sarbp_plan_shape *m)
{
    const sarbp_phd *meta = d->meta;
    const size_t P = meta->npulses, N = d->region.nrows ? d->region.nrows : d->grid->ny;
    size_t rc_bytes = 0;
    SARBP_TRY(sarbp_cuda_ffbp_rc_memory(dev, meta, block, nbins, nmf, &rc_bytes));
    /* a session's budget bounds what sarbp_cuda_dmalloc counts, which this
     * counts exactly (and cuFFT's work areas besides, which it does not):
     * no margin, or budgets that the plan's own pieces fit would be
     * refused; without one the budget is free memory, and the context and
     * the allocations' rounding want one */
    const size_t margin = dev ? 0 : (size_t)32 << 20;
    const size_t f0 = P * nbins * sizeof(sarbp_c32) + rc_bytes + margin;
    m->per_row = d->grid->nx * sizeof(sarbp_c32);
    m->per_kept_pulse = 0;
    m->row_align = 1;
    sarbp_ffbp_params prm;
    SARBP_TRY(sarbp_bp_desc_ffbp(d, &prm));
    /* the geometry of every pulse, as the plan's (cffbp_setup) */
    sarbp_profiles *geo = NULL;
    SARBP_TRY(sarbp_profiles_alloc(P ? P : 1, 1, SARBP_FP32, &geo));
    geo->npulses = P;
    geo->interp = d->rc->interp;
    for (size_t i = 0; i < P; i++) sarbp_rc_pulse_geometry(meta, nbins, 0, i, geo, i);
    geo->nbins = nbins;
    const size_t row0 = d->region.nrows ? d->region.row0 : 0;
    /* bands of at most N rows (o->band_rows: at most those) */
    size_t hi = o->band_rows && o->band_rows < N ? o->band_rows : N, lo = 0, run = 0, run_lo = 0;
    sarbp_status st = sarbp_ffbp_cuda_run_bytes(geo, d->grid, &prm, row0, N, hi, &run);
    if (!st && (run > SIZE_MAX - f0 || f0 + run > m->budget)) {
        /* the largest band that fits, by bisection on measured needs: lo
         * fits (0: none found yet), hi does not */
        while (!st && hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            size_t b = 0;
            st = sarbp_ffbp_cuda_run_bytes(geo, d->grid, &prm, row0, N, mid, &b);
            if (st) break;
            if (b <= SIZE_MAX - f0 && f0 + b <= m->budget) {
                lo = mid;
                run_lo = b;
            } else {
                hi = mid;
            }
        }
        if (!st && lo == 0) /* none fits: one row's need, for the layout's refusal */
            st = sarbp_ffbp_cuda_run_bytes(geo, d->grid, &prm, row0, N, 1, &run_lo);
        m->max_band_rows = lo ? lo : 1;
        run = run_lo;
    } else {
        m->max_band_rows = hi;
    }
    sarbp_profiles_free(geo);
    SARBP_TRY(st);
    /* fixed + max_band_rows x per_row is the band's measured need */
    const size_t image = m->max_band_rows * m->per_row;
    m->fixed = f0 + (run > image ? run - image : 0);
    return SARBP_OK;
}

/* The device memory of a plan, without allocating: NSLOT slots (raw block,
 * FFT scratch and cuFFT work areas, profiles, pulse table), the tables, a
 * margin; per image row; per kept pulse. */
sarbp_status sarbp_cuda_plan_shape(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                    size_t budget, sarbp_plan_shape *m)
{
    *m = (sarbp_plan_shape){0};
    const sarbp_phd *meta = d->meta;
    const int freq = meta->domain == SARBP_DOMAIN_FREQ, half = o->precision == SARBP_FP16;
    const int raw_half = half && o->raw_fp16 && freq;
    const int cubic = d->rc->interp == SARBP_INTERP_CUBIC;
    int mixed = 0;
    SARBP_TRY(bins_mixed(o->precision, d->rc->interp, &mixed));
    const size_t block = cuda_block(meta, o), K = meta->nsamples;
    sarbp_bp_config cfg = {o->variant, o->tile_x, o->tile_y, o->ppt, 0};
    char why[160];
    if (sarbp_bp_config_resolve(&cfg, why, sizeof why)) return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    sarbp_rc_plan *rc = NULL;
    SARBP_TRY(sarbp_rc_plan_create(meta, d->rc, SARBP_FP32, block, &rc));
    const size_t nbins = sarbp_rc_plan_nbins(rc), nmf = freq ? 0 : sarbp_rc_plan_chirp_nfft(rc);
    sarbp_rc_plan_free(rc);
    if (nbins > SARBP_GPU_MAX_BINS)
        return sarbp_error(SARBP_ERR_INVALID, "%zu range bins per pulse is too many for the GPU", nbins);
    const size_t sub = freq ? (block < 16 ? block : 16) : block;
    sarbp_cuda_device *dev = NULL;
    if (d->session) SARBP_TRY(sarbp_session_device(d->session, o->device, &dev));
    else SARBP_TRY(sarbp_cuda_check_device(o->device));
    CUDA_TRY(cudaSetDevice(o->device));
    size_t fft_work = 0, ws = 0;
    CUFFT_TRY(sarbp_cuda_fft_work(dev, (int)nbins, (int)sub, &ws));
    fft_work += ws;
    if (!freq) {
        CUFFT_TRY(sarbp_cuda_fft_work(dev, (int)nmf, (int)block, &ws));
        fft_work += ws;
    }
    const size_t raw_e = raw_half ? 4 : 8, prof_row = SARBP_ROW_BYTES(half, mixed, cubic, nbins);
    const size_t per_slot = block * (K * raw_e + prof_row + sizeof(sarbp_dpulse)) +
                            sub * nbins * 8 + block * nmf * 8 + 256;
    m->fixed = NSLOT * (per_slot + fft_work) + meta->npulses * 4 + K * 8 + ((size_t)32 << 20);
    /* the image row, and on terrain its heights (FP64: the kernels take each
     * pixel's offset from its tile's height) */
    m->per_row = d->grid->nx * (sizeof(sarbp_c32) + (d->grid->height ? sizeof(double) : 0));
    m->per_kept_pulse = prof_row + sizeof(sarbp_dpulse) + sizeof(float);
    /* the session's room on the device (what it keeps for a next plan
     * counts as room: a plan frees it before it allocates past it), or
     * without a session most of the free memory */
    size_t room = 0, total_b = 0;
    if (dev) {
        SARBP_TRY(sarbp_cuda_device_room(dev, &room));
    } else {
        CUDA_TRY(cudaMemGetInfo(&room, &total_b));
        if (!budget) budget = (size_t)(0.85 * (double)room);
    }
    m->budget = budget && budget < room ? budget : room;
    m->row_align = (size_t)cfg.tile_y;
    m->in_place = 0;
    m->block = block;
    if (o->algorithm == SARBP_ALGO_FFBP) SARBP_TRY(ffbp_memory(d, o, dev, block, nbins, nmf, m));
    return SARBP_OK;
}

static sarbp_status setup(struct cuda_plan *p, const sarbp_rc_params *rc)
{
    const sarbp_phd *m = p->base.meta;
    const size_t block = p->base.block, keep = p->base.keep_pulses;
    const int freq = m->domain == SARBP_DOMAIN_FREQ;
    CUDA_TRY(cudaSetDevice(p->device));
    SARBP_TRY(sarbp_rc_plan_create(m, rc, SARBP_FP32, block, &p->rc));
    p->nbins = sarbp_rc_plan_nbins(p->rc);
    p->cubic = sarbp_rc_plan_interp(p->rc) == SARBP_INTERP_CUBIC;
    p->scaled = p->half || p->mixed;
    p->kc = (size_t)(-sarbp_rc_plan_first_freq_index(p->rc));
    if (p->nbins > SARBP_GPU_MAX_BINS)
        return sarbp_error(SARBP_ERR_INVALID, "%zu range bins per pulse is too many for the GPU", p->nbins);
    /* host profiles: only their per-pulse geometry is used (one bin) */
    SARBP_TRY(sarbp_profiles_alloc(block, 1, SARBP_FP32, &p->hpr));
    /* FFT scratch: FREQ 16 pulses per slot; CHIRP the whole block (the
     * FP16 bound of a block must be known before any of its bins) */
    p->sub = freq ? (block < 16 ? block : 16) : block;
    p->nmf = freq ? 0 : sarbp_rc_plan_chirp_nfft(p->rc);

    const size_t raw_e = p->raw_half ? 4 : 8; /* bytes per raw element */
    const size_t prof_row = SARBP_ROW_BYTES(p->half, p->mixed, p->cubic, p->nbins);
    size_t *pb = &p->setup_bytes[0];
    if (!take_kit(p)) { /* streams, events and cuFFT plans of an earlier plan, or new ones */
        struct kit k;
        SARBP_TRY(kit_make(&k, p->nbins, p->sub, p->nmf, block));
        kit_install(p, &k);
    }
    for (int k = 0; k < NSLOT; k++) {
        size_t ws = 0;
        CUFFT_TRY(cufftGetSize(p->s[k].fft, &ws));
        *pb += ws;
        if (!freq) CUFFT_TRY(cufftGetSize(p->s[k].fwd, &ws));
        *pb += freq ? 0 : ws;
    }
    /* the image band: a kept set's when it holds enough and not twice too
     * much, else new */
    const size_t img_need = p->base.max_rows * p->base.grid.nx * sizeof(sarbp_c32);
    SARBP_TRY(sarbp_cuda_dmalloc_reuse(p->dev, &p->d_img, &p->img_alloc, img_need));
    p->setup_bytes[1] += img_need;
    if (p->base.grid.height) {
        const size_t h_need = p->base.max_rows * p->base.grid.nx * sizeof(double);
        SARBP_TRY(sarbp_cuda_dmalloc(p->dev, (void **)&p->d_height, h_need, NULL));
        p->setup_bytes[1] += h_need;
    }
    SARBP_TRY(sarbp_d2h_create(p->dev, &p->copier));
    for (int k = 0; k < NSLOT; k++) {
        struct slot *s = &p->s[k];
        /* pinned staging: a kept set's when its size is right, else the
         * device context's (pinned once per session) */
        const size_t raw_n = block * p->K * raw_e, pulses_n = block * sizeof(sarbp_dpulse);
        if (s->h_raw && s->h_raw_n != raw_n) {
            sarbp_cuda_pinned_put(p->dev, s->h_raw);
            s->h_raw = NULL;
        }
        if (s->h_pulses && s->h_pulses_n != pulses_n) {
            sarbp_cuda_pinned_put(p->dev, s->h_pulses);
            s->h_pulses = NULL;
        }
        if (!s->h_raw) SARBP_TRY(sarbp_cuda_pinned_get(p->dev, raw_n, &s->h_raw));
        if (!s->h_pulses) SARBP_TRY(sarbp_cuda_pinned_get(p->dev, pulses_n, (void **)&s->h_pulses));
        s->h_raw_n = raw_n;
        s->h_pulses_n = pulses_n;
        /* its buffers: a kept set's allocation when it fits, else one new */
        size_t off[SL_N];
        const size_t need = slot_layout(block, p->K, raw_e, p->sub, p->nbins, p->nmf, prof_row, off);
        SARBP_TRY(sarbp_cuda_dmalloc_reuse(p->dev, &s->mem, &s->mem_bytes, need));
        *pb += need;
        char *b = s->mem;
        s->d_raw = b + off[SL_RAW];
        s->d_fft = b + off[SL_FFT];
        s->d_spec = freq ? NULL : b + off[SL_SPEC];
        s->d_prof = b + off[SL_PROF];
        s->d_pulses = (sarbp_dpulse *)(b + off[SL_PULSES]);
        s->d_bound = p->scaled ? (float *)(b + off[SL_BOUND]) : NULL;
        CUFFT_TRY(cufftSetStream(s->fft, s->stream));
        if (!freq) CUFFT_TRY(cufftSetStream(s->fwd, s->stream));
    }
    if (keep) {
        SARBP_TRY(sarbp_cuda_dmalloc(p->dev, &p->d_keep, keep * prof_row, pb));
        SARBP_TRY(sarbp_cuda_dmalloc(p->dev, (void **)&p->d_keep_pulses, keep * sizeof(sarbp_dpulse), pb));
        if (p->scaled) SARBP_TRY(sarbp_cuda_dmalloc(p->dev, (void **)&p->d_keep_bound, keep * sizeof(float), pb));
        p->h_keep_pulses = malloc(keep * sizeof(sarbp_dpulse));
        p->keep_unit0 = malloc(keep * sizeof(size_t));
        if (!p->h_keep_pulses || !p->keep_unit0) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }

    /* uploaded and waited for on a slot's stream: a plan waits for its own
     * streams only, never the device (forms sharing it run side by side) */
    SARBP_TRY(sarbp_cuda_rc_tables(p->dev, m, p->rc, p->s[0].stream, &p->tab, pb));
    return SARBP_OK;
}

/* Adds a finished unit's device times to stats (may be NULL). */
static sarbp_status count_slot(struct slot *s, sarbp_stage_times *stats)
{
    if (!s->pending) return SARBP_OK;
    float up, rc, bp; /* ev[2] -> ev[3] is the wait for the previous backprojection */
    CUDA_TRY(cudaEventElapsedTime(&up, s->ev[0], s->ev[1]));
    CUDA_TRY(cudaEventElapsedTime(&rc, s->ev[1], s->ev[2]));
    CUDA_TRY(cudaEventElapsedTime(&bp, s->ev[3], s->ev[4]));
    if (stats) {
        stats->transfer_s += 1e-3 * up;
        stats->rc_s += 1e-3 * rc;
        stats->bp_s += 1e-3 * bp;
    }
    s->pending = 0;
    return SARBP_OK;
}

/* Copies rows [r0, r1) of the current region to dst (the region's rows,
 * row-major) once event ev (may be NULL) has passed. */
static sarbp_status rows_to_host(struct cuda_plan *p, sarbp_c32 *dst, size_t r0, size_t r1, cudaEvent_t ev)
{
    const size_t nx = p->base.grid.nx;
    return sarbp_d2h_copy(p->copier, dst + r0 * nx, (sarbp_c32 *)p->d_img + r0 * nx,
                          (r1 - r0) * nx * sizeof(sarbp_c32), ev);
}

/* Launches slot t's backprojection over the whole region on its stream,
 * after the previous one (they accumulate into one image). */
static sarbp_status launch_bp(struct cuda_plan *p, struct slot *t)
{
    if (p->have_prev) CUDA_TRY(cudaStreamWaitEvent(t->stream, p->prev_bp, 0));
    CUDA_TRY(cudaEventRecord(t->ev[3], t->stream));
    BP_LAUNCH_TRY(&p->cfg, &t->la, t->stream);
    CUDA_TRY(cudaEventRecord(p->prev_bp, t->stream));
    CUDA_TRY(cudaEventRecord(t->ev[4], t->stream));
    t->pending = 1;
    p->have_prev = 1;
    p->nchunks = 0; /* row chunks recorded before this are not final any more */
    return SARBP_OK;
}

/* The held units t[0..n-1] (the last one last) in row chunks aligned to the
 * tiles: chunk c of the region is final once all of them have run over it,
 * so its copy back (rows_to_host) overlaps the later chunks. */
static sarbp_status launch_last(struct cuda_plan *p, struct slot **t, int n)
{
    struct slot *b = t[n - 1];
    cudaStream_t st = b->stream;
    size_t step = (p->band_ny + ROW_CHUNKS - 1) / ROW_CHUNKS;
    /* no chunk so thin that its launches leave the device half idle: on a
     * 1024^2 image, eight chunks of 128 rows were 256 blocks a launch, a
     * tenth of what an H100 holds, and the backprojection ran 3.5x its
     * whole-image time */
    const size_t bx = (p->base.grid.nx + (size_t)p->cfg.tile_x - 1) / (size_t)p->cfg.tile_x;
    const size_t min_rows = (p->fill_blocks + bx - 1) / bx * (size_t)p->cfg.tile_y;
    if (step < min_rows) step = min_rows;
    step = (step + p->cfg.tile_y - 1) / p->cfg.tile_y * p->cfg.tile_y;
    if (p->have_prev) CUDA_TRY(cudaStreamWaitEvent(st, p->prev_bp, 0));
    for (int k = 0; k < n - 1; k++) /* their profiles are ready */
        CUDA_TRY(cudaStreamWaitEvent(st, t[k]->ev[2], 0));
    CUDA_TRY(cudaEventRecord(b->ev[3], st));
    const size_t nchunks = (p->band_ny + step - 1) / step;
    for (size_t c = 0; c <= nchunks; c++)
        p->chunk_row[c] = c * step < p->band_ny ? c * step : p->band_ny;
    for (size_t c = 0; c < nchunks; c++) {
        for (int k = 0; k < n; k++) {
            sarbp_bp_launch ac = t[k]->la;
            ac.d_img = (sarbp_c32 *)p->d_img + p->chunk_row[c] * p->base.grid.nx;
            if (ac.d_height) ac.d_height = p->d_height + p->chunk_row[c] * p->base.grid.nx;
            ac.ny = (int)(p->chunk_row[c + 1] - p->chunk_row[c]);
            ac.y0 = sarbp_grid_y(&p->base.grid, p->band_row0 + p->chunk_row[c]);
            BP_LAUNCH_TRY(&p->cfg, &ac, st);
        }
        CUDA_TRY(cudaEventRecord(p->chunk_ev[c], st));
    }
    CUDA_TRY(cudaEventRecord(p->prev_bp, st));
    for (int k = 0; k < n; k++) {
        if (k < n - 1) /* their time is inside b's interval: count it once */
            CUDA_TRY(cudaEventRecord(t[k]->ev[3], st));
        CUDA_TRY(cudaEventRecord(t[k]->ev[4], st));
        t[k]->pending = 1;
    }
    p->have_prev = 1;
    p->nchunks = nchunks;
    return SARBP_OK;
}

/* Launches the pending units, oldest first, each over the whole region. */
static sarbp_status launch_pending(struct cuda_plan *p)
{
    for (int k = 0; k < p->npend; k++) SARBP_TRY(launch_bp(p, p->pend[k]));
    p->npend = 0;
    return SARBP_OK;
}

/* Launches what is still pending (in row chunks when every pending unit is
 * held). */
static sarbp_status launch_rest(struct cuda_plan *p)
{
    int all_held = p->npend > 0 && p->band_ny >= 2 * (size_t)p->cfg.tile_y;
    for (int k = 0; k < p->npend; k++) all_held &= p->pend[k]->held;
    if (all_held) {
        SARBP_TRY(launch_last(p, p->pend, p->npend));
        p->npend = 0;
    }
    return launch_pending(p);
}

/* Launches what is still pending and copies the region into dst: chunk by
 * chunk as each is final. */
static sarbp_status band_to_host(struct cuda_plan *p, sarbp_c32 *dst)
{
    SARBP_TRY(launch_rest(p));
    if (p->nchunks) { /* one copy job: each piece waits for its chunk */
        const size_t row_bytes = p->base.grid.nx * sizeof(sarbp_c32);
        size_t ends[ROW_CHUNKS];
        for (size_t c = 0; c < p->nchunks; c++) ends[c] = p->chunk_row[c + 1] * row_bytes;
        SARBP_TRY(sarbp_d2h_copy_chunks(p->copier, dst, p->d_img, (int)p->nchunks, ends, p->chunk_ev));
        p->nchunks = 0;
    } else {
        SARBP_TRY(plan_sync(p));
        SARBP_TRY(rows_to_host(p, dst, 0, p->band_ny, NULL));
    }
    SARBP_TRY(plan_sync(p));
    return SARBP_OK;
}

static sarbp_status cuda_region(sarbp_bp_plan *bp, sarbp_region r)
{
    struct cuda_plan *p = (struct cuda_plan *)bp;
    CUDA_TRY(cudaSetDevice(p->device));
    /* whatever the last region still had in flight is dropped with it */
    SARBP_TRY(launch_pending(p));
    SARBP_TRY(plan_sync(p));
    p->nchunks = 0;
    p->band_row0 = r.row0;
    p->band_ny = r.nrows;
    /* the region is cleared on a slot stream and its first backprojection
     * waits for it (prev_bp), like every later one */
    cudaStream_t st = p->s[p->next].stream;
    CUDA_TRY(cudaMemsetAsync(p->d_img, 0, r.nrows * p->base.grid.nx * sizeof(sarbp_c32), st));
    if (p->d_height) { /* the region's heights, before its first backprojection (prev_bp) */
        const sarbp_grid *g = &p->base.grid;
        const size_t stride = g->height_stride ? g->height_stride : g->nx;
        CUDA_TRY(cudaMemcpy2DAsync(p->d_height, g->nx * sizeof(double), g->height + (g->row0 + r.row0) * stride,
                                   stride * sizeof(double), g->nx * sizeof(double), r.nrows,
                                   cudaMemcpyHostToDevice, st));
    }
    CUDA_TRY(cudaEventRecord(p->prev_bp, st));
    p->have_prev = 1;
    return SARBP_OK;
}

/* A lower bound of the range from any of the pulses to any pixel of rows
 * [row0, row0 + ny) of the grid: the distance to the band's rectangle. */
static double min_range(const sarbp_dpulse *h, size_t np, const sarbp_grid *g, size_t row0, size_t ny)
{
    double x0 = sarbp_grid_x(g, 0), x1 = sarbp_grid_x(g, g->nx - 1);
    double y0 = sarbp_grid_y(g, row0), y1 = sarbp_grid_y(g, row0 + ny - 1);
    if (x0 > x1) { double t = x0; x0 = x1; x1 = t; }
    if (y0 > y1) { double t = y0; y0 = y1; y1 = t; }
    double best = INFINITY;
    for (size_t j = 0; j < np; j++) {
        double dx = h[j].ax < x0 ? x0 - h[j].ax : h[j].ax > x1 ? h[j].ax - x1 : 0;
        double dy = h[j].ay < y0 ? y0 - h[j].ay : h[j].ay > y1 ? h[j].ay - y1 : 0;
        /* on terrain a pixel may sit at any height: the horizontal distance
         * bounds it (a pass over the heights for a tighter bound would cost
         * more than it buys: terrain tiles choose their series themselves,
         * backproject.cu, and nothing else of theirs reads this) */
        double dz = g->height ? 0 : g->zc - h[j].az;
        double r = sqrt(dx * dx + dy * dy + dz * dz);
        if (r < best) best = r;
    }
    return best;
}

/* The launch-wide bounds the dispatcher uses (v4's window, the series order). */
static void launch_bounds(sarbp_bp_launch *a, const sarbp_dpulse *h, size_t np, const sarbp_grid *g,
                          size_t row0, size_t ny)
{
    a->max_inv_dr = 0;
    a->max_k = 0;
    for (size_t j = 0; j < np; j++) {
        if (h[j].inv_dr > a->max_inv_dr) a->max_inv_dr = h[j].inv_dr;
        double k = 2.0 * fabs(h[j].fref) / 299792458.0;
        if (k > a->max_k) a->max_k = k;
    }
    a->min_range = min_range(h, np, g, row0, ny);
}

/* Stages a block on the host: pulse table, and raw samples (FP16 when asked:
 * scaled by a power of two so the block's largest component sits below
 * 2^14). Returns the factor that undoes the raw scaling. */
static sarbp_status stage_block(struct cuda_plan *p, struct slot *s, size_t p0, size_t np,
                                const sarbp_c32 *samples, float *raw_inv)
{
    const sarbp_phd *m = p->base.meta;
    *raw_inv = 1.0f;
    for (size_t j = 0; j < np; j++) sarbp_rc_pulse_geometry(m, p->nbins, 0, p0 + j, p->hpr, j);
    if (p->raw_half) {
        double sc = sarbp_half_block_scale(samples, np * p->K, 16384.0);
        if (sc > 0x1p100) sc = 0x1p100; /* samples below 1e-26: kept as far as FP16 reaches */
        if (sc == 0.0)
            return sarbp_error(SARBP_ERR_INVALID, "pulses %zu to %zu hold non-finite samples", p0,
                               p0 + np - 1);
        sarbp_c32_to_half2(samples, np * p->K, (float)sc, s->h_raw);
        *raw_inv = (float)(1.0 / sc);
    } else if (samples != s->h_raw) {
        /* the caller's samples, checked as they are copied; staged ones
         * were written here and checked by their writer (cuda_stage) */
        const size_t nf = 2 * np * p->K;
        const size_t bad = sarbp_samples_copy_checked(s->h_raw, (const float *)samples, nf);
        if (bad < nf) return sarbp_phd_bad_sample(m, p0, bad);
    }
    for (size_t j = 0; j < np; j++) s->h_pulses[j] = sarbp_cuda_rc_pulse(m, p->hpr, j);
    return SARBP_OK;
}

/* Range compression of the slot's uploaded block into prof (with the pulse
 * table d_pulses on the device and, FP16 or mixed, the bound at bound). */
static sarbp_status compress_block(struct cuda_plan *p, struct slot *s, size_t p0, size_t np, float raw_inv,
                                   void *prof, const sarbp_dpulse *d_pulses, float *bound)
{
    const sarbp_cuda_rc rc = {p->K, p->nbins, p->kc, p->nmf, p->base.block, p->sub, p->tab.w,
                              p->tab.filt, p->tab.waz, s->d_fft, s->d_spec, s->fft, s->fwd, s->stream};
    const sarbp_cuda_rc_out o = {prof, 1, p->half, p->cubic, p->mixed, p->scaled ? bound : NULL};
    return sarbp_cuda_rc_compress(&rc, s->d_raw, p->raw_half, raw_inv, p0, np, d_pulses, &o);
}

/* One unit of at most block pulses [p0, p0 + np): from samples (compressed
 * here, into the kept store when the plan keeps them) or, samples NULL,
 * from kept profiles of one compressed unit. Backprojections run one unit
 * behind: the previous unit's goes to the device before this one is
 * staged. Units that end within NSLOT blocks of the aperture's end are
 * held and run together in row chunks (launch_last) when the last arrives,
 * or at finish. */
static sarbp_status cuda_unit(struct cuda_plan *p, size_t p0, size_t np, const sarbp_c32 *samples,
                              sarbp_stage_times *stats)
{
    const size_t end = p->base.meta->npulses, block = p->base.block;
    const int chunkable = p->band_ny >= 2 * (size_t)p->cfg.tile_y;
    const int held = chunkable && p0 + np + (NSLOT - 1) * block >= end;
    struct slot *s = &p->s[p->next];
    p->next = (p->next + 1) % NSLOT;
    /* only held units stay pending (at most NSLOT, this one included), and
     * never one whose slot this unit takes */
    int launch = !held || p->npend >= NSLOT;
    for (int k = 0; k < p->npend; k++) launch |= !p->pend[k]->held || p->pend[k] == s;
    if (!samples) /* kept profiles: those compressed by pending units must be backprojected first */
        for (int k = 0; k < p->npend; k++) launch |= p->pend[k]->fresh;
    if (launch) SARBP_TRY(launch_pending(p));
    CUDA_TRY(cudaEventSynchronize(s->ev[4])); /* the slot's buffers are free again */
    SARBP_TRY(count_slot(s, stats));

    const int keep = p0 + np <= p->base.keep_pulses;
    const size_t prof_row = SARBP_ROW_BYTES(p->half, p->mixed, p->cubic, p->nbins);
    void *prof = keep ? (char *)p->d_keep + p0 * prof_row : s->d_prof;
    sarbp_dpulse *d_pulses = keep ? p->d_keep_pulses + p0 : s->d_pulses;
    const sarbp_dpulse *h_pulses = keep ? p->h_keep_pulses + p0 : s->h_pulses;
    float *bound = !p->scaled ? NULL : keep ? p->d_keep_bound + (samples ? p0 : p->keep_unit0[p0])
                                            : s->d_bound;
    if (samples) {
        float raw_inv;
        SARBP_TRY(stage_block(p, s, p0, np, samples, &raw_inv));
        const size_t raw_bytes = np * p->K * (p->raw_half ? 4 : 8);
        CUDA_TRY(cudaEventRecord(s->ev[0], s->stream));
        CUDA_TRY(cudaMemcpyAsync(d_pulses, s->h_pulses, np * sizeof(sarbp_dpulse),
                                 cudaMemcpyHostToDevice, s->stream));
        CUDA_TRY(cudaMemcpyAsync(s->d_raw, s->h_raw, raw_bytes, cudaMemcpyHostToDevice, s->stream));
        CUDA_TRY(cudaEventRecord(s->ev[1], s->stream));
        SARBP_TRY(compress_block(p, s, p0, np, raw_inv, prof, d_pulses, bound));
        CUDA_TRY(cudaEventRecord(s->ev[2], s->stream));
        if (keep) {
            memcpy(p->h_keep_pulses + p0, s->h_pulses, np * sizeof(sarbp_dpulse));
            for (size_t j = 0; j < np; j++) p->keep_unit0[p0 + j] = p0;
            memset(p->base.kept + p0, 1, np);
        }
    } else {
        for (int e = 0; e < 3; e++) CUDA_TRY(cudaEventRecord(s->ev[e], s->stream));
    }
    s->held = held;
    s->fresh = samples != NULL;
    s->la = (sarbp_bp_launch){
        prof, d_pulses, (int)np, (int)p->nbins, p->d_img, (int)p->base.grid.nx,
        (int)p->band_ny, sarbp_grid_x(&p->base.grid, 0), sarbp_grid_y(&p->base.grid, p->band_row0),
        p->base.grid.dx, p->base.grid.dy, p->base.grid.zc, p->d_height, p->half, p->cubic, p->mixed, bound,
        0, 0, 0, 0,
    };
    launch_bounds(&s->la, h_pulses, np, &p->base.grid, p->band_row0, p->band_ny);
    if (p->npend >= NSLOT) return sarbp_error(SARBP_ERR_INTERNAL, "too many pending pulse blocks");
    p->pend[p->npend++] = s;
    if (p0 + np == end) { /* the aperture's last unit */
        if (held) {
            SARBP_TRY(launch_last(p, p->pend, p->npend));
            p->npend = 0;
        } else {
            SARBP_TRY(launch_pending(p));
        }
    }
    return SARBP_OK;
}

/* The pinned buffer of the slot the next block goes through, once its
 * previous block's upload is done; with FP16 raw samples (converted as
 * they are staged) the base's host block. */
static sarbp_status cuda_stage(sarbp_bp_plan *bp, size_t p0, size_t np, sarbp_c32 **buf)
{
    (void)p0;
    (void)np;
    struct cuda_plan *p = (struct cuda_plan *)bp;
    *buf = NULL;
    if (p->raw_half) return SARBP_OK;
    struct slot *s = &p->s[p->next];
    CUDA_TRY(cudaSetDevice(p->device));
    CUDA_TRY(cudaEventSynchronize(s->ev[1])); /* its last upload (none yet: at once) */
    *buf = s->h_raw;
    return SARBP_OK;
}

static sarbp_status cuda_execute(sarbp_bp_plan *bp, size_t p0, size_t np, const sarbp_c32 *samples,
                                 sarbp_stage_times *stats)
{
    struct cuda_plan *p = (struct cuda_plan *)bp;
    CUDA_TRY(cudaSetDevice(p->device));
    const size_t block = p->base.block;
    for (size_t q = p0; q < p0 + np;) {
        size_t n = p0 + np - q < block ? p0 + np - q : block;
        if (!samples) /* kept: one launch per compressed unit (one FP16 or mixed bound) */
            for (size_t j = 1; j < n; j++)
                if (p->keep_unit0[q + j] != p->keep_unit0[q]) {
                    n = j;
                    break;
                }
        SARBP_TRY(cuda_unit(p, q, n, samples ? samples + (q - p0) * p->K : NULL, stats));
        q += n;
    }
    return SARBP_OK;
}

static sarbp_status cuda_finish(sarbp_bp_plan *bp, sarbp_c32 *out, sarbp_stage_times *stats)
{
    struct cuda_plan *p = (struct cuda_plan *)bp;
    double t0 = sarbp_now_s();
    CUDA_TRY(cudaSetDevice(p->device));
    SARBP_TRY(band_to_host(p, out));
    for (int k = 0; k < NSLOT; k++) SARBP_TRY(count_slot(&p->s[k], stats));
    if (stats) stats->finish_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static const sarbp_bp_plan_ops cuda_ops = {cuda_stage, cuda_execute, cuda_region,
                                            cuda_finish, cuda_destroy};

sarbp_status sarbp_cuda_plan_create(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                    sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    double t0 = sarbp_now_s();
    if (o->algorithm == SARBP_ALGO_FFBP) {
        SARBP_TRY(sarbp_cuda_check_device(o->device));
        return sarbp_cuda_ffbp_plan_create(d, o, out, stats);
    }
    if (o->precision != SARBP_FP32 && o->precision != SARBP_FP16 && o->precision != SARBP_MIXED)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "the cuda back end does fp32, fp16 and mixed; fp64 is the cpu reference");
    SARBP_TRY(sarbp_grid_validate(d->grid));
    if (d->grid->nx > (1u << 30) || d->grid->ny > (1u << 30))
        return sarbp_error(SARBP_ERR_INVALID, "grid of %zu x %zu is too large for the GPU kernels",
                           d->grid->nx, d->grid->ny);
    SARBP_TRY(sarbp_cuda_check_device(o->device));
    struct cuda_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->device = o->device;
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o->device) != cudaSuccess || sms < 1)
        sms = 132;
    p->fill_blocks = (size_t)sms * 16 * 2;
    sarbp_status st = sarbp_bp_plan_init(&p->base, &cuda_ops, d);
    if (!st) st = sarbp_cuda_plan_device(d->session, o->device, &p->own, &p->dev);
    if (st) {
        cuda_destroy(&p->base);
        return st;
    }
    const sarbp_phd *meta = d->meta;
    p->half = o->precision == SARBP_FP16;
    st = bins_mixed(o->precision, d->rc->interp, &p->mixed);
    if (st) {
        cuda_destroy(&p->base);
        return st;
    }
    p->raw_half = p->half && o->raw_fp16 && meta->domain == SARBP_DOMAIN_FREQ;
    p->K = meta->nsamples;
    p->cfg.variant = o->variant;
    p->cfg.tile_x = o->tile_x;
    p->cfg.tile_y = o->tile_y;
    p->cfg.ppt = o->ppt;
    char why[160];
    if (sarbp_bp_config_resolve(&p->cfg, why, sizeof why)) {
        cuda_destroy(&p->base);
        return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    }
    st = check_variant_format(p->cfg.variant, p->mixed && d->rc->interp == SARBP_INTERP_CUBIC);
    if (st) {
        cuda_destroy(&p->base);
        return st;
    }
    p->base.block = cuda_block(meta, o);
    st = setup(p, d->rc);
    if (!st) st = cuda_region(&p->base, d->region);
    if (st) {
        cuda_destroy(&p->base);
        return st;
    }
    if (stats) {
        stats->pulse_bytes = p->setup_bytes[0];
        stats->image_bytes = p->setup_bytes[1];
        stats->setup_s += sarbp_now_s() - t0;
    }
    *out = &p->base;
    return SARBP_OK;
}

/* ---- benchmarking ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_bufs {
    void *d_y, *d_prof, *d_img;
    double *d_height;
    float *d_bound;
    sarbp_dpulse *d_pulses, *h_pulses;
    cudaEvent_t e0, e1;
    double *times;
};

static void bench_free(struct bench_bufs *b)
{
    cudaFree(b->d_y);
    cudaFree(b->d_prof);
    cudaFree(b->d_img);
    cudaFree(b->d_height);
    cudaFree(b->d_bound);
    cudaFree(b->d_pulses);
    free(b->h_pulses);
    if (b->e0) cudaEventDestroy(b->e0);
    if (b->e1) cudaEventDestroy(b->e1);
    free(b->times);
}

static sarbp_status bench_run(struct bench_bufs *b, const sarbp_profiles *pr, const sarbp_grid *g,
                              const sarbp_cuda_kernel_cfg *kc, int reps, double *median_ms,
                              sarbp_c32 *img)
{
    sarbp_bp_config cfg = {kc->variant, kc->tile_x, kc->tile_y, kc->ppt, kc->minb};
    char why[160];
    if (sarbp_bp_config_resolve(&cfg, why, sizeof why)) return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    CUDA_TRY(cudaSetDevice(kc->device));
    size_t np = pr->npulses, nb = pr->nbins, npix = g->nx * g->ny;
    CUDA_TRY(cudaMalloc(&b->d_y, np * nb * sizeof(sarbp_c32)));
    const int cubic = pr->interp == SARBP_INTERP_CUBIC;
    if (kc->mixed && (kc->half || pr->interp == SARBP_INTERP_LINEAR))
        return sarbp_error(SARBP_ERR_INVALID, "mixed profiles are cubic or quadratic, and not fp16 too");
    int mixed = 0;
    SARBP_TRY(bins_mixed(kc->half ? SARBP_FP16 : kc->mixed ? SARBP_MIXED : SARBP_FP32, pr->interp,
                         &mixed));
    SARBP_TRY(check_variant_format(cfg.variant, mixed && cubic));
    const int scaled = kc->half || mixed;
    CUDA_TRY(cudaMalloc(&b->d_prof, np * SARBP_ROW_BYTES(kc->half, mixed, cubic, nb)));
    CUDA_TRY(cudaMalloc((void **)&b->d_bound, sizeof(float)));
    CUDA_TRY(cudaMemset(b->d_bound, 0, sizeof(float)));
    CUDA_TRY(cudaMalloc(&b->d_img, npix * sizeof(sarbp_c32)));
    CUDA_TRY(cudaMalloc((void **)&b->d_pulses, np * sizeof(sarbp_dpulse)));
    b->h_pulses = malloc(np * sizeof(sarbp_dpulse));
    b->times = malloc((size_t)(reps > 0 ? reps : 1) * sizeof(double));
    if (!b->h_pulses || !b->times) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < np; j++) {
        const double *a = pr->pos + 3 * j;
        b->h_pulses[j] = (sarbp_dpulse){a[0], a[1], a[2], pr->r0[j], pr->rstart[j], 1.0 / pr->dr[j],
                                        pr->fref[j], 0};
    }
    CUDA_TRY(cudaMemcpy(b->d_pulses, b->h_pulses, np * sizeof(sarbp_dpulse), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(b->d_y, pr->data32, np * nb * sizeof(sarbp_c32), cudaMemcpyHostToDevice));
    if (scaled) LAUNCH_TRY(sarbp_rc_maxabs(b->d_y, np * nb, b->d_bound, NULL));
    LAUNCH_TRY(sarbp_rc_interp_ready(b->d_y, b->d_prof, (int)np, (int)nb, cubic, mixed,
                                     scaled ? b->d_bound : NULL, NULL));
    CUDA_TRY(cudaEventCreate(&b->e0));
    CUDA_TRY(cudaEventCreate(&b->e1));
    if (g->height) { /* terrain: the grid's heights (a whole grid) */
        const size_t stride = g->height_stride ? g->height_stride : g->nx;
        CUDA_TRY(cudaMalloc((void **)&b->d_height, npix * sizeof(double)));
        CUDA_TRY(cudaMemcpy2D(b->d_height, g->nx * sizeof(double), g->height + g->row0 * stride,
                              stride * sizeof(double), g->nx * sizeof(double), g->ny, cudaMemcpyHostToDevice));
    }
    sarbp_bp_launch a = {b->d_prof, b->d_pulses, (int)np, (int)nb, b->d_img, (int)g->nx, (int)g->ny,
                         sarbp_grid_x(g, 0), sarbp_grid_y(g, 0), g->dx, g->dy, g->zc, b->d_height,
                         kc->half, cubic, mixed, b->d_bound, 0, 0, 0, 0};
    launch_bounds(&a, b->h_pulses, np, g, 0, g->ny);
    if (sarbp_bp_launch_check(&cfg, &a, why, sizeof why)) return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    if (reps < 1) reps = 1;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        CUDA_TRY(cudaMemset(b->d_img, 0, npix * sizeof(sarbp_c32)));
        CUDA_TRY(cudaEventRecord(b->e0, NULL));
        BP_LAUNCH_TRY(&cfg, &a, NULL);
        CUDA_TRY(cudaEventRecord(b->e1, NULL));
        CUDA_TRY(cudaEventSynchronize(b->e1));
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, b->e0, b->e1));
        if (r >= 0) b->times[r] = ms;
    }
    qsort(b->times, (size_t)reps, sizeof(double), cmp_double);
    *median_ms = reps % 2 ? b->times[reps / 2] : 0.5 * (b->times[reps / 2 - 1] + b->times[reps / 2]);
    if (img) CUDA_TRY(cudaMemcpy(img, b->d_img, npix * sizeof(sarbp_c32), cudaMemcpyDeviceToHost));
    return SARBP_OK;
}

sarbp_status sarbp_cuda_bench_kernel(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_cuda_kernel_cfg *kc, int reps, double *median_ms,
                                     sarbp_c32 *img)
{
    if (pr->precision != SARBP_FP32 || !pr->data32)
        return sarbp_error(SARBP_ERR_INVALID, "kernel benchmarks take FP32 profiles");
    if (!cuda_available_dev(kc->device)) return sarbp_error(SARBP_ERR_NODEVICE, "no usable CUDA device");
    struct bench_bufs b;
    memset(&b, 0, sizeof b);
    sarbp_status st = bench_run(&b, pr, g, kc, reps, median_ms, img);
    bench_free(&b);
    return st;
}

sarbp_status sarbp_cuda_device_info(int device, char *name, size_t n, int *sm_count,
                                    int *clock_mhz, int *mem_clock_mhz)
{
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    snprintf(name, n, "%s", prop.name);
    int v = 0;
    *sm_count = prop.multiProcessorCount;
    CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device));
    *clock_mhz = v / 1000;
    CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device));
    *mem_clock_mhz = v / 1000;
    return SARBP_OK;
}
