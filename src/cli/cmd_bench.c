/* cmd_bench.c - sarbp bench: throughput (pixel-pulse pairs per second) and
 * accuracy (SER against FP64) of the backprojectors on a Gotcha-like
 * simulated scene. Benchmarks are measurements, not tests. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(void)
{
    printf(
"usage: sarbp bench [--backend cpu|cuda] [options]\n"
"\n"
"Measures backprojection throughput on a Gotcha-like simulated scene (10 km,\n"
"45 degrees, X band 9.6 GHz, 640 MHz, point targets plus clutter) and the\n"
"accuracy of each fast path as SER against an FP64 image.\n"
"\n"
"  --backend B      cpu (default) or cuda\n"
"  --grid NXxNY     image size (default 1024x1024 cpu, 4096x4096 cuda)\n"
"  --spacing D      pixel spacing in metres (default: the grid covers ~102 m)\n"
"  --pulses N       pulses (default 512 cpu, 2048 cuda)\n"
"  --samples K      samples per pulse (default 512; 8x upsampling gives 4096 bins)\n"
"  --threads LIST   cpu: thread counts to run, e.g. 1,2 (default 1..all cores)\n"
"  --variant LIST   cuda: comma-separated NAME[:TXxTY[:PPT[:MINB]]] (default: a sweep of\n"
"                   v2, v3, v3a and v4 configurations); names: v1 (FP64, one pixel\n"
"                   per thread), v2 (tiled, exact formula), v3 (tiled, series; the\n"
"                   default), v3a (v3 with a float-float phase), v4 (v3 with range\n"
"                   bins staged in shared memory); MINB 12 or 16 compiles a 64-thread,\n"
"                   8-pixel kernel for that many resident blocks per SM (-1: none)\n"
"  --precision LIST cuda: fp32, fp16 or fp32,fp16 (default): profiles in FP32 or\n"
"                   FP16 (range and phase FP32 in both), side by side\n"
"  --reps N         timed repetitions per configuration, median reported (default 5)\n"
"  --device N       cuda device (default 0)\n"
"  --json           one JSON object per line instead of the table (undefined\n"
"                   figures are null, infinite ones the strings \"inf\", \"-inf\")\n"
"  -q, --quiet      no notes on stderr (errors still)\n"
"  -v, --verbose    also say how the scene was made and how long it took\n"
"\n"
"cpu: FP32 Mbp/s per thread count (FP64, the reference loop, always uses every\n"
"core, on a quarter of the pulses); FP32 SER against FP64 on the same grid.\n"
"cuda: kernel-only time (CUDA events, median), Gbp/s (GFLOP/s = 43 flops per pair,\n"
"seed 003's count, in --json), SER against the FP64 GPU kernel v1 over the full\n"
"image (v1 is itself checked against the CPU FP64 reference on a 64x64 window),\n"
"per precision with the fp16/fp32 speed ratio; then 'form' end to end with pulses\n"
"streamed: total time split into setup, read, transfer, range compression,\n"
"backprojection (device times) and finish, and the device memory of pulse data\n"
"and image, for fp32 and for fp16 with raw samples uploaded as FP16 and as FP32.\n");
}

static double ser_db(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)r[i].re - t[i].re, di = (double)r[i].im - t[i].im;
        s += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

/* JSON members: ,"key":value with NaN as null (cli_json_num); the first
 * member of an object passes first = 1. */
static void jnum(const char *key, double v)
{
    printf(",\"%s\":", key);
    cli_json_num(v);
}

static void jstr(const char *key, const char *v, int first)
{
    printf("%s\"%s\":", first ? "{" : ",", key);
    cli_json_str(v);
}

static sarbp_status make_scene(size_t npulses, size_t nsamples, sarbp_phd **out)
{
    sarbp_target *cl = NULL;
    size_t nc = 200;
    SARBP_TRY(sarbp_targets_clutter(nc, 45, -30, 0, 11, &cl));
    sarbp_target *all = malloc((nc + 4) * sizeof *all);
    if (!all) {
        free(cl);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    memcpy(all, cl, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8}, {40.1, -44.4, 0, 3}};
    memcpy(all + nc, bright, sizeof bright);
    free(cl);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.nsamples = nsamples;
    sp.targets = all;
    sp.ntargets = nc + 4;
    sarbp_status st = sarbp_simulate(&sp, out);
    free(all);
    return st;
}

static sarbp_status compress(const sarbp_phd *p, sarbp_precision prec, sarbp_profiles **out)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_rc_plan *plan;
    SARBP_TRY(sarbp_rc_plan_create(p, &rc, prec, p->npulses, &plan));
    sarbp_status st = sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), prec, out);
    if (!st) st = sarbp_rc_execute(plan, 0, p->npulses, p->data, *out);
    sarbp_rc_plan_free(plan);
    return st;
}

static int bench_cpu(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
                     int json)
{
    const char *cmd = "bench";
    sarbp_profiles *p32 = NULL, *p64 = NULL;
    sarbp_status st = compress(p, SARBP_FP32, &p32);
    if (!st) st = compress(p, SARBP_FP64, &p64);
    size_t npix = g->nx * g->ny;
    sarbp_c32 *img32 = calloc(npix, sizeof *img32);
    sarbp_c64 *img64 = calloc(npix, sizeof *img64);
    sarbp_c32 *ref32 = calloc(npix, sizeof *ref32);
    if (!st && (!img32 || !img64 || !ref32)) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    /* FP64 on a quarter of the pulses per thread count keeps the run short;
     * rates are per pair, so comparable */
    if (!json) {
        printf("cpu back end: %zu x %zu pixels, %zu pulses, %zu bins (%d cores)\n", g->nx, g->ny,
               p->npulses, p32 ? p32->nbins : 0, sarbp_cpu_count());
        printf("%8s %14s %14s %18s %10s\n", "threads", "fp32 Mbp/s", "fp32 /core",
               "fp64 Mbp/s (all)", "SER dB");
    }
    for (int k = 0; !st && k < nthreads; k++) {
        memset(img32, 0, npix * sizeof *img32);
        double t0 = sarbp_now_s();
        st = sarbp_bp_cpu_fp32(p32, g, threads[k], img32);
        double t32 = sarbp_now_s() - t0;
        size_t np_full = p64->npulses;
        p64->npulses = np_full / 4 ? np_full / 4 : 1;
        memset(img64, 0, npix * sizeof *img64);
        t0 = sarbp_now_s();
        if (!st) st = sarbp_bp_cpu_fp64(p64, g, img64);
        double t64 = sarbp_now_s() - t0;
        double r64 = (double)npix * p64->npulses / t64 / 1e6;
        p64->npulses = np_full;
        double ser = NAN;
        if (!st && k == 0) { /* accuracy once, on all pulses */
            memset(img64, 0, npix * sizeof *img64);
            st = sarbp_bp_cpu_fp64(p64, g, img64);
            for (size_t i = 0; i < npix; i++)
                ref32[i] = (sarbp_c32){(float)img64[i].re, (float)img64[i].im};
            ser = ser_db(img32, ref32, npix);
        }
        double r32 = (double)npix * p->npulses / t32 / 1e6;
        if (st) break;
        if (json) {
            jstr("backend", "cpu", 1);
            printf(",\"threads\":%d", threads[k]);
            jnum("fp32_mbps", r32);
            jnum("fp32_mbps_per_core", r32 / threads[k]);
            jnum("fp64_mbps", r64);
            jnum("ser_db", ser);
            printf("}\n");
        } else
            printf("%8d %14.1f %14.1f %18.1f %10.1f\n", threads[k], r32, r32 / threads[k], r64, ser);
        cli_flush_stdout();
    }
    sarbp_profiles_free(p32);
    sarbp_profiles_free(p64);
    free(img32);
    free(img64);
    free(ref32);
    return st ? cli_fail_status(cmd, st) : CLI_OK;
}

/* NAME[:TXxTY[:PPT[:MINB]]]; the name is copied to name[16], which kc points to */
static int parse_variant(char *tok, char name[16], sarbp_cuda_kernel_cfg *kc)
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

static int bench_cuda(const sarbp_phd *p, const sarbp_grid *g, char *variants, const int *prec,
                      int reps, int device, int json)
{
    const char *cmd = "bench";
    char name[128];
    int sms, clk, mclk;
    sarbp_status st = sarbp_cuda_device_info(device, name, sizeof name, &sms, &clk, &mclk);
    if (st) return cli_fail_status(cmd, st);
    sarbp_profiles *p32 = NULL;
    st = compress(p, SARBP_FP32, &p32);
    if (st) return cli_fail_status(cmd, st);
    size_t npix = g->nx * g->ny;
    double pairs = (double)npix * p->npulses;
    const double prof_mib = (double)p32->npulses * p32->nbins * 16 / 1048576.0;
    sarbp_c32 *ref = malloc(npix * sizeof *ref), *img = malloc(npix * sizeof *img);
    if (!ref || !img) {
        sarbp_profiles_free(p32);
        free(ref);
        free(img);
        return cli_fail(cmd, "out of memory for %zu x %zu images", g->nx, g->ny);
    }
    /* reference: the FP64 kernel over the full image, checked on a window
     * against the CPU FP64 reference */
    sarbp_cuda_kernel_cfg rc = {"v1", 0, 0, 0, device, 0, 0};
    double ms_ref;
    st = sarbp_cuda_bench_kernel(p32, g, &rc, 1, &ms_ref, ref);
    double ser_v1_cpu = NAN;
    if (!st) {
        sarbp_profiles *p64 = NULL;
        st = compress(p, SARBP_FP64, &p64);
        sarbp_grid w = *g;
        w.nx = w.ny = 64;
        size_t x0 = g->nx / 2 - (g->nx >= 64 ? 32 : g->nx / 2), y0 = g->ny / 2 - (g->ny >= 64 ? 32 : g->ny / 2);
        if (g->nx < 64) w.nx = g->nx;
        if (g->ny < 64) w.ny = g->ny;
        w.xc = sarbp_grid_x(g, x0) + 0.5 * (double)(w.nx - 1) * g->dx;
        w.yc = sarbp_grid_y(g, y0) + 0.5 * (double)(w.ny - 1) * g->dy;
        sarbp_c64 *c64 = calloc(w.nx * w.ny, sizeof *c64);
        sarbp_c32 *c32 = malloc(w.nx * w.ny * sizeof *c32), *g32 = malloc(w.nx * w.ny * sizeof *g32);
        if (!st && c64 && c32 && g32) {
            st = sarbp_bp_cpu_fp64(p64, &w, c64);
            for (size_t iy = 0; iy < w.ny; iy++)
                for (size_t ix = 0; ix < w.nx; ix++) {
                    c32[iy * w.nx + ix] = (sarbp_c32){(float)c64[iy * w.nx + ix].re, (float)c64[iy * w.nx + ix].im};
                    g32[iy * w.nx + ix] = ref[(y0 + iy) * g->nx + x0 + ix];
                }
            ser_v1_cpu = ser_db(g32, c32, w.nx * w.ny);
        }
        free(c64);
        free(c32);
        free(g32);
        sarbp_profiles_free(p64);
    }
    if (st) {
        free(ref);
        free(img);
        sarbp_profiles_free(p32);
        return cli_fail_status(cmd, st);
    }
    if (!json) {
        printf("device: %s, %d SMs, %d MHz SM clock, %d MHz memory clock\n", name, sms, clk, mclk);
        printf("problem: %zu x %zu pixels (%.4f m), %zu pulses, %zu bins, 10 km, 45 deg, X band\n",
               g->nx, g->ny, g->dx, p->npulses, p32->nbins);
        printf("reference: FP64 kernel v1 (%.1f Gbp/s), SER against CPU FP64 on a 64x64 window %.1f dB\n",
               pairs / ms_ref / 1e6, ser_v1_cpu);
        printf("profiles on the device: fp32 %.1f MiB (float4 per bin), fp16 %.1f MiB (half4 per bin)\n",
               prof_mib, 0.5 * prof_mib);
        printf("%-18s %9s %9s %7s   %9s %9s %7s   %7s\n", "variant", "fp32 ms", "Gbp/s", "SER dB",
               "fp16 ms", "Gbp/s", "SER dB", "16/32");
    } else {
        jstr("device", name, 1);
        printf(",\"sms\":%d,\"clock_mhz\":%d,\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,\"bins\":%zu", sms,
               clk, g->nx, g->ny, p->npulses, p32->nbins);
        jnum("v1_gbps", pairs / ms_ref / 1e6);
        jnum("v1_vs_cpu_fp64_ser_db", ser_v1_cpu);
        printf("}\n");
    }
    cli_flush_stdout();
    int rc_out = CLI_OK;
    for (char *tok = strtok(variants, ","); tok; tok = strtok(NULL, ",")) {
        sarbp_cuda_kernel_cfg kc = {NULL, 0, 0, 0, device, 0, 0};
        char vname[16];
        if (parse_variant(tok, vname, &kc)) {
            fprintf(stderr, "sarbp: bench: bad variant '%s' (NAME[:TXxTY[:PPT[:MINB]]])\n", tok);
            rc_out = CLI_FAIL;
            continue;
        }
        double gbps[2] = {NAN, NAN};
        if (!json) printf("%-18s", tok);
        for (int h = 0; h < 2; h++) {
            if (!prec[h]) {
                if (!json) printf(" %9s %9s %7s  ", "-", "-", "-");
                continue;
            }
            kc.half = h;
            double ms;
            st = sarbp_cuda_bench_kernel(p32, g, &kc, reps, &ms, img);
            if (st) {
                fprintf(stderr, "sarbp: bench: %s %s: %s\n", tok, h ? "fp16" : "fp32", sarbp_error_detail());
                rc_out = CLI_FAIL;
                if (!json) printf(" %9s %9s %7s  ", "fail", "-", "-");
                continue;
            }
            gbps[h] = pairs / ms / 1e6;
            double ser = ser_db(img, ref, npix);
            if (json) {
                jstr("variant", tok, 1);
                jstr("precision", h ? "fp16" : "fp32", 0);
                jnum("ms", ms);
                jnum("gbps", gbps[h]);
                jnum("gflops", 43 * gbps[h]);
                jnum("ser_db", ser);
                jnum("profile_mib", prof_mib * (h ? 0.5 : 1.0));
                printf("}\n");
            } else
                printf(" %9.3f %9.1f %7.1f  ", ms, gbps[h], ser);
            cli_flush_stdout();
        }
        if (!json) {
            if (prec[0] && prec[1] && gbps[0] > 0) printf(" %7.2f\n", gbps[1] / gbps[0]);
            else printf(" %7s\n", "-");
        }
        cli_flush_stdout();
    }
    /* end to end: the streamed pipeline with the default kernel, per precision
     * (fp16 twice: raw samples uploaded as FP16, then as FP32) */
    for (int run = 0; run < 3; run++) {
        const int h = run > 0, raw16 = run == 1;
        if (!prec[h]) continue;
        const char *label = !h ? "fp32" : raw16 ? "fp16, raw fp16" : "fp16, raw fp32";
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.device = device;
        o.precision = h ? SARBP_FP16 : SARBP_FP32;
        o.raw_fp16 = raw16;
        sarbp_image *im = NULL;
        sarbp_form_stats fs;
        /* twice: the first run pays one-time costs (cuFFT kernels loaded, pinned
         * and device allocations); the second is the steady state reported */
        st = sarbp_form_phd(p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
        double cold = fs.total_s;
        if (!st) {
            sarbp_image_free(im);
            im = NULL;
            st = sarbp_form_phd(p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
        }
        if (st) {
            fprintf(stderr, "sarbp: bench: end to end %s: %s\n", label, sarbp_error_detail());
            rc_out = CLI_FAIL;
            continue;
        }
        const sarbp_stage_times *t = &fs.stages;
        double big = fs.read_s;
        const char *bigname = "read";
        /* range compression runs on its own stream under the previous block's
         * backprojection: its event interval is stretched by sharing the SMs
         * and is not a stage the total could be bounded by */
        if (t->transfer_s > big) big = t->transfer_s, bigname = "transfer";
        if (t->bp_s > big) big = t->bp_s, bigname = "backprojection";
        double ser = ser_db(im->data, ref, npix);
        if (json) {
            jstr("end_to_end", label, 1);
            jnum("total_s", fs.total_s);
            jnum("first_run_s", cold);
            jnum("setup_s", t->setup_s);
            jnum("read_s", fs.read_s);
            jnum("transfer_s", t->transfer_s);
            jnum("rc_s", t->rc_s);
            jnum("bp_s", t->bp_s);
            jnum("finish_s", t->finish_s);
            jnum("total_over_largest", fs.total_s / big);
            jnum("gbps", pairs / fs.total_s / 1e9);
            jnum("pulse_mib", t->pulse_bytes / 1048576.0);
            jnum("image_mib", t->image_bytes / 1048576.0);
            jnum("ser_db", ser);
            printf("}\n");
        } else
            printf("end to end, %s (form, default kernel, pulse blocks streamed): %.4f s "
                   "(first run %.3f s), %.1f Gbp/s, SER %.1f dB\n"
                   "  setup %.4f, read %.4f, transfer %.4f, range compression %.4f (under the "
                   "backprojection), backprojection %.4f, finish %.4f s;\n"
                   "  total = %.2f x the largest of read, transfer and backprojection (%s)\n"
                   "  device memory: pulse data %.2f MiB, image %.1f MiB\n",
                   label, fs.total_s, cold, pairs / fs.total_s / 1e9, ser,
                   t->setup_s, fs.read_s, t->transfer_s, t->rc_s, t->bp_s, t->finish_s,
                   fs.total_s / big, bigname, t->pulse_bytes / 1048576.0, t->image_bytes / 1048576.0);
        cli_flush_stdout();
        sarbp_image_free(im);
    }
    free(ref);
    free(img);
    sarbp_profiles_free(p32);
    return rc_out;
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
        {"precision", required_argument, NULL, 'P'},
        CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0},
    };
    const char *backend = "cpu";
    size_t nx = 0, ny = 0, npulses = 0, nsamples = 512;
    double spacing = 0;
    int threads[64], nthreads = 0, reps = 5, json = 0, device = 0;
    char variants[1024] = "v2:32x16:4,v3:32x8:2,v3:32x16:4,v3:32x32:8,v3,v3a,v4,v4:32x16:4";
    int prec[2] = {1, 1}; /* fp32, fp16 */
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
                if (parse_variant(tok, name, &kc))
                    return cli_usage(cmd, "--variant wants NAME[:TXxTY[:PPT[:MINB]]] with tiles up "
                                     "to 1024, PPT 1 to 8, MINB -1 to 64, not '%s'", tok);
            }
            break;
        }
        case 'r':
            if (cli_parse_int(optarg, 1, 1000, &reps))
                return cli_usage(cmd, "--reps wants a whole number from 1 to 1000, not '%s'", optarg);
            break;
        case 'd':
            if (cli_parse_int(optarg, 0, 1024, &device))
                return cli_usage(cmd, "--device wants a device number from 0 to 1024, not '%s'", optarg);
            break;
        case 'j': json = 1; break;
        case 'P': {
            prec[0] = prec[1] = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "fp32")) prec[0] = 1;
                else if (!strcmp(t, "fp16")) prec[1] = 1;
                else return cli_usage(cmd, "--precision wants fp32, fp16 or fp32,fp16, not '%s'", optarg);
            }
            break;
        }
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    if (optind < argc) return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    int cuda = !strcmp(backend, "cuda");
    if (!nx) nx = ny = cuda ? 4096 : 1024;
    if (!npulses) npulses = cuda ? 2048 : 512;
    if (spacing == 0) spacing = 102.4 / (double)(nx > ny ? nx : ny);
    if (!nthreads)
        for (int t = 1; t <= sarbp_cpu_count() && nthreads < 64; t++) threads[nthreads++] = t;
    sarbp_grid g = {nx, ny, spacing, spacing, 0, 0, 0};
    sarbp_status st = sarbp_grid_validate(&g);
    if (st) return cli_usage(cmd, "%s", sarbp_error_detail());
    sarbp_phd *p = NULL;
    double t0 = sarbp_now_s();
    st = make_scene(npulses, nsamples, &p);
    if (st) return cli_fail_status(cmd, st);
    cli_info(2, "sarbp: bench: simulated %zu pulses x %zu samples (204 targets) in %.2f s; "
             "grid %zu x %zu at %g m", npulses, nsamples, sarbp_now_s() - t0, g.nx, g.ny, g.dx);
    int rc = cuda ? bench_cuda(p, &g, variants, prec, reps, device, json)
                  : bench_cpu(p, &g, threads, nthreads, json);
    sarbp_phd_free(p);
    return rc;
}
