/* bench.c - sarbp bench: throughput and accuracy (SER) of the backprojectors on
 * a Gotcha-like simulated scene. This file is the command: its help, option
 * parsing and dispatch; the tables are printed by bench_cpu.c, bench_cuda.c and
 * bench_ffbp.c. Benchmarks are measurements, not tests. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "sarbp/ffbp.h"
#include "sarbp/terrain.h"

/* bench.h says what it is for; made and freed by cmd_bench. */
sarbp_session *bench_session;

/* The variants in the table marked for bench's default list: "v3,v3a,v4". */
static void bench_default_variants(char *buf, size_t n)
{
    size_t nv, k = 0;
    const sarbp_cuda_variant *vt = sarbp_cuda_variants(&nv);
    buf[0] = '\0';
    for (size_t i = 0; i < nv && k < n; i++)
        if (vt[i].flags & SARBP_CUDA_VARIANT_BENCH) {
            const int w = snprintf(buf + k, n - k, "%s%s", k ? "," : "", vt[i].name);
            if (w < 0) break;
            k += (size_t)w;
        }
}

static void help(void)
{
    char default_list[256];
    bench_default_variants(default_list, sizeof default_list);
    printf(
"usage: sarbp bench [--backend cpu|cuda] [options]\n"
"\n"
"Measures backprojection throughput on a Gotcha-like simulated scene (10 km,\n"
"45 degrees, X band 9.6 GHz, 640 MHz, point targets plus clutter) and the\n"
"accuracy of each path as SER against the exact image (FP64 direct summation\n"
"over every sample: no FFT, no interpolation) and against an FP64 image made\n"
"from the same range profiles (arithmetic only).\n"
"\n"
"  --backend B      cpu (default) or cuda\n"
"  --algorithm A    bp (default: direct backprojection, the tables below), ffbp,\n"
"                   autofocus, or a list (bp,ffbp); ffbp is fast factorized\n"
"                   backprojection, FP32.\n"
"                   cpu: against direct FP32 backprojection (below). cuda: at its\n"
"                   default parameters, cubic 4x: device time, equivalent Gbp/s,\n"
"                   SER against exact; then end to end through form, range\n"
"                   compression on the device and the image copied back: median\n"
"                   total of --reps runs after a cold one, equivalent Tbp/s, stage\n"
"                   split, SER against exact; autofocus: the cost of --autofocus\n"
"                   estimate (estimate, correction, formation) in direct\n"
"                   formations, with a 6 rad quadratic + 2.5 rad cubic error\n"
"                   injected, and its image against the uncorrupted pulses' image\n"
"  --problem P      narrow (default: 512 samples, the grid covers ~102 m, so pixels\n"
"                   are far finer than the resolution) or wide (2048 samples, a\n"
"                   480 m swath at 0.117 m, about half the resolution: 4x the bins)\n"
"  --grid NXxNY     image size (default 1024x1024 cpu, 4096x4096 cuda)\n"
"  --hill H,R       terrain: the grid's pixels and every target on a Gaussian hill\n"
"                   of height H m and radius R m at the centre (sarbp form\n"
"                   --heights); accuracy against the exact image on those pixels\n"
"  --spacing D      pixel spacing in metres (default: from the problem)\n"
"  --pulses N       pulses (default 512 cpu, 2048 cuda)\n"
"  --samples K      samples per pulse (default from the problem)\n"
"  --threads LIST   cpu: thread counts to run, e.g. 1,2 (default 1..all cores)\n"
"  --interp LIST    cuda: interpolation configurations KERNEL[:UPSAMPLE], e.g.\n"
"                   quadratic:8,cubic:4 (default quadratic:8,linear:8,cubic:4,cubic:8;\n"
"                   form's default is quadratic:8, cubic:4 with fp16 or mixed, --fast\n"
"                   linear:8); quadratic bins have one form (value FP32, slope and\n"
"                   curvature FP16, 16 bytes): its fp16 and mixed columns are n/a;\n"
"                   given, the end-to-end lines form with the first of them\n"
"  --variant LIST   cuda: comma-separated NAME[:TXxTY[:PPT[:MINB]]] (default %s);\n"
"                   MINB 12 or 16 compiles a 64-thread, 8-pixel kernel for that many\n"
"                   resident blocks per SM (-1: none), where the variant takes it;\n"
"                   the variants, what each changes and needs (* form's default):\n",
           default_list);
    cli_flush_stdout(); /* keeps errno if that overflowed the buffer and failed */
    size_t nv;
    const sarbp_cuda_variant *vt = sarbp_cuda_variants(&nv);
    for (size_t i = 0; i < nv; i++)
        printf("                   %-4s%s %s\n                         %s\n", vt[i].name,
               vt[i].flags & SARBP_CUDA_VARIANT_DEFAULT ? "*" : " ", vt[i].summary,
               vt[i].requires);
    printf(
"  --precision LIST cuda: any of fp32, fp16, mixed (default all three): profiles in\n"
"                   FP32, FP16, or mixed (cubic bins' A, B FP32 and C, D FP16: 24\n"
"                   bytes instead of 32; linear bins are FP32: no mixed row), side by\n"
"                   side (range and phase FP32 in all); the end-to-end lines run\n"
"                   form's default kernel of each precision\n"
"  --exact-window N cuda, ffbp: the exact image covers the central N x N pixels (default 64)\n"
"  --pulse-block N  cuda: pulses per streamed block in the end-to-end runs (default:\n"
"                   the back end's)\n"
"  --max-error-db E ffbp: the accuracy asked of the factorization, dB (default -60:\n"
"                   SER >= 60 dB against direct backprojection)\n"
"  --bp-rows N      ffbp: direct backprojection, the reference, forms only N rows at the\n"
"                   centre (default 256) and its time is scaled to the whole image\n"
"  --reps N         timed repetitions per configuration, median reported (default 5)\n"
"  --device D       cuda device N (default 0); a list such as 0,1 or 'all' adds a\n"
"                   scaling table: fp32 end to end on the first 1, 2, 4, ... devices\n"
"                   and on all of them (bands of rows, one thread each), each row\n"
"                   with its speed-up and its SER against the exact window, and the\n"
"                   per-device split of all\n"
"  --json           one JSON object per line instead of the table (undefined\n"
"                   figures are null, infinite ones the strings \"inf\", \"-inf\")\n"
"  -q, --quiet      no notes on stderr (errors still)\n"
"  -v, --verbose    also say how the scene was made and how long it took\n"
"\n"
"cpu: per interpolation kernel (quadratic 8x, the default; cubic 4x; linear 8x) and thread\n"
"count, the FP32 tiled path's Mbp/s (wall clock, median), per core, and per\n"
"core-second of process CPU time (steadier on a shared machine); its SER against\n"
"the FP64 image with the same kernel over the full image and against the exact\n"
"image (direct summation, precision exact) on the 64x64 window at the centre;\n"
"then the FP64 reference's Mbp/s (all cores, one run) and its own SER against\n"
"the exact image.\n"
"cuda: per interpolation configuration, kernel-only time (CUDA events, median),\n"
"Gbp/s (GFLOP/s = 43 flops per pair, seed 003's count, in --json), SER against\n"
"the exact image on the central window and against the FP64 GPU kernel v1 over\n"
"the full image, per precision with the fp16/fp32 and mixed/fp32 speed ratios;\n"
"then 'form' end to end with pulses streamed (default interpolation; median of --reps\n"
"after a cold run): total time split into layout, setup, read, transfer, range\n"
"compression, backprojection (device times), the wait for the fresh image's memory\n"
"and finish, its ratio to the kernel-only time, the device memory of pulse data and\n"
"image, and the total when forming into a reused image (sarbp_form_phd_into: no page\n"
"faults), for fp32, for fp16 with raw samples uploaded as FP16 and as FP32, and for\n"
"mixed.\n"
"ffbp (cpu): the factorization sarbp_ffbp_choose picks for --max-error-db (printed\n"
"with the predicted error), then per thread count: direct backprojection's time (from\n"
"--bp-rows rows, scaled), FFBP's time, its equivalent rate (pixels x pulses / time:\n"
"what direct backprojection would need to match it; labelled equivalent because FFBP\n"
"does far fewer operations), per core, the speed-up, SER against direct\n"
"backprojection (those rows) and against the exact image (--exact-window, default\n"
"64), and the predicted SER.\n");
}

/* NAME[:TXxTY[:PPT[:MINB]]]; the name is copied to name[16], which kc points to */
int bench_parse_variant(char *tok, char name[16], sarbp_cuda_kernel_cfg *kc)
{
    char *c1 = strchr(tok, ':');
    size_t len = c1 ? (size_t)(c1 - tok) : strlen(tok);
    if (len == 0 || len >= 16) return -1;
    memcpy(name, tok, len);
    name[len] = '\0';
    kc->variant = name;
    if (!c1) return 0;
    char *c2 = strchr(c1 + 1, ':');
    char tile[32] = "";
    size_t tl = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
    if (tl >= sizeof tile) return -1;
    memcpy(tile, c1 + 1, tl);
    size_t tx, ty;
    if (cli_parse_grid(tile, 1024, &tx, &ty)) return -1;
    kc->tile_x = (int)tx;
    kc->tile_y = (int)ty;
    if (!c2) return 0;
    char *c3 = strchr(c2 + 1, ':');
    if (c3) *c3 = '\0';
    int ppt, minb;
    int bad = cli_parse_int(c2 + 1, 1, 8, &ppt);
    if (c3) {
        *c3 = ':';
        bad = bad || cli_parse_int(c3 + 1, -1, 64, &minb);
        if (!bad) kc->minb = minb;
    }
    if (bad) return -1;
    kc->ppt = ppt;
    return 0;
}

/* "linear:8,cubic:4,..." (KERNEL[:UPSAMPLE]) */
static int parse_interps(const char *text, struct interp_cfg *c, int max)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) return -1;
    strcpy(buf, text);
    int n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == max) return -1;
        char *colon = strchr(t, ':');
        int up = 0;
        if (colon) {
            *colon = '\0';
            if (cli_parse_int(colon + 1, 1, 64, &up)) return -1;
        }
        if (sarbp_interp_parse(t, &c[n].interp)) return -1;
        c[n].upsample = up ? up : sarbp_interp_default_upsample(c[n].interp);
        n++;
    }
    return n;
}

int cmd_bench(int argc, char **argv)
{
    const char *cmd = "bench";
    static const struct option lo[] = {
        {"backend", required_argument, NULL, 'b'}, {"grid", required_argument, NULL, 'g'},
        {"spacing", required_argument, NULL, 's'}, {"pulses", required_argument, NULL, 'p'},
        {"samples", required_argument, NULL, 'k'}, {"threads", required_argument, NULL, 't'},
        {"variant", required_argument, NULL, 'V'}, {"reps", required_argument, NULL, 'r'},
        {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
        {"precision", required_argument, NULL, 'P'}, {"interp", required_argument, NULL, 'I'},
        {"problem", required_argument, NULL, 'Q'}, {"exact-window", required_argument, NULL, 'X'},
        {"pulse-block", required_argument, NULL, 'B'},
        {"algorithm", required_argument, NULL, 'A'}, {"max-error-db", required_argument, NULL, 'E'},
        {"bp-rows", required_argument, NULL, 'R'}, {"hill", required_argument, NULL, 'H'},
        CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0},
    };
    const char *backend = "cpu";
    size_t nx = 0, ny = 0, npulses = 0, nsamples = 512;
    double spacing = 0;
    int threads[64], nthreads = 0, reps = 5, json = 0;
    sarbp_bp_options devs;
    sarbp_bp_options_default(&devs);
    char variants[1024];
    bench_default_variants(variants, sizeof variants);
    struct interp_cfg ics[16] = {{SARBP_INTERP_QUADRATIC, 8}, {SARBP_INTERP_LINEAR, 8},
                                 {SARBP_INTERP_CUBIC, 4}, {SARBP_INTERP_CUBIC, 8}};
    int nic = 4, ics_given = 0, wide = 0;
    size_t exact_n = 64, pulse_block = 0;
    int prec[NPREC] = {1, 1, 1}; /* fp32, fp16, mixed */
    int algo_bp = 1, algo_ffbp = 0, algo_af = 0;
    double max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    size_t bp_rows = FFBP_REF_ROWS;
    int have_exact_n = 0, have_hill = 0;
    double hill[2] = {0, 0};
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "qvh", lo)) != -1) {
        switch (c) {
        case 'b':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return cli_usage(cmd, "unknown back end '%s' (cpu or cuda)", optarg);
            backend = optarg;
            break;
        case 'g':
            if (cli_parse_grid(optarg, (size_t)1 << 31, &nx, &ny))
                return cli_usage(cmd, "--grid wants NXxNY with positive sizes, not '%s'", optarg);
            break;
        case 's':
            if (cli_parse_double(optarg, 1e-6, 1e4, &spacing))
                return cli_usage(cmd, "--spacing wants metres from 1e-6 to 1e4, not '%s'", optarg);
            break;
        case 'p':
            if (cli_parse_size(optarg, 1, 1 << 24, &npulses))
                return cli_usage(cmd, "--pulses wants a whole number from 1 to %d, not '%s'", 1 << 24,
                                 optarg);
            break;
        case 'k':
            if (cli_parse_size(optarg, 2, 1 << 20, &nsamples))
                return cli_usage(cmd, "--samples wants a whole number from 2 to %d, not '%s'", 1 << 20,
                                 optarg);
            break;
        case 't':
            nthreads = cli_parse_int_list(optarg, ',', 1, 4096, threads, 1, 64);
            if (nthreads < 0)
                return cli_usage(cmd, "--threads wants up to 64 thread counts from 1 to 4096 "
                                 "like 1,2, not '%s'", optarg);
            break;
        case 'V': {
            if (strlen(optarg) >= sizeof variants) return cli_usage(cmd, "--variant list too long");
            strcpy(variants, optarg);
            char check[sizeof variants], name[16];
            strcpy(check, optarg);
            for (char *tok = strtok(check, ","); tok; tok = strtok(NULL, ",")) {
                sarbp_cuda_kernel_cfg kc = {0};
                if (bench_parse_variant(tok, name, &kc))
                    return cli_usage(cmd, "--variant wants NAME[:TXxTY[:PPT[:MINB]]] with tiles up "
                                     "to 1024, PPT 1 to 8, MINB -1 to 64, not '%s'", tok);
            }
            break;
        }
        case 'r':
            if (cli_parse_int(optarg, 1, 1000, &reps))
                return cli_usage(cmd, "--reps wants a whole number from 1 to 1000, not '%s'", optarg);
            break;
        case 'd': {
            char why[160];
            if (cli_parse_devices(optarg, &devs, why, sizeof why)) return cli_usage(cmd, "%s", why);
            break;
        }
        case 'j': json = 1; break;
        case 'P': {
            memset(prec, 0, sizeof prec);
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < NPREC && strcmp(t, bench_prec_names[k])) k++;
                if (k == NPREC)
                    return cli_usage(cmd, "--precision wants a list of fp32, fp16 and mixed, e.g. "
                                     "fp32,mixed, not '%s'", optarg);
                prec[k] = 1;
            }
            break;
        }
        case 'I':
            nic = parse_interps(optarg, ics, 16);
            ics_given = 1;
            if (nic < 1) return cli_usage(cmd, "--interp wants KERNEL[:UPSAMPLE],..., e.g. linear:8,cubic:4, not '%s'", optarg);
            break;
        case 'Q':
            if (!strcmp(optarg, "wide")) wide = 1;
            else if (strcmp(optarg, "narrow")) return cli_usage(cmd, "--problem wants narrow or wide, not '%s'", optarg);
            break;
        case 'B':
            if (cli_parse_size(optarg, 1, 1 << 20, &pulse_block)) return cli_usage(cmd, "bad --pulse-block '%s'", optarg);
            break;
        case 'X':
            if (cli_parse_size(optarg, 1, 1024, &exact_n)) return cli_usage(cmd, "bad --exact-window '%s'", optarg);
            have_exact_n = 1;
            break;
        case 'A': {
            algo_bp = algo_ffbp = algo_af = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "bp")) algo_bp = 1;
                else if (!strcmp(t, "ffbp")) algo_ffbp = 1;
                else if (!strcmp(t, "autofocus")) algo_af = 1;
                else return cli_usage(cmd, "--algorithm wants bp, ffbp, autofocus or a list of them, not '%s'",
                                      optarg);
            }
            break;
        }
        case 'E':
            if (cli_parse_double(optarg, -150, -10, &max_error_db))
                return cli_usage(cmd, "--max-error-db wants a number of dB from -150 to -10, not '%s'",
                                 optarg);
            break;
        case 'R':
            if (cli_parse_size(optarg, 1, (size_t)1 << 31, &bp_rows))
                return cli_usage(cmd, "--bp-rows wants a positive number of rows, not '%s'", optarg);
            break;
        case 'H':
            if (cli_parse_list(optarg, ',', hill, 2, 2) != 2 || !(fabs(hill[0]) <= 1000) || !(hill[1] > 0) ||
                !(hill[1] <= 1e5))
                return cli_usage(cmd, "--hill wants H,R (metres: height up to 1000, radius above 0), not '%s'",
                                 optarg);
            have_hill = 1;
            break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    if (optind < argc) return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    int cuda = !strcmp(backend, "cuda");
    if (!nx) nx = ny = cuda ? 4096 : 1024;
    if (!npulses) npulses = cuda ? 2048 : 512;
    /* wide: a swath of ~480 m (2048 samples: c / (2 df) = 480 m at 640 MHz)
     * at about half the range resolution, 0.117 m, so many more bins */
    if (wide && nsamples == 512) nsamples = 2048;
    if (spacing == 0) spacing = (wide ? 480.0 : 102.4) / (double)(nx > ny ? nx : ny);
    if (!nthreads)
        for (int t = 1; t <= sarbp_cpu_count() && nthreads < 64; t++) threads[nthreads++] = t;
    sarbp_grid g = {nx, ny, spacing, spacing, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_status st = sarbp_grid_validate(&g);
    if (st) return cli_usage(cmd, "%s", sarbp_error_detail());
    sarbp_phd *p = NULL;
    double t0 = sarbp_now_s();
    double *heights = NULL;
    if (have_hill) { /* the grid on the hill, the targets on it too */
        heights = malloc(g.nx * g.ny * sizeof *heights);
        if (!heights) return cli_fail(cmd, "out of memory for %zu x %zu heights", g.nx, g.ny);
        sarbp_hill_heights(&g, hill[0], hill[1], 0, 0, heights);
        g.height = heights;
    }
    st = bench_make_scene(npulses, nsamples, have_hill ? hill : NULL, &p);
    if (!st) st = sarbp_session_create(NULL, &bench_session);
    if (st) {
        sarbp_phd_free(p);
        return cli_fail_status(cmd, st);
    }
    cli_info(2, "sarbp: bench: simulated %zu pulses x %zu samples (204 targets) in %.2f s; "
             "grid %zu x %zu at %g m", npulses, nsamples, sarbp_now_s() - t0, g.nx, g.ny, g.dx);
    int rc = CLI_OK;
    if (cuda && algo_bp)
        rc = bench_cuda(p, &g, variants, prec, ics, nic, ics_given, exact_n, pulse_block, reps, &devs, json);
    if (cuda && algo_ffbp && rc == CLI_OK)
        rc = bench_cuda_ffbp(p, &g, exact_n, reps, max_error_db, devs.device, pulse_block, json);
    if (!cuda && algo_bp) rc = bench_cpu(p, &g, threads, nthreads, reps, json);
    if (!cuda && algo_ffbp && rc == CLI_OK)
        rc = bench_ffbp(p, &g, threads, nthreads, reps, max_error_db, bp_rows,
                        have_exact_n ? exact_n : EXACT_WINDOW, json);
    if (algo_af && rc == CLI_OK) rc = bench_autofocus(p, &g, cuda, devs.device, reps, json);
    sarbp_session_free(bench_session);
    bench_session = NULL;
    sarbp_phd_free(p);
    free(heights);
    return rc;
}
