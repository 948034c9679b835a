/* cmd_batch.c - sarbp batch: one image per azimuth window over whole data
 * sets, several windows at a time, and a summary table (CSV and JSON).
 *
 * It takes over scripts/batch-form.sh with the same windows, files, columns
 * and exit codes. Each window is a 'sarbp form' child process (this same
 * executable, exec'd): a window that fails, runs out of memory or crashes
 * is reported and the others go on, and HDF5, which the distribution builds
 * without thread safety, is only ever used by one thread of a process. The
 * parent measures each image in-process (sarbp metrics' grid, entropy and
 * peak). Under MPI the windows are dealt out round robin over the ranks, each
 * rank running -j of its own at a time (on the GPU of its node-local rank
 * unless --form-args gives --device), and rank 0 collects the records and
 * writes the summary; before any window starts, the ranks compare digests
 * of their options, inputs and window lists, and any difference fails the
 * job.
 *
 * Before any window starts (and before OUTDIR is made), --form-args is run
 * through form's own option parser once (check_form_args) and refused when
 * it gives what batch gives each window (-o, -i, --pulses, --azimuth), and
 * each input is checked for what the --outputs formats need of it (a scene
 * reference, pulse times). An input that cannot be read is a summary row
 * of its own and makes the exit status 1.
 *
 * The logs and the summaries are written as every output of sarbp is,
 * through the library's output files (sarbp/output.h): an exclusive
 * temporary that never follows a link planted in OUTDIR, renamed into place
 * when complete. A terminating signal to this process is passed on to its
 * 'sarbp form' children (which remove their own temporaries), and after
 * they are gone the library removes this process's temporaries and it dies
 * of the signal; on Linux the children also get SIGTERM should this process
 * die without a word (SIGKILL). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"
#include "sarbp/mpi.h"
#include "sarbp/output.h"

#define MAX_INPUTS 4096
#define MAX_FORM_ARGS 128
/* Windows in all: each is a 'sarbp form' run and a summary row (about 10 KB
 * of records here). A whole 360-degree pass in steps of 0.04 degree is
 * 9,000 windows; more is a slip of the finger (--step-deg 1e-5), refused
 * before anything is allocated for it. */
#define MAX_WINDOWS 10000
/* The smallest --window-deg and --step-deg: the summary gives windows to
 * 1e-6 degree ("%.6f"), so finer steps could not even be told apart. */
#define MIN_DEG 1e-6

static void help(void)
{
    printf(
"usage: sarbp batch [options] -o OUTDIR INPUT...\n"
"\n"
"Forms one image per azimuth window of each INPUT (a Gotcha-style directory, a\n"
"glob in quotes, or a phase-history file readable by 'sarbp form'): windows\n"
"[A, A+W) degrees from the input's first azimuth, stepping S; the last window is\n"
"kept when at least half of it holds data. Per window it writes OUTDIR/win_NNN.EXT\n"
"for each format of --outputs (NNN counts over all inputs) and a log\n"
"OUTDIR/win_NNN.log (the 'sarbp form -v' output); at the end OUTDIR/summary.csv and\n"
"summary.json. Each file is written under a temporary name and renamed into place\n"
"when complete.\n"
"\n"
"options:\n"
"  -o, --output OUTDIR   output folder (created; required)\n"
"      --outputs LIST    the images of each window, formats by 'sarbp form' name\n"
"                        ending, comma-separated, one of each format: png, h5, npy,\n"
"                        nitf (or ntf, sicd: SICD), tif (GeoTIFF), kmz (default\n"
"                        png,h5). The geolocated ones (nitf, tif, kmz) need a scene\n"
"                        reference: CPHD inputs carry one, for others give\n"
"                        --form-args '--scene-ref LAT,LON,HEIGHT'; nitf also needs the\n"
"                        pulse times: CPHD, or --form-args '--prf HZ --collect-start\n"
"                        TIME', each window's collection start then moved on by its\n"
"                        first pulse / HZ. An input that cannot give what is asked\n"
"                        is refused before any window starts\n"
"  -j, --jobs N          windows formed at once (default: the number of cores; each\n"
"                        form gets --threads cores/N, at least 1, unless --form-args\n"
"                        sets --threads). Under MPI: per rank, over its node's cores\n"
"                        shared by the node's ranks\n"
"      --window-deg W    window width in degrees, 0.000001 to 360 (default 1)\n"
"      --step-deg S      step between window starts in degrees, 0.000001 to 360\n"
"                        (default: W), no finer than the pulses (finer steps repeat\n"
"                        their sets). At most 10,000 windows in all (a whole\n"
"                        360-degree pass at 0.04-degree steps is 9,000): each is one\n"
"                        'sarbp form' run; more is refused as a usage error\n"
"      --form-args ARGS  more 'sarbp form' options, one string, split on spaces,\n"
"                        e.g. \"--grid 512x512 --spacing 0.2 --backend cpu\". Checked\n"
"                        once, before any window starts, by this sarbp's 'form'\n"
"                        option parser (every option and its value; combinations\n"
"                        such as --precision fp16 with --backend cpu are found by\n"
"                        the windows). Refused there: -o/--output (every window\n"
"                        would write the same file: use --outputs), -i/--input,\n"
"                        --pulses and --azimuth (batch chooses each window's\n"
"                        pulses), -h/--help, '--' and words that are neither an\n"
"                        option nor its value\n"
"      --sarbp PATH      the executable run as 'PATH form ...' per window (default:\n"
"                        this sarbp)\n"
"  -q, --quiet           no per-window lines\n"
"  -h, --help            show this help\n"
"\n"
"Under mpirun/srun the windows are shared out over the ranks; rank 0 writes the\n"
"summary, which is the same as a one-process run's. The ranks must be given the\n"
"same options and read the same inputs: they compare their window lists before\n"
"forming, and any difference fails the job. Each rank's windows get --device N,\n"
"N its rank on its node (one GPU a rank), unless --form-args gives --device.\n"
"\n"
"summary columns (CSV header; the same keys in the JSON array of objects):\n"
"  index, input, az_start_deg, az_end_deg (the window), pulses, nx, ny, dx_m, dy_m\n"
"  (the grid), backend, precision, seconds (wall clock of the 'sarbp form' run,\n"
"  reading and writing included), mbps (pixel-pulse pairs per wall second / 1e6),\n"
"  entropy (nats, as 'sarbp metrics'), peak (largest pixel magnitude), png, h5,\n"
"  status (ok or failed), npy, nitf, tif, kmz (the window's file of each format,\n"
"  empty when not asked or failed), error (why the window or input failed). An\n"
"  input that cannot be read has a row of its own: its input, status failed and\n"
"  error; index and the window's columns empty (null in the JSON). entropy and peak\n"
"  are measured from the first complex output of h5, nitf and npy (empty without\n"
"  one); the grid from the .h5 or SICD, else from the log.\n"
"\n"
"exit codes: 0 every window formed; 1 some window or input failed (the rest are\n"
"still formed and summarised); 2 usage error, including --form-args or --outputs\n"
"that the options or the inputs refuse (nothing is created then).\n");
}

enum { OPT_WINDOW_DEG = 256, OPT_STEP_DEG, OPT_FORM_ARGS, OPT_SARBP, OPT_OUTPUTS };

static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"jobs", required_argument, NULL, 'j'},
    {"window-deg", required_argument, NULL, OPT_WINDOW_DEG},
    {"step-deg", required_argument, NULL, OPT_STEP_DEG},
    {"form-args", required_argument, NULL, OPT_FORM_ARGS},
    {"sarbp", required_argument, NULL, OPT_SARBP},
    {"outputs", required_argument, NULL, OPT_OUTPUTS},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* The summary's columns, in order; a record holds one value per key. */
static const char *const keys[] = {"index", "input", "az_start_deg", "az_end_deg", "pulses",
                                   "nx", "ny", "dx_m", "dy_m", "backend", "precision", "seconds",
                                   "mbps", "entropy", "peak", "png", "h5", "status", "npy",
                                   "nitf", "tif", "kmz", "error"};
#define NKEYS (sizeof keys / sizeof keys[0])
#define VAL 512

struct window {
    size_t index;
    const char *input;
    double a0, a1, p0, p1;
    char val[NKEYS][VAL]; /* the record */
    int ok;
    pid_t pid;
    double t0;
    char note[1024];      /* the line said about it */
    char collect_start[48]; /* its --collect-start, "" for none (see window_start_time) */
};

/* An input that could not be read: a summary row of its own, before the
 * window numbered `before` (its place among the inputs). */
struct failed_input {
    const char *input;
    size_t before;
    char error[VAL];
};

/* The images each window writes (--outputs): one of each format, the name
 * ending as the user spelled it; `key` is the format's summary column. */
#define MAX_FORMATS 6
struct out_format {
    char ext[16];
    sarbp_image_format fmt;
    const char *key;
};
static struct out_format g_fmt[MAX_FORMATS];
static int g_nfmt;

static const char *format_key(sarbp_image_format f)
{
    switch (f) {
    case SARBP_IMG_PNG: return "png";
    case SARBP_IMG_H5: return "h5";
    case SARBP_IMG_NPY: return "npy";
    case SARBP_IMG_SICD: return "nitf";
    case SARBP_IMG_GEOTIFF: return "tif";
    case SARBP_IMG_KMZ: return "kmz";
    default: return NULL;
    }
}

/* Parses --outputs: 0, or -1 with why[n] saying what is wrong. */
static int parse_outputs(const char *list, char *why, size_t n)
{
    g_nfmt = 0;
    const char *p = list;
    for (;;) {
        const size_t len = strcspn(p, ",");
        char ext[16];
        int ok = len > 0 && len < sizeof ext;
        for (size_t i = 0; ok && i < len; i++)
            ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
                 (p[i] >= '0' && p[i] <= '9');
        if (!ok) {
            snprintf(why, n, "--outputs wants format names such as png,h5,nitf separated by "
                     "commas, not '%s'", list);
            return -1;
        }
        memcpy(ext, p, len);
        ext[len] = 0;
        char name[32];
        snprintf(name, sizeof name, "x.%s", ext);
        const sarbp_image_format f = sarbp_image_format_from_name(name);
        const char *key = format_key(f);
        if (!key) {
            char exts[128];
            sarbp_image_format_list(exts, sizeof exts);
            snprintf(why, n, "--outputs: unknown format '%s' (use %s without the dot)", ext, exts);
            return -1;
        }
        for (int i = 0; i < g_nfmt; i++)
            if (g_fmt[i].fmt == f) {
                snprintf(why, n, "--outputs names the %s format twice ('%s' and '%s')", key,
                         g_fmt[i].ext, ext);
                return -1;
            }
        snprintf(g_fmt[g_nfmt].ext, sizeof g_fmt[g_nfmt].ext, "%s", ext);
        g_fmt[g_nfmt].fmt = f;
        g_fmt[g_nfmt].key = key;
        g_nfmt++;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

static int want_format(sarbp_image_format f)
{
    for (int i = 0; i < g_nfmt; i++)
        if (g_fmt[i].fmt == f) return 1;
    return 0;
}

/* OUTDIR/win_NNN.EXT of window index for format i */
static void output_path(char *buf, size_t n, const char *outdir, size_t index, int i)
{
    snprintf(buf, n, "%s/win_%03zu.%s", outdir, index, g_fmt[i].ext);
}

static void set(struct window *w, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void set(struct window *w, const char *key, const char *fmt, ...)
{
    for (size_t k = 0; k < NKEYS; k++)
        if (!strcmp(keys[k], key)) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(w->val[k], VAL, fmt, ap);
            va_end(ap);
        }
}

/* Launcher variables removed from a window's environment: the child is a
 * plain one-process 'sarbp form', not another rank. */
static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                            "PMIX_RANK", "PMI_RANK"};

/* ---- what a signal must clean up ------------------------------------------
 * One slot per window running (-j): the 'sarbp form' child's pid and the
 * log it writes. The main code changes a slot's pid only with the cleanup
 * signals blocked, so the handler never signals a pid that is no longer
 * ours. The handler is the library's (sarbp_output_on_signal): it calls
 * pass_signal, then removes this process's temporaries and dies of the
 * signal. */
struct slot {
    volatile pid_t pid;     /* the 'sarbp form' child, 0 when none */
    sarbp_output_file *log; /* its log, NULL when none */
    struct window *w;       /* the window it runs */
};

static struct slot *g_slots;
static int g_nslots;
/* the library's cleanup signals (sarbp/output.h) */
static const int cleanup_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGXFSZ,
                                      SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2, SIGPIPE};
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NSIGNALS; i++) sigaddset(&set, cleanup_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* Async-signal-safe: SIGPIPE (stderr gone) ends the children with SIGTERM,
 * the others are passed on as they are. */
static void pass_signal(int sig)
{
    const int pass = sig == SIGPIPE ? SIGTERM : sig;
    for (int i = 0; i < g_nslots; i++)
        if (g_slots[i].pid > 0) kill(g_slots[i].pid, pass);
    /* the children remove their temporaries as they die: wait for them, up
     * to 5 s, then end the ones left (a --sarbp wrapper that ignores it) */
    for (int t = 0; t <= 500; t++) {
        int left = 0;
        for (int i = 0; i < g_nslots; i++) {
            if (g_slots[i].pid <= 0) continue;
            if (t == 500) kill(g_slots[i].pid, SIGKILL);
            if (waitpid(g_slots[i].pid, NULL, t == 500 ? 0 : WNOHANG) == 0) left++;
            else g_slots[i].pid = 0;
        }
        if (!left) break;
        const struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void discard_log(struct slot *sl)
{
    sarbp_output_file_discard(sl->log);
    sl->log = NULL;
}

/* Starts window w's 'sarbp form' in slot sl, its output into a temporary
 * log. The pid, or -1 with w->note saying why. */
static pid_t start_window(const char *exe, const char *outdir, struct window *w, char **form_args,
                          int nform, int threads, int device, struct slot *sl)
{
    char tag[64], outs[MAX_FORMATS][4096], logp[4096], az[128], th[32], dev[32];
    snprintf(tag, sizeof tag, "win_%03zu", w->index);
    for (int i = 0; i < g_nfmt; i++) output_path(outs[i], sizeof outs[i], outdir, w->index, i);
    snprintf(logp, sizeof logp, "%s/%s.log", outdir, tag);
    snprintf(az, sizeof az, "%.7f:%.7f", w->p0, w->p1);
    snprintf(th, sizeof th, "%d", threads);
    snprintf(dev, sizeof dev, "%d", device);
    fflush(stdout);
    fflush(stderr);
    sl->w = w;
    sigset_t old;
    block_signals(&old); /* the slot knows the log and the child before a signal can act */
    if (sarbp_output_file_open(logp, &sl->log)) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(w->note, sizeof w->note, "%.1000s", sarbp_error_detail());
        return -1;
    }
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) { /* parent */
        const int err = errno;
        if (pid > 0) sl->pid = pid;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            discard_log(sl);
            snprintf(w->note, sizeof w->note, "cannot start 'sarbp form': %s", strerror(err));
        }
        return pid;
    }
    /* the child (the handler passes on nothing here); dies with this process */
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127); /* the parent died before prctl */
#else
    (void)parent;
#endif
    sigprocmask(SIG_SETMASK, &old, NULL);
    const int logfd = sarbp_output_file_fd(sl->log);
    dup2(logfd, STDOUT_FILENO);
    dup2(logfd, STDERR_FILENO);
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]);
    char *argv[16 + MAX_FORM_ARGS + 2 * MAX_FORMATS];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "form";
    argv[n++] = "-v";
    argv[n++] = "-i";
    argv[n++] = (char *)w->input;
    argv[n++] = "--azimuth";
    argv[n++] = az;
    if (threads > 0) {
        argv[n++] = "--threads";
        argv[n++] = th;
    }
    if (device >= 0) {
        argv[n++] = "--device";
        argv[n++] = dev;
    }
    for (int i = 0; i < nform; i++) argv[n++] = form_args[i];
    if (*w->collect_start) { /* after the user's: the last one counts */
        argv[n++] = "--collect-start";
        argv[n++] = w->collect_start;
    }
    for (int i = 0; i < g_nfmt; i++) {
        argv[n++] = "-o";
        argv[n++] = outs[i];
    }
    argv[n] = NULL;
    execv(exe, argv);
    fprintf(stderr, "sarbp: batch: cannot run '%s': %s\n", exe, strerror(errno));
    _exit(127);
}

/* After the child: the log's sizes line, the image's grid and statistics;
 * the log renamed into place. sl: the window's slot (its temporary log,
 * which may be gone: a window that never started). */
static void finish_window(const char *outdir, struct window *w, int wstatus, double secs,
                          struct slot *sl)
{
    char tag[64], outs[MAX_FORMATS][4096], line[4096], first_err[1024] = "", last[1024] = "";
    snprintf(tag, sizeof tag, "win_%03zu", w->index);
    for (int i = 0; i < g_nfmt; i++) output_path(outs[i], sizeof outs[i], outdir, w->index, i);
    /* the image measured: the first complex output (the .h5 and a SICD
     * restore the grid; a .npy has the pixels only) */
    int measured = -1;
    static const sarbp_image_format complex_formats[] = {SARBP_IMG_H5, SARBP_IMG_SICD,
                                                         SARBP_IMG_NPY};
    for (int c = 0; c < 3 && measured < 0; c++)
        for (int i = 0; i < g_nfmt; i++)
            if (g_fmt[i].fmt == complex_formats[c]) measured = i;
    /* formed: the child said so; only then are the images this run's */
    const int formed = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    w->ok = formed;
    set(w, "seconds", "%.3f", secs);
    if (*w->note) snprintf(first_err, sizeof first_err, "%.1000s", w->note); /* it never started */
    size_t pulses = 0, lnx = 0, lny = 0;
    double ldx = 0, ldy = 0;
    int have_grid = 0;
    /* the log through our descriptor, never by name */
    const int logfd = sl->log ? sarbp_output_file_fd(sl->log) : -1;
    FILE *f = NULL;
    if (logfd >= 0 && lseek(logfd, 0, SEEK_SET) == 0) {
        const int fd = dup(logfd);
        if (fd >= 0 && !(f = fdopen(fd, "r"))) close(fd);
    }
    int have_sizes = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (*line) snprintf(last, sizeof last, "%.1000s", line);
        const char *p = strstr(line, " pulses x ");
        if (!have_sizes && p) {
            const char *q = p;
            while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
            if (q < p && sscanf(q, "%zu", &pulses) == 1) {
                have_sizes = 1;
                set(w, "pulses", "%zu", pulses);
                const char *b = strstr(line, "back end ");
                char be[64], prec[64];
                if (b && sscanf(b, "back end %63[A-Za-z0-9_], %63[A-Za-z0-9_]", be, prec) == 2) {
                    set(w, "backend", "%s", be);
                    set(w, "precision", "%s", prec);
                }
                const char *gr = strstr(line, ", grid ");
                have_grid = gr && sscanf(gr, ", grid %zu x %zu at %lg x %lg m", &lnx, &lny, &ldx,
                                         &ldy) == 4;
                continue;
            }
        }
        /* the first error: not a note or a warning said on the way */
        if (!*first_err && strstr(line, "sarbp:") && !strstr(line, "using the cpu") &&
            !strstr(line, ": warning: "))
            snprintf(first_err, sizeof first_err, "%.1000s", line);
    }
    if (f) fclose(f);
    double nx = 0, ny = 0;
    if (w->ok && have_grid) { /* the log's grid, until an image with its grid says better */
        nx = (double)lnx;
        ny = (double)lny;
        set(w, "nx", "%zu", lnx);
        set(w, "ny", "%zu", lny);
        set(w, "dx_m", "%.10g", ldx);
        set(w, "dy_m", "%.10g", ldy);
    }
    if (w->ok && measured >= 0) {
        sarbp_image *img = NULL;
        sarbp_image_stats s;
        sarbp_status st = sarbp_image_read(outs[measured], &img);
        if (!st) st = sarbp_quality_image_stats(img, &s);
        if (st) {
            w->ok = 0;
            snprintf(first_err, sizeof first_err, "sarbp: metrics: %s", sarbp_error_detail());
            if (logfd >= 0 && lseek(logfd, 0, SEEK_END) >= 0) dprintf(logfd, "%s\n", first_err);
        } else {
            if (img->has_grid_coords || !have_grid) {
                nx = (double)img->grid.nx;
                ny = (double)img->grid.ny;
                set(w, "nx", "%zu", img->grid.nx);
                set(w, "ny", "%zu", img->grid.ny);
                if (img->has_grid_coords) {
                    set(w, "dx_m", "%.10g", img->grid.dx);
                    set(w, "dy_m", "%.10g", img->grid.dy);
                }
            }
            set(w, "entropy", "%.10g", s.entropy);
            set(w, "peak", "%.10g", s.max_mag);
        }
        sarbp_image_free(img);
    }
    if (have_sizes && nx > 0 && secs > 0)
        set(w, "mbps", "%.1f", (double)pulses * nx * ny / secs / 1e6);
    if (sl->log) {
        const sarbp_status st = sarbp_output_file_commit(sl->log);
        sl->log = NULL;
        if (st) {
            if (w->ok) snprintf(first_err, sizeof first_err, "%.1000s", sarbp_error_detail());
            w->ok = 0;
        }
    }
    if (w->ok) {
        for (int i = 0; i < g_nfmt; i++) set(w, g_fmt[i].key, "%s", outs[i]);
        set(w, "status", "ok");
        snprintf(w->note, sizeof w->note, "sarbp: batch: %s %.6f:%.6f deg: %.30s pulses, %.30sx%.30s, %.3f s",
                 tag, w->a0, w->a1, have_sizes ? w->val[4] : "?", w->val[5], w->val[6], secs);
    } else {
        /* images this run wrote for a window it calls failed; a failed form
         * left none, and the user's earlier files of these names stay */
        if (formed)
            for (int i = 0; i < g_nfmt; i++) unlink(outs[i]);
        set(w, "status", "failed");
        if (!*first_err && WIFSIGNALED(wstatus))
            snprintf(first_err, sizeof first_err, "killed by signal %d", WTERMSIG(wstatus));
        snprintf(w->note, sizeof w->note, "sarbp: batch: window %s (%.6f:%.6f deg of '%.300s') failed: %.600s",
                 tag, w->a0, w->a1, w->input, *first_err ? first_err : last);
        set(w, "error", "%.500s", *first_err ? first_err : *last ? last : "failed");
    }
}

static int isnum(const char *s)
{
    /* ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$, as the script's summary */
    if (*s == '-') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == 0;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void json_field(FILE *f, const char *key, const char *s)
{
    if (!*s) {
        fputs("null", f);
    } else if (isnum(s) && strcmp(key, "input")) {
        fputs(s, f);
    } else {
        cli_json_fstr(f, s); /* control characters and bad UTF-8 escaped */
    }
}

static void summary_row(FILE *f, const char (*val)[VAL], int json, int first)
{
    if (json) fputs(first ? "  {" : ",\n  {", f);
    for (size_t k = 0; k < NKEYS; k++) {
        if (json) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", keys[k]);
            json_field(f, keys[k], val[k]);
        } else {
            if (k) fputc(',', f);
            csv_field(f, val[k]);
        }
    }
    fputs(json ? "}" : "\n", f);
}

/* Writes OUTDIR/summary.csv (or .json) through an output file, renamed
 * into place when complete: the windows in order, each input that could
 * not be read in its place among them. */
static sarbp_status write_summary(const char *outdir, struct window *w, size_t nwin,
                                  const struct failed_input *fi, size_t nfi, int json)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.%s", outdir, json ? "json" : "csv");
    sarbp_output_file *out;
    sarbp_status st = sarbp_output_file_open(path, &out);
    if (st) return st;
    const int fd = dup(sarbp_output_file_fd(out));
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        const int err = errno;
        if (fd >= 0) close(fd);
        sarbp_output_file_discard(out);
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    if (json) fputs("[\n", f);
    else
        for (size_t k = 0; k < NKEYS; k++) fprintf(f, "%s%s", k ? "," : "", keys[k]);
    if (!json) fputc('\n', f);
    static char row[NKEYS][VAL]; /* a failed input's (the CLI is one thread) */
    size_t j = 0;
    int first = 1;
    for (size_t i = 0; i <= nwin; i++) {
        for (; j < nfi && fi[j].before <= i; j++) {
            memset(row, 0, sizeof row);
            for (size_t k = 0; k < NKEYS; k++) {
                if (!strcmp(keys[k], "input")) snprintf(row[k], VAL, "%s", fi[j].input);
                if (!strcmp(keys[k], "status")) snprintf(row[k], VAL, "failed");
                if (!strcmp(keys[k], "error")) snprintf(row[k], VAL, "%s", fi[j].error);
            }
            summary_row(f, (const char (*)[VAL])row, json, first);
            first = 0;
        }
        if (i < nwin) {
            summary_row(f, (const char (*)[VAL])w[i].val, json, first);
            first = 0;
        }
    }
    if (json) fputs(first ? "]\n" : "\n]\n", f);
    if (fclose(f) != 0) {
        const int err = errno;
        sarbp_output_file_discard(out);
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    return sarbp_output_file_commit(out);
}

/* A record as text for the trip to rank 0: one line per value, then the note. */
static char *pack(const struct window *w, const size_t *mine, size_t nmine)
{
    size_t cap = nmine * (NKEYS * VAL + 1100) + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (size_t m = 0; m < nmine; m++) {
        const struct window *x = &w[mine[m]];
        len += (size_t)snprintf(buf + len, cap - len, "%zu\n", mine[m]);
        for (size_t k = 0; k < NKEYS; k++)
            len += (size_t)snprintf(buf + len, cap - len, "%s\n", x->val[k]);
        len += (size_t)snprintf(buf + len, cap - len, "%d\n%s\n", x->ok, x->note);
    }
    buf[len] = 0;
    return buf;
}

static char *next_line(char **p)
{
    char *s = *p, *e = strchr(s, '\n');
    if (!e) return NULL;
    *e = 0;
    *p = e + 1;
    return s;
}

static void unpack_records(struct window *w, size_t nwin, char *text)
{
    char *p = text, *l;
    while ((l = next_line(&p))) {
        size_t i;
        if (sscanf(l, "%zu", &i) != 1 || i >= nwin) return;
        for (size_t k = 0; k < NKEYS; k++) {
            if (!(l = next_line(&p))) return;
            snprintf(w[i].val[k], VAL, "%s", l);
        }
        if (!(l = next_line(&p))) return;
        w[i].ok = atoi(l) == 1;
        if (!(l = next_line(&p))) return;
        snprintf(w[i].note, sizeof w[i].note, "%s", l);
    }
}

/* Under MPI, before any window starts: every rank has come this far
 * (sarbp_mpi_check answers a rank that left early), then the ranks compare
 * their options (--window-deg, --step-deg, --form-args), their inputs (each
 * name and sarbp_mpi_hash_meta of what it read, or that it could not read
 * it) and their window lists (the input and the azimuths of each). CLI_OK
 * when they agree; otherwise rank 0 says which rank differs and how, and
 * every rank returns CLI_FAIL. */
static int agree(const char *cmd, double win, double step, const char *form_args,
                 uint64_t in_digest, const struct window *w, size_t nwin)
{
    int peer = 0;
    if (!sarbp_mpi_check(0, &peer)) {
        cli_mpi_peer_failed = peer;
        return CLI_FAIL;
    }
    enum { OPTIONS, INPUTS, WINDOWS, N };
    uint64_t d[N];
    d[OPTIONS] = sarbp_mpi_hash(SARBP_MPI_HASH_SEED, &win, sizeof win);
    d[OPTIONS] = sarbp_mpi_hash(d[OPTIONS], &step, sizeof step);
    d[OPTIONS] = sarbp_mpi_hash(d[OPTIONS], form_args, strlen(form_args));
    d[INPUTS] = in_digest;
    d[WINDOWS] = sarbp_mpi_hash(SARBP_MPI_HASH_SEED, &nwin, sizeof nwin);
    for (size_t i = 0; i < nwin; i++) {
        const double az[] = {w[i].a0, w[i].a1, w[i].p0, w[i].p1};
        d[WINDOWS] = sarbp_mpi_hash(d[WINDOWS], w[i].input, strlen(w[i].input) + 1);
        d[WINDOWS] = sarbp_mpi_hash(d[WINDOWS], az, sizeof az);
    }
    int item;
    const int r = sarbp_mpi_compare(d, N, &item, NULL);
    if (r < 0) return CLI_OK;
    if (sarbp_mpi_rank() != 0) {
        cli_mpi_peer_failed = 1;
        return CLI_FAIL;
    }
    static const char *const what[] = {
        "has different options than rank 0 (--window-deg, --step-deg or --form-args)",
        ("read the inputs differently from rank 0 (other files, pulses or metadata, or one it "
         "could not read)"),
        "has a different window list than rank 0"};
    return cli_fail(cmd, "the MPI ranks disagree: rank %d %s; every rank must read the same "
                    "inputs with the same options", r, what[item]);
}

/* mkdir -p, as the script did; 0 when path is a directory at the end. */
static int mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) && errno != EEXIST) return -1;
    struct stat st;
    if (stat(buf, &st) || !S_ISDIR(st.st_mode)) {
        if (!errno) errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* ---- --form-args, checked before any window starts -------------------------
 * The options' names and values are checked by 'sarbp form' itself: this
 * executable run once as 'sarbp form ARGS --help' (stdout discarded), which
 * parses ARGS with form's own getopt table and value checks and stops at
 * --help with exit 0 when all are good, or exits 2 with form's message for
 * the first bad one. Run with POSIXLY_CORRECT, getopt stops at the first
 * word that is not an option or an option's value (form would take it for
 * an input), so --help is never reached then: that tells such words apart
 * without a copy of form's option table here. The --sarbp executable is
 * not used for this: it may be a wrapper whose work belongs to the windows.
 * Combinations of options that form checks after parsing (--precision fp16
 * with --backend cpu) are not found here; the windows report them. */

/* Runs 'exe form args[0..n) [extra] --help' (extra "": 'exe form
 * args[0..n)' alone); its exit status (-1: it did not run or died), and the first line of its stderr, less "sarbp: form: ",
 * in msg[msgn]. */
static int probe_form(const char *exe, char *const *args, int n, const char *extra, int posix,
                      char *msg, size_t msgn)
{
    int p[2];
    *msg = 0;
    if (pipe(p)) return -1;
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
        close(p[0]);
        const int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) dup2(nul, STDOUT_FILENO);
        dup2(p[1], STDERR_FILENO);
        for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
            unsetenv(launcher_vars[i]);
        if (posix) setenv("POSIXLY_CORRECT", "1", 1);
        else unsetenv("POSIXLY_CORRECT");
        char *argv[5 + MAX_FORM_ARGS];
        int k = 0;
        argv[k++] = (char *)exe;
        argv[k++] = "form";
        for (int i = 0; i < n; i++) argv[k++] = args[i];
        if (extra && *extra) argv[k++] = (char *)extra;
        if (!extra || *extra) argv[k++] = "--help";
        argv[k] = NULL;
        execv(exe, argv);
        _exit(127);
    }
    close(p[1]);
    char buf[4096];
    size_t len = 0;
    for (;;) {
        char chunk[1024];
        const ssize_t r = read(p[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        for (ssize_t i = 0; i < r && len < sizeof buf - 1; i++) buf[len++] = chunk[i];
    }
    buf[len] = 0;
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    const char *l = buf, *prefix = "sarbp: form: ";
    const char *found = strstr(buf, prefix);
    if (found) l = found + strlen(prefix);
    snprintf(msg, msgn, "%.*s", (int)strcspn(l, "\n"), l);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether token t is the long option name, given whole or as a prefix
 * (getopt_long's abbreviations; the probe has refused ambiguous ones), with
 * *val its "=VALUE" when attached (NULL otherwise). */
static int long_is(const char *t, const char *name, const char **val)
{
    if (strncmp(t, "--", 2) || !t[2]) return 0;
    t += 2;
    const size_t len = strcspn(t, "=");
    if (len > strlen(name) || strncmp(t, name, len)) return 0;
    if (val) *val = t[len] == '=' ? t + len + 1 : NULL;
    return 1;
}

/* What batch reads of --form-args: the last value of each option it needs. */
struct form_opts {
    const char *scene_ref, *prf, *collect_start;
    int has_threads, has_device;
};

/* Checks ARGS before any window: form's parser (above), then the options
 * batch gives each window itself. CLI_OK, or CLI_USAGE having said why in
 * one line. */
static int check_form_args(const char *cmd, const char *self, char **a, int n,
                           struct form_opts *fo)
{
    memset(fo, 0, sizeof *fo);
    for (int i = 0; i < n; i++)
        if (!strcmp(a[i], "--"))
            return cli_usage(cmd, "--form-args: '--' would end form's options: give options only");
    char msg[1024];
    if (self && n > 0 && probe_form(self, a, n, NULL, 1, msg, sizeof msg) != 0) {
        /* a last option without its value took our --help for it (in a
         * window it would take what batch adds after ARGS): with ARGS
         * alone, cli_getopt says so */
        if (probe_form(self, a, n, "", 1, msg, sizeof msg) == 2 && strstr(msg, "needs a value"))
            return cli_usage(cmd, "--form-args: %s", msg);
        const int rc = probe_form(self, a, n, NULL, 0, msg, sizeof msg);
        if (rc == 2) return cli_usage(cmd, "--form-args: %s", msg);
        if (rc == 0) {
            /* every option is good, so a word stopped the POSIX parse: the
             * first whose prefix of ARGS does not reach --help */
            for (int k = 0; k < n; k++) {
                if (a[k][0] == '-' && a[k][1]) continue;
                if (probe_form(self, a, k + 1, NULL, 1, msg, sizeof msg) != 0)
                    return cli_usage(cmd, "--form-args: '%s' is neither an option nor an "
                                     "option's value ('sarbp form' would read it as an input)",
                                     a[k]);
            }
            return cli_usage(cmd, "--form-args: a word is neither an option nor an option's "
                             "value ('sarbp form' would read it as an input)");
        }
        if (rc > 0 && rc != 127) return cli_usage(cmd, "--form-args: %s", *msg ? msg : "refused");
        cli_info(1, "sarbp: batch: cannot check --form-args with '%s form'", self);
    }
    for (int i = 0; i < n; i++) {
        const char *t = a[i], *v = NULL;
        const char *owned = NULL;
        if (t[0] == '-' && t[1] && t[1] != '-') { /* short options, as form's "i:o:qvh" */
            for (const char *c = t + 1; *c && !owned; c++) {
                if (*c == 'q' || *c == 'v') continue;
                if (*c == 'o') owned = "output";
                else if (*c == 'i') owned = "input";
                else if (*c == 'h') owned = "help";
                else break; /* a value such as --center's -1,2 */
            }
        } else if (long_is(t, "output", NULL)) owned = "output";
        else if (long_is(t, "input", NULL)) owned = "input";
        else if (long_is(t, "pulses", NULL) || long_is(t, "azimuth", NULL)) owned = "pulses";
        else if (long_is(t, "help", NULL)) owned = "help";
        if (owned && !strcmp(owned, "output"))
            return cli_usage(cmd, "--form-args gives '%s': every window would write the same "
                             "file; each window writes OUTDIR/win_NNN.EXT of the formats of "
                             "--outputs (e.g. --outputs png,h5,npy)", t);
        if (owned && !strcmp(owned, "input"))
            return cli_usage(cmd, "--form-args gives '%s': every window would read it too; give "
                             "the inputs to batch", t);
        if (owned && !strcmp(owned, "pulses"))
            return cli_usage(cmd, "--form-args gives '%s': batch chooses each window's pulses "
                             "(--window-deg, --step-deg)", t);
        if (owned)
            return cli_usage(cmd, "--form-args gives '%s': each window would print the help "
                             "instead of forming", t);
        const char **slot = long_is(t, "scene-ref", &v) ? &fo->scene_ref
                            : long_is(t, "prf", &v)     ? &fo->prf
                            : long_is(t, "collect-start", &v) ? &fo->collect_start
                                                              : NULL;
        if (long_is(t, "threads", &v)) fo->has_threads = 1;
        if (long_is(t, "device", &v)) fo->has_device = 1;
        if (slot) *slot = v ? v : i + 1 < n ? a[i + 1] : "";
        if ((slot || long_is(t, "threads", NULL) || long_is(t, "device", NULL)) && !v) i++; /* its value */
    }
    return CLI_OK;
}

/* Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), and back. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (long long)yoe + era * 400 + (*m <= 2);
}

/* The collection start of a window whose first pulse is `first` of its
 * input, under --prf HZ --collect-start T (form: pulse i of the selection
 * at i / HZ s after T): T + first / HZ, to the nanosecond, into out[n].
 * 0, or -1 when T does not parse (form refuses it then). */
static int window_start_time(const char *t0, size_t first, double prf, char *out, size_t n)
{
    int y, mo, d, h, mi, sec, used = 0;
    if (sscanf(t0, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6)
        return -1;
    double frac = 0;
    if (t0[used] == '.') frac = strtod(t0 + used, NULL);
    if (first == 0) {
        snprintf(out, n, "%s", t0);
        return 0;
    }
    const double add = frac + (double)first / prf;
    const double whole = floor(add);
    long long ns = llround((add - whole) * 1e9), s = (long long)whole;
    if (ns >= 1000000000) {
        ns -= 1000000000;
        s++;
    }
    s += ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi) * 60 + sec;
    long long days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400), yy;
    long long rem = s - days * 86400;
    unsigned mm, dd;
    civil_from_days(days, &yy, &mm, &dd);
    if (yy < 1 || yy > 9999) return -1; /* form refuses it then */
    snprintf(out, n, "%04d-%02u-%02uT%02d:%02d:%02d.%09dZ", (int)yy, mm, dd, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60), (int)ns);
    return 0;
}

/* What the formats of --outputs need of input `name` (open as rd) and of
 * --form-args, the way form checks them: a scene reference for the
 * geolocated ones, pulse times and a collection start for a SICD; and
 * --scene-ref, --prf and --collect-start only where form takes them.
 * CLI_OK, or CLI_USAGE having said why. */
static int check_input_needs(const char *cmd, const char *name, sarbp_reader *rd,
                             const struct form_opts *fo)
{
    const sarbp_collection *c = sarbp_reader_collection(rd);
    if (fo->scene_ref) {
        sarbp_scene_ref ref;
        if (sarbp_scene_ref_parse(fo->scene_ref, &ref) || sarbp_reader_set_scene_ref(rd, &ref))
            return cli_usage(cmd, "--form-args --scene-ref: %s", sarbp_error_detail());
    }
    const int own_times = sarbp_reader_times(rd) || (c && *c->collect_start);
    if ((fo->prf || fo->collect_start) && own_times)
        return cli_usage(cmd, "--form-args --prf and --collect-start are for inputs without pulse "
                         "times; '%s' has its own", name);
    int geo = 0;
    for (int i = 0; i < g_nfmt; i++) geo |= sarbp_image_format_is_geo(g_fmt[i].fmt);
    if (geo && !(c && c->has_ref) && !fo->scene_ref)
        return cli_usage(cmd, "--outputs %s needs a scene reference and '%s' has none: give "
                         "--form-args '--scene-ref LAT,LON,HEIGHT[,HEADING]'",
                         want_format(SARBP_IMG_SICD) ? "nitf" : want_format(SARBP_IMG_KMZ) ? "kmz" : "tif",
                         name);
    if (want_format(SARBP_IMG_SICD) && !own_times && !(fo->prf && fo->collect_start))
        return cli_usage(cmd, "--outputs nitf needs the pulse times and the collection start, "
                         "and '%s' has none: give --form-args '--prf HZ --collect-start TIME'",
                         name);
    return CLI_OK;
}

/* cmd_batch's way out, whichever it takes: frees the slots, the windows,
 * the failed inputs and the copy of --form-args (each may be NULL); returns
 * rc. */
static int batch_end(int rc, struct window *w, struct failed_input *fi, char *form_copy)
{
    free(g_slots);
    g_slots = NULL;
    g_nslots = 0;
    free(w);
    free(fi);
    free(form_copy);
    return rc;
}

int cmd_batch(int argc, char **argv)
{
    const char *cmd = "batch";
    const char *outdir = NULL, *form_args_s = "", *form_exe = NULL, *outputs_s = "png,h5";
    const char *inputs[MAX_INPUTS];
    size_t nin = 0;
    long jobs = 0;
    double win = 1, step = 0;
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "o:j:qvh", longopts)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'j':
            if (cli_parse_long(optarg, 1, 1024, &jobs))
                return cli_usage(cmd, "-j wants a number of jobs from 1 to 1024, not '%s'", optarg);
            break;
        case OPT_WINDOW_DEG:
            if (cli_parse_double(optarg, MIN_DEG, 360, &win))
                return cli_usage(cmd, "--window-deg wants degrees from 0.000001 to 360, not '%s'",
                                 optarg);
            break;
        case OPT_STEP_DEG:
            if (cli_parse_double(optarg, MIN_DEG, 360, &step))
                return cli_usage(cmd, "--step-deg wants degrees from 0.000001 to 360, not '%s'",
                                 optarg);
            break;
        case OPT_FORM_ARGS: form_args_s = optarg; break;
        case OPT_SARBP: form_exe = optarg; break;
        case OPT_OUTPUTS: outputs_s = optarg; break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE;
        }
    }
    while (optind < argc) {
        if (nin == MAX_INPUTS) return cli_usage(cmd, "too many inputs (at most %d)", MAX_INPUTS);
        inputs[nin++] = argv[optind++];
    }
    if (!outdir) return cli_usage(cmd, "no output folder: give -o OUTDIR");
    if (nin == 0) return cli_usage(cmd, "no input: give a Gotcha directory or a phase-history file");
    {
        char why[512];
        if (parse_outputs(outputs_s, why, sizeof why)) return cli_usage(cmd, "%s", why);
    }
    const int have_step = step > 0;
    if (!have_step) step = win;

    char *form_copy = strdup(form_args_s), *form_args[MAX_FORM_ARGS], *save = NULL;
    int nform = 0;
    for (char *t = form_copy ? strtok_r(form_copy, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
        if (nform == MAX_FORM_ARGS) {
            free(form_copy);
            return cli_usage(cmd, "--form-args holds too many options (at most %d)", MAX_FORM_ARGS);
        }
        form_args[nform++] = t;
    }
    char self[4096];
    const ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sn > 0) self[sn] = 0;
    struct form_opts fo;
    {
        const int r = check_form_args(cmd, sn > 0 ? self : NULL, form_args, nform, &fo);
        if (r != CLI_OK) {
            free(form_copy);
            return r;
        }
    }
    double prf = 0;
    if (fo.prf && cli_parse_double(fo.prf, 1e-3, 1e9, &prf)) prf = 0; /* form says why */
    const int rank = sarbp_mpi_rank(), size = sarbp_mpi_size();
    const int local = cli_mpi_local_size();
    int ncores = sarbp_cpu_count() / local;
    if (ncores < 1) ncores = 1;
    if (jobs == 0) jobs = ncores;
    const int threads = fo.has_threads ? 0 : (ncores / (int)jobs > 0 ? ncores / (int)jobs : 1);
    /* one GPU a rank, as form under MPI: the node-local rank's (-1: none
     * given, the window's default) */
    const int device = fo.has_device ? -1 : cli_mpi_local_rank();
    char exe[4096];
    ssize_t n = form_exe ? (ssize_t)snprintf(exe, sizeof exe, "%s", form_exe)
                         : sn > 0 ? (ssize_t)snprintf(exe, sizeof exe, "%s", self) : -1;
    if (n <= 0 || (size_t)n >= sizeof exe - 1) {
        free(form_copy);
        return cli_fail(cmd, "cannot find this executable: %s", strerror(errno));
    }
    exe[n] = 0;

    /* windows, every rank the same list */
    struct window *w = NULL;
    size_t nwin = 0, cap = 0;
    struct failed_input *fi = NULL;
    size_t nfi = 0;
    int rc = CLI_OK;
    uint64_t in_digest = SARBP_MPI_HASH_SEED; /* the inputs as this rank read them */
    for (size_t k = 0; k < nin && rc == CLI_OK; k++) {
        sarbp_reader *rd = NULL;
        char error[VAL] = "";
        const sarbp_phd *m = NULL;
        if (sarbp_reader_open(&inputs[k], 1, &rd)) {
            const char *why = sarbp_error_detail(); /* it names the file, mostly */
            if (strstr(why, inputs[k])) snprintf(error, sizeof error, "%.500s", why);
            else snprintf(error, sizeof error, "cannot read '%s': %.400s", inputs[k], why);
            in_digest = sarbp_mpi_hash(in_digest, "unreadable", 10);
        } else {
            m = sarbp_reader_meta(rd);
            const uint64_t mh = sarbp_mpi_hash_meta(m);
            in_digest = sarbp_mpi_hash(sarbp_mpi_hash(in_digest, inputs[k], strlen(inputs[k]) + 1),
                                       &mh, sizeof mh);
        }
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; m && i < m->npulses; i++) {
            const double a = sarbp_phd_azimuth_deg(m, i);
            if (a < lo) lo = a;
            if (a > hi) hi = a;
        }
        if (m && (!isfinite(lo) || !isfinite(hi)))
            snprintf(error, sizeof error, "'%s': no azimuth span", inputs[k]);
        if (*error) { /* a row of its own in the summary */
            cli_info(0, "sarbp: batch: %s", error);
            sarbp_reader_free(rd);
            if (nfi % 16 == 0) {
                struct failed_input *nf = realloc(fi, (nfi + 16) * sizeof *fi);
                if (!nf) {
                    rc = cli_fail(cmd, "out of memory");
                    break;
                }
                fi = nf;
            }
            fi[nfi].input = inputs[k];
            fi[nfi].before = nwin;
            snprintf(fi[nfi].error, VAL, "%s", error);
            nfi++;
            continue;
        }
        /* what the outputs need of this input, before any window starts */
        if ((rc = check_input_needs(cmd, inputs[k], rd, &fo)) != CLI_OK) {
            sarbp_reader_free(rd);
            break;
        }
        const int own_times = sarbp_reader_times(rd) || *sarbp_reader_collection(rd)->collect_start;
        const size_t m_np = m->npulses;
        /* a step finer than the pulses repeats their sets window after
         * window; and at most (hi - lo) / step + 1 windows here, counted
         * before any is made (the list would otherwise grow until memory
         * ran out) */
        const double spacing = m_np > 1 ? (hi - lo) / (double)(m_np - 1) : 0;
        if (step < spacing) {
            sarbp_reader_free(rd);
            rc = cli_usage(cmd, "--step-deg %g%s is finer than the %g degrees between the "
                           "pulses of '%s': windows would repeat the same pulses", step,
                           have_step ? "" : " (the --window-deg)", spacing, inputs[k]);
            break;
        }
        const double more = floor((hi - lo) / step) + 1;
        if (!((double)nwin + more <= MAX_WINDOWS)) {
            sarbp_reader_free(rd);
            rc = cli_usage(cmd, "--step-deg %g%s gives %.0f windows%s over the %g degrees of "
                           "'%s': more than %d", step, have_step ? "" : " (the --window-deg)",
                           (double)nwin + more, nwin ? " in all" : "", hi - lo, inputs[k],
                           MAX_WINDOWS);
            break;
        }
        for (size_t j = 0; rc == CLI_OK; j++) {
            const double a0 = lo + (double)j * step;
            if (j > 0 && a0 >= hi) break;
            const double a1 = a0 + win, cover = (a1 < hi ? a1 : hi) - a0;
            if (j > 0 && cover < win / 2) break;
            if (nwin == MAX_WINDOWS) { /* the count above, less rounding */
                rc = cli_usage(cmd, "--step-deg %g%s gives more than %d windows", step,
                               have_step ? "" : " (the --window-deg)", MAX_WINDOWS);
                break;
            }
            if (nwin == cap) {
                cap = cap ? 2 * cap : 64;
                struct window *nw = realloc(w, cap * sizeof *w);
                if (!nw) {
                    rc = cli_fail(cmd, "out of memory");
                    break;
                }
                w = nw;
            }
            struct window *x = &w[nwin];
            memset(x, 0, sizeof *x);
            x->index = nwin++;
            x->input = inputs[k];
            /* the script's "%.6f" window and "%.7f" --azimuth, padded by 1e-6
             * degree at the data's ends so rounding never drops an edge pulse */
            x->a0 = a0;
            x->a1 = a1;
            x->p0 = j == 0 ? a0 - 1e-6 : a0;
            x->p1 = a1 >= hi ? hi + 1e-6 : a1;
            /* under --prf: form counts the pulse times from the window's
             * first pulse, so its collection start is moved on to it (the
             * same pulse range form finds for --azimuth) */
            if (prf > 0 && fo.collect_start && !own_times) {
                char az[128], *e;
                size_t i0, i1;
                snprintf(az, sizeof az, "%.7f:%.7f", x->p0, x->p1); /* as start_window gives it */
                const double q0 = strtod(az, &e), q1 = strtod(e + 1, NULL);
                if (!sarbp_phd_azimuth_range(m, q0, q1, &i0, &i1))
                    window_start_time(fo.collect_start, i0, prf, x->collect_start,
                                      sizeof x->collect_start);
            }
            set(x, "index", "%zu", x->index);
            set(x, "input", "%s", x->input);
            set(x, "az_start_deg", "%.6f", a0);
            set(x, "az_end_deg", "%.6f", a1);
            set(x, "status", "failed");
        }
        sarbp_reader_free(rd);
    }
    if (rc != CLI_OK) return batch_end(rc, w, fi, form_copy);
    if (nwin == 0 && nfi == 0)
        return batch_end(cli_fail(cmd, "no windows to form"), w, fi, form_copy);
    if (size > 1) { /* the ranks agree on what they form, or none forms */
        const int r = agree(cmd, win, step, form_args_s, in_digest, w, nwin);
        if (r != CLI_OK) return batch_end(r, w, fi, form_copy);
    }
    if (mkdir_p(outdir))
        return batch_end(cli_fail(cmd, "cannot create '%s': %s", outdir, strerror(errno)), w, fi,
                         form_copy);
    cli_info(1, "sarbp: batch: %zu windows of %g deg (step %g deg) from %zu input(s), %ld at a time%s",
             nwin, win, step, nin, jobs, size > 1 ? " on each rank" : "");

    /* this rank's windows (round robin), -j at a time, each in a slot */
    g_nslots = (int)jobs;
    g_slots = calloc((size_t)g_nslots, sizeof *g_slots);
    size_t *mine = g_slots ? malloc((nwin + 1) * sizeof *mine) : NULL, nmine = 0, next = 0;
    if (!mine) return batch_end(cli_fail(cmd, "out of memory"), w, fi, form_copy);
    sarbp_output_on_signal(pass_signal);
    long running = 0;
    for (size_t i = (size_t)rank; i < nwin; i += (size_t)size) mine[nmine++] = i;
    while (next < nmine || running > 0) {
        while (next < nmine && running < jobs) {
            struct window *x = &w[mine[next++]];
            struct slot *sl = NULL;
            for (int i = 0; i < g_nslots && !sl; i++)
                if (!g_slots[i].w) sl = &g_slots[i];
            x->t0 = sarbp_now_s();
            x->pid = start_window(exe, outdir, x, form_args, nform, threads, device, sl);
            if (x->pid < 0) {
                finish_window(outdir, x, 127 << 8, 0, sl);
                sl->w = NULL;
                cli_info(0, "%s", x->note);
            } else {
                running++;
            }
        }
        /* which child ended, without reaping it: the slot forgets the pid
         * with the signals blocked, so the handler never signals a pid
         * that is no longer ours */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT)) {
            if (errno == EINTR) continue;
            break;
        }
        const pid_t pid = si.si_pid;
        struct slot *sl = NULL;
        for (int i = 0; i < g_nslots && !sl; i++)
            if (g_slots[i].pid == pid && g_slots[i].w) sl = &g_slots[i];
        sigset_t old;
        int wst = 0;
        block_signals(&old);
        waitpid(pid, &wst, 0);
        if (sl) sl->pid = 0;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (!sl) continue;
        struct window *x = sl->w;
        x->pid = 0;
        running--;
        finish_window(outdir, x, wst, sarbp_now_s() - x->t0, sl);
        sl->w = NULL;
        if (rank == 0 || !x->ok) cli_info(x->ok ? 1 : 0, "%s", x->note);
    }

    /* records to rank 0 */
    if (size > 1) {
        char *text = mine ? pack(w, mine, nmine) : NULL;
        for (int r = 1; r < size; r++) {
            char *got = NULL;
            if (rank == r || rank == 0)
                sarbp_mpi_relay(r, rank == r && text ? text : "", 0, &got, NULL);
            if (rank == 0 && got) {
                unpack_records(w, nwin, got);
                /* the other ranks' lines, said here (their stderr is held) */
                for (size_t i = (size_t)r; i < nwin; i += (size_t)size)
                    if (*w[i].note) cli_info(w[i].ok ? 1 : 0, "%s", w[i].note);
            }
            free(got);
        }
        free(text);
    }
    free(mine);
    if (rank == 0) {
        size_t nfail = 0;
        for (size_t i = 0; i < nwin; i++) nfail += !w[i].ok;
        sarbp_status st = write_summary(outdir, w, nwin, fi, nfi, 0);
        if (!st) st = write_summary(outdir, w, nwin, fi, nfi, 1);
        if (st) {
            rc = cli_fail_status(cmd, st);
        } else {
            cli_info(1, "sarbp: batch: %zu of %zu windows formed; summary in %s/summary.csv and "
                     "%s/summary.json", nwin - nfail, nwin, outdir, outdir);
            if (nfail || nfi) {
                fprintf(stderr, "sarbp: batch: %zu window(s) and %zu input(s) failed\n", nfail,
                        nfi);
                rc = CLI_FAIL;
            }
        }
    }
    for (int i = 0; i < g_nslots; i++) discard_log(&g_slots[i]); /* none left but after a break */
    sarbp_output_on_signal(NULL);
    return batch_end(rc, w, fi, form_copy);
}
