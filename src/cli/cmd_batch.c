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
 * rank running -j of its own at a time, and rank 0 collects the records and
 * writes the summary. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "sarbp/mpi.h"

#define MAX_INPUTS 4096
#define MAX_FORM_ARGS 128

static void help(void)
{
    printf(
"usage: sarbp batch [options] -o OUTDIR INPUT...\n"
"\n"
"Forms one image per azimuth window of each INPUT (a Gotcha-style directory, a\n"
"glob in quotes, or a phase-history file readable by 'sarbp form'): windows\n"
"[A, A+W) degrees from the input's first azimuth, stepping S; the last window is\n"
"kept when at least half of it holds data. Per window it writes OUTDIR/win_NNN.png\n"
"and OUTDIR/win_NNN.h5 (NNN counts over all inputs) and a log OUTDIR/win_NNN.log\n"
"(the 'sarbp form -v' output); at the end OUTDIR/summary.csv and summary.json.\n"
"\n"
"options:\n"
"  -o, --output OUTDIR   output folder (created; required)\n"
"  -j, --jobs N          windows formed at once (default: the number of cores; each\n"
"                        form gets --threads cores/N, at least 1, unless --form-args\n"
"                        sets --threads). Under MPI: per rank, over its node's cores\n"
"                        shared by the node's ranks\n"
"      --window-deg W    window width in degrees (default 1)\n"
"      --step-deg S      step between window starts in degrees (default: W)\n"
"      --form-args ARGS  more 'sarbp form' options, one string, split on spaces,\n"
"                        e.g. \"--grid 512x512 --spacing 0.2 --backend cpu\"\n"
"      --sarbp PATH      the executable run as 'PATH form ...' per window (default:\n"
"                        this sarbp)\n"
"  -q, --quiet           no per-window lines\n"
"  -h, --help            show this help\n"
"\n"
"Under mpirun/srun the windows are shared out over the ranks; rank 0 writes the\n"
"summary, which is the same as a one-process run's.\n"
"\n"
"summary columns (CSV header; the same keys in the JSON array of objects):\n"
"  index, input, az_start_deg, az_end_deg (the window), pulses, nx, ny, dx_m, dy_m\n"
"  (the grid), backend, precision, seconds (wall clock of the 'sarbp form' run,\n"
"  reading and writing included), mbps (pixel-pulse pairs per wall second / 1e6),\n"
"  entropy (nats, as 'sarbp metrics'), peak (largest pixel magnitude), png, h5,\n"
"  status (ok or failed).\n"
"\n"
"exit codes: 0 every window formed; 1 some window or input failed (the rest are\n"
"still formed and summarised); 2 usage error.\n");
}

enum { OPT_WINDOW_DEG = 256, OPT_STEP_DEG, OPT_FORM_ARGS, OPT_SARBP };

static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"jobs", required_argument, NULL, 'j'},
    {"window-deg", required_argument, NULL, OPT_WINDOW_DEG},
    {"step-deg", required_argument, NULL, OPT_STEP_DEG},
    {"form-args", required_argument, NULL, OPT_FORM_ARGS},
    {"sarbp", required_argument, NULL, OPT_SARBP},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* The summary's columns, in order; a record holds one value per key. */
static const char *const keys[] = {"index", "input", "az_start_deg", "az_end_deg", "pulses",
                                   "nx", "ny", "dx_m", "dy_m", "backend", "precision", "seconds",
                                   "mbps", "entropy", "peak", "png", "h5", "status"};
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
};

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

static pid_t start_window(const char *exe, const char *outdir, struct window *w, char **form_args,
                          int nform, int threads)
{
    char tag[64], png[4096], h5[4096], logp[4096], az[128], th[32];
    snprintf(tag, sizeof tag, "win_%03zu", w->index);
    snprintf(png, sizeof png, "%s/%s.png", outdir, tag);
    snprintf(h5, sizeof h5, "%s/%s.h5", outdir, tag);
    snprintf(logp, sizeof logp, "%s/%s.log", outdir, tag);
    snprintf(az, sizeof az, "%.7f:%.7f", w->p0, w->p1);
    snprintf(th, sizeof th, "%d", threads);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) return pid; /* parent, or -1 */
    int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) _exit(127);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]);
    char *argv[16 + MAX_FORM_ARGS];
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
    for (int i = 0; i < nform; i++) argv[n++] = form_args[i];
    argv[n++] = "-o";
    argv[n++] = png;
    argv[n++] = "-o";
    argv[n++] = h5;
    argv[n] = NULL;
    execv(exe, argv);
    fprintf(stderr, "sarbp: batch: cannot run '%s': %s\n", exe, strerror(errno));
    _exit(127);
}

/* After the child: the log's sizes line, the image's grid and statistics. */
static void finish_window(const char *outdir, struct window *w, int wstatus, double secs)
{
    char tag[64], png[4096], h5[4096], logp[4096], line[4096], first_err[1024] = "", last[1024] = "";
    snprintf(tag, sizeof tag, "win_%03zu", w->index);
    snprintf(png, sizeof png, "%s/%s.png", outdir, tag);
    snprintf(h5, sizeof h5, "%s/%s.h5", outdir, tag);
    snprintf(logp, sizeof logp, "%s/%s.log", outdir, tag);
    w->ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    set(w, "seconds", "%.3f", secs);
    size_t pulses = 0;
    FILE *f = fopen(logp, "r");
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
                continue;
            }
        }
        if (!*first_err && strstr(line, "sarbp:") && !strstr(line, "using the cpu"))
            snprintf(first_err, sizeof first_err, "%.1000s", line);
    }
    if (f) fclose(f);
    double nx = 0, ny = 0;
    if (w->ok) {
        sarbp_image *img = NULL;
        sarbp_image_stats s;
        sarbp_status st = sarbp_image_read(h5, &img);
        if (!st) st = sarbp_quality_image_stats(img, &s);
        if (st) {
            w->ok = 0;
            snprintf(first_err, sizeof first_err, "sarbp: metrics: %s", sarbp_error_detail());
            FILE *lf = fopen(logp, "a");
            if (lf) {
                fprintf(lf, "%s\n", first_err);
                fclose(lf);
            }
        } else {
            nx = (double)img->grid.nx;
            ny = (double)img->grid.ny;
            set(w, "nx", "%zu", img->grid.nx);
            set(w, "ny", "%zu", img->grid.ny);
            set(w, "dx_m", "%.10g", img->grid.dx);
            set(w, "dy_m", "%.10g", img->grid.dy);
            set(w, "entropy", "%.10g", s.entropy);
            set(w, "peak", "%.10g", s.max_mag);
        }
        sarbp_image_free(img);
    }
    if (have_sizes && nx > 0 && secs > 0)
        set(w, "mbps", "%.1f", (double)pulses * nx * ny / secs / 1e6);
    if (w->ok) {
        set(w, "png", "%s", png);
        set(w, "h5", "%s", h5);
        set(w, "status", "ok");
        snprintf(w->note, sizeof w->note, "sarbp: batch: %s %.6f:%.6f deg: %.30s pulses, %.30sx%.30s, %.3f s",
                 tag, w->a0, w->a1, have_sizes ? w->val[4] : "?", w->val[5], w->val[6], secs);
    } else {
        unlink(png);
        unlink(h5);
        set(w, "status", "failed");
        if (!*first_err && WIFSIGNALED(wstatus))
            snprintf(first_err, sizeof first_err, "killed by signal %d", WTERMSIG(wstatus));
        snprintf(w->note, sizeof w->note, "sarbp: batch: window %s (%.6f:%.6f deg of '%.300s') failed: %.600s",
                 tag, w->a0, w->a1, w->input, *first_err ? first_err : last);
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
    if (!strpbrk(s, ",\"\n")) {
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
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '\\' || *s == '"') fputc('\\', f);
            fputc(*s, f);
        }
        fputc('"', f);
    }
}

/* Writes path through path.tmp, renamed when complete. */
static int write_summary(const char *outdir, struct window *w, size_t nwin, int json)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/summary.%s", outdir, json ? "json" : "csv");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    if (json) fputs("[\n", f);
    else
        for (size_t k = 0; k < NKEYS; k++) fprintf(f, "%s%s", k ? "," : "", keys[k]);
    if (!json) fputc('\n', f);
    for (size_t i = 0; i < nwin; i++) {
        if (json) fputs(i ? ",\n  {" : "  {", f);
        for (size_t k = 0; k < NKEYS; k++) {
            if (json) {
                fprintf(f, "%s\"%s\": ", k ? ", " : "", keys[k]);
                json_field(f, keys[k], w[i].val[k]);
            } else {
                if (k) fputc(',', f);
                csv_field(f, w[i].val[k]);
            }
        }
        fputs(json ? "}" : "\n", f);
    }
    if (json) fputs("\n]\n", f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
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

int cmd_batch(int argc, char **argv)
{
    const char *cmd = "batch";
    const char *outdir = NULL, *form_args_s = "", *form_exe = NULL;
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
            if (cli_parse_double(optarg, 0, 360, &win) || !(win > 0))
                return cli_usage(cmd, "--window-deg wants degrees in (0, 360], not '%s'", optarg);
            break;
        case OPT_STEP_DEG:
            if (cli_parse_double(optarg, 0, 360, &step) || !(step > 0))
                return cli_usage(cmd, "--step-deg wants degrees in (0, 360], not '%s'", optarg);
            break;
        case OPT_FORM_ARGS: form_args_s = optarg; break;
        case OPT_SARBP: form_exe = optarg; break;
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
    if (!(step > 0)) step = win;

    char *form_copy = strdup(form_args_s), *form_args[MAX_FORM_ARGS], *save = NULL;
    int nform = 0, has_threads = 0;
    for (char *t = form_copy ? strtok_r(form_copy, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
        if (nform == MAX_FORM_ARGS) {
            free(form_copy);
            return cli_usage(cmd, "--form-args holds too many options (at most %d)", MAX_FORM_ARGS);
        }
        if (!strncmp(t, "--threads", 9)) has_threads = 1;
        form_args[nform++] = t;
    }
    const int rank = sarbp_mpi_rank(), size = sarbp_mpi_size();
    const int local = cli_mpi_local_size();
    int ncores = sarbp_cpu_count() / local;
    if (ncores < 1) ncores = 1;
    if (jobs == 0) jobs = ncores;
    const int threads = has_threads ? 0 : (ncores / (int)jobs > 0 ? ncores / (int)jobs : 1);
    char exe[4096];
    ssize_t n = form_exe ? (ssize_t)snprintf(exe, sizeof exe, "%s", form_exe)
                         : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1) {
        free(form_copy);
        return cli_fail(cmd, "cannot find this executable: %s", strerror(errno));
    }
    exe[n] = 0;
    if (mkdir_p(outdir)) {
        free(form_copy);
        return cli_fail(cmd, "cannot create '%s': %s", outdir, strerror(errno));
    }

    /* windows, every rank the same list */
    struct window *w = NULL;
    size_t nwin = 0, cap = 0;
    int failed_inputs = 0;
    for (size_t k = 0; k < nin; k++) {
        sarbp_reader *rd = NULL;
        if (sarbp_reader_open(&inputs[k], 1, &rd)) {
            cli_info(0, "sarbp: batch: cannot read '%s': %s", inputs[k], sarbp_error_detail());
            failed_inputs++;
            continue;
        }
        const sarbp_phd *m = sarbp_reader_meta(rd);
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < m->npulses; i++) {
            const double a = sarbp_phd_azimuth_deg(m, i);
            if (a < lo) lo = a;
            if (a > hi) hi = a;
        }
        sarbp_reader_free(rd);
        if (!isfinite(lo) || !isfinite(hi)) {
            cli_info(0, "sarbp: batch: '%s': no azimuth span", inputs[k]);
            failed_inputs++;
            continue;
        }
        for (size_t j = 0;; j++) {
            const double a0 = lo + (double)j * step;
            if (j > 0 && a0 >= hi) break;
            const double a1 = a0 + win, cover = (a1 < hi ? a1 : hi) - a0;
            if (j > 0 && cover < win / 2) break;
            if (nwin == cap) {
                cap = cap ? 2 * cap : 64;
                struct window *nw = realloc(w, cap * sizeof *w);
                if (!nw) {
                    free(w);
                    free(form_copy);
                    return cli_fail(cmd, "out of memory");
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
            set(x, "index", "%zu", x->index);
            set(x, "input", "%s", x->input);
            set(x, "az_start_deg", "%.6f", a0);
            set(x, "az_end_deg", "%.6f", a1);
            set(x, "status", "failed");
        }
    }
    if (nwin == 0) {
        free(w);
        free(form_copy);
        return cli_fail(cmd, "no windows to form");
    }
    cli_info(1, "sarbp: batch: %zu windows of %g deg (step %g deg) from %zu input(s), %ld at a time%s",
             nwin, win, step, nin, jobs, size > 1 ? " on each rank" : "");

    /* this rank's windows (round robin), -j at a time */
    size_t *mine = malloc(nwin * sizeof *mine), nmine = 0, next = 0;
    long running = 0;
    for (size_t i = (size_t)rank; mine && i < nwin; i += (size_t)size) mine[nmine++] = i;
    while (mine && (next < nmine || running > 0)) {
        while (next < nmine && running < jobs) {
            struct window *x = &w[mine[next++]];
            x->t0 = sarbp_now_s();
            x->pid = start_window(exe, outdir, x, form_args, nform, threads);
            if (x->pid < 0) {
                finish_window(outdir, x, 127 << 8, 0);
                cli_info(1, "%s", x->note);
            } else {
                running++;
            }
        }
        int wst;
        pid_t pid = waitpid(-1, &wst, 0);
        if (pid < 0) break;
        for (size_t m = 0; m < nmine; m++) {
            struct window *x = &w[mine[m]];
            if (x->pid != pid) continue;
            x->pid = 0;
            running--;
            finish_window(outdir, x, wst, sarbp_now_s() - x->t0);
            if (rank == 0 || !x->ok) cli_info(x->ok ? 1 : 0, "%s", x->note);
            break;
        }
    }

    /* records to rank 0 */
    int rc = CLI_OK;
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
        if (write_summary(outdir, w, nwin, 0) || write_summary(outdir, w, nwin, 1)) {
            rc = cli_fail(cmd, "cannot write the summary in '%s': %s", outdir, strerror(errno));
        } else {
            cli_info(1, "sarbp: batch: %zu of %zu windows formed; summary in %s/summary.csv and "
                     "%s/summary.json", nwin - nfail, nwin, outdir, outdir);
            if (nfail || failed_inputs) {
                fprintf(stderr, "sarbp: batch: %zu window(s) and %d input(s) failed\n", nfail,
                        failed_inputs);
                rc = CLI_FAIL;
            }
        }
    }
    free(w);
    free(form_copy);
    return rc;
}
