/* plot.c - a PNG plot of a point target's two cuts, drawn by hand.
 *
 * Two panels side by side, one per cut: |I| in dB relative to the peak
 * against distance from the peak (m), the mainlobe (between the first
 * nulls) shaded, dashed lines at -3 dB and at the PSLR level, 10 dB grid
 * lines and labelled ticks in a built-in 5x7 bitmap font. No plotting
 * library: a few primitives on an RGB buffer, written by sarbp_png_write8 (sarbp/image.h). */
#include "sarbp/quality.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    unsigned char *p;
    int w, h;
} canvas;

typedef struct {
    unsigned char r, g, b;
} rgb;

static const rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, GRID = {222, 222, 222},
                 SHADE = {214, 228, 248}, GREEN = {0, 150, 60}, ORANGE = {230, 120, 0},
                 GREYTXT = {90, 90, 90};
static const rgb CURVE[2] = {{20, 70, 200}, {200, 30, 30}};

static void px(canvas *c, int x, int y, rgb col)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    unsigned char *q = c->p + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    q[0] = col.r;
    q[1] = col.g;
    q[2] = col.b;
}

static void fill(canvas *c, int x0, int y0, int x1, int y1, rgb col)
{
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) px(c, x, y, col);
}

static void hline(canvas *c, int x0, int x1, int y, rgb col, int dash)
{
    for (int x = x0; x <= x1; x++)
        if (!dash || (x / dash) % 2 == 0) px(c, x, y, col);
}

static void vline(canvas *c, int x, int y0, int y1, rgb col)
{
    for (int y = y0; y <= y1; y++) px(c, x, y, col);
}

static void line(canvas *c, int x0, int y0, int x1, int y1, rgb col)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        px(c, x0, y0, col);
        px(c, x0, y0 + 1, col); /* two pixels thick */
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* ---- 5x7 font: 7 rows of 5 columns, '#' set, top row first ---------------- */

static const struct {
    char c;
    const char *bits;
} font[] = {
    {' ', "..................................."},
    {'0', ".###.#...##..###.#.###..##...#.###."},
    {'1', "..#...##....#....#....#....#...###."},
    {'2', ".###.#...#....#...#...#...#...#####"},
    {'3', "#####...#...#.....#.....##...#.###."},
    {'4', "...#...##..#.#.#..#.#####...#....#."},
    {'5', "######....####.....#....##...#.###."},
    {'6', "..##..#...#....####.#...##...#.###."},
    {'7', "#####....#...#...#...#....#....#..."},
    {'8', ".###.#...##...#.###.#...##...#.###."},
    {'9', ".###.#...##...#.####....#...#..##.."},
    {'-', "...............#####..............."},
    {'+', ".......#....#..#####..#....#......."},
    {'.', "..........................##...##.."},
    {',', ".....................##....#...#..."},
    {':', "......##...##........##...##......."},
    {'=', "..........#####.....#####.........."},
    {'(', "...#...#...#....#....#.....#.....#."},
    {')', ".#.....#.....#....#....#...#...#..."},
    {'/', ".........#...#...#...#...#........."},
    {'%', "##...##..#...#...#...#...#..##...##"},
    {'_', "..............................#####"},
    {'|', "..#....#....#....#....#....#....#.."},
    {'A', ".###.#...##...#######...##...##...#"},
    {'B', "####.#...##...#####.#...##...#####."},
    {'C', ".###.#...##....#....#....#...#.###."},
    {'D', "###..#..#.#...##...##...##..#.###.."},
    {'E', "######....#....####.#....#....#####"},
    {'F', "######....#....####.#....#....#...."},
    {'G', ".###.#...##....#.####...##...#.####"},
    {'H', "#...##...##...#######...##...##...#"},
    {'I', ".###...#....#....#....#....#...###."},
    {'J', "..###...#....#....#....#.#..#..##.."},
    {'K', "#...##..#.#.#..##...#.#..#..#.#...#"},
    {'L', "#....#....#....#....#....#....#####"},
    {'M', "#...###.###.#.##.#.##...##...##...#"},
    {'N', "#...##...###..##.#.##..###...##...#"},
    {'O', ".###.#...##...##...##...##...#.###."},
    {'P', "####.#...##...#####.#....#....#...."},
    {'Q', ".###.#...##...##...##.#.##..#..##.#"},
    {'R', "####.#...##...#####.#.#..#..#.#...#"},
    {'S', ".#####....#.....###.....#....#####."},
    {'T', "#####..#....#....#....#....#....#.."},
    {'U', "#...##...##...##...##...##...#.###."},
    {'V', "#...##...##...##...##...#.#.#...#.."},
    {'W', "#...##...##...##.#.##.#.##.#.#.#.#."},
    {'X', "#...##...#.#.#...#...#.#.#...##...#"},
    {'Y', "#...##...#.#.#...#....#....#....#.."},
    {'Z', "#####....#...#...#...#...#....#####"},
    {'a', "...........###.....#.#####...#.####"},
    {'b', "#....#....#.##.##..##...##...#####."},
    {'c', "...........###.#....#....#...#.###."},
    {'d', "....#....#.##.##..###...##...#.####"},
    {'e', "...........###.#...#######.....###."},
    {'f', "..##..#..#.#...###...#....#....#..."},
    {'g', "......#####...##...#.####....#.###."},
    {'h', "#....#....#.##.##..##...##...##...#"},
    {'i', "..#........##....#....#....#...###."},
    {'j', "...#........##....#....#.#..#..##.."},
    {'k', "#....#....#..#.#.#..##...#.#..#..#."},
    {'l', ".##....#....#....#....#....#...###."},
    {'m', "..........##.#.#.#.##.#.##...##...#"},
    {'n', "..........#.##.##..##...##...##...#"},
    {'o', "...........###.#...##...##...#.###."},
    {'p', "..........####.#...#####.#....#...."},
    {'q', "...........##.##..##.####....#....#"},
    {'r', "..........#.##.##..##....#....#...."},
    {'s', "...........###.#.....###.....#####."},
    {'t', ".#....#...###...#....#....#..#..##."},
    {'u', "..........#...##...##...##..##.##.#"},
    {'v', "..........#...##...##...#.#.#...#.."},
    {'w', "..........#...##...##.#.##.#.#.#.#."},
    {'x', "..........#...#.#.#...#...#.#.#...#"},
    {'y', "..........#...##...#.####....#.###."},
    {'z', "..........#####...#...#...#...#####"},
};

static const char *glyph(char ch)
{
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == ch) return font[i].bits;
    return NULL;
}

static int text_width(const char *s) { return (int)strlen(s) * 6 - 1; }

static void text(canvas *c, int x, int y, const char *s, rgb col)
{
    for (; *s; s++, x += 6) {
        const char *g = glyph(*s);
        if (!g) { /* unknown character: an outline box */
            for (int r = 0; r < 7; r++)
                for (int k = 0; k < 5; k++)
                    if (r == 0 || r == 6 || k == 0 || k == 4) px(c, x + k, y + r, col);
            continue;
        }
        for (int r = 0; r < 7; r++)
            for (int k = 0; k < 5; k++)
                if (g[r * 5 + k] == '#') px(c, x + k, y + r, col);
    }
}

/* ---- panels ---------------------------------------------------------------- */

/* A "nice" tick step (1, 2 or 5 x 10^k) giving about n ticks over span. */
static double nice_step(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void fmt_db(char *b, size_t n, const char *name, double v)
{
    if (isfinite(v)) snprintf(b, n, "%s %.2f dB", name, v);
    else snprintf(b, n, "%s n/a", name);
}

static void panel(canvas *c, const sarbp_pt_cut *cut, int idx, int x0, int x1, int y0, int y1)
{
    char b[128], b2[64];
    if (isfinite(cut->irw_m))
        snprintf(b, sizeof b, "cut %d, %.0f deg: IRW %.4g m", idx + 1, cut->angle_deg, cut->irw_m);
    else
        snprintf(b, sizeof b, "cut %d, %.0f deg: IRW n/a", idx + 1, cut->angle_deg);
    text(c, x0, y0 - 30, b, CURVE[idx]);
    fmt_db(b, sizeof b, "PSLR", cut->pslr_db);
    fmt_db(b2, sizeof b2, "ISLR", cut->islr_db);
    strncat(b, "  ", sizeof b - strlen(b) - 1);
    strncat(b, b2, sizeof b - strlen(b) - 1);
    text(c, x0, y0 - 18, b, CURVE[idx]);

    double floor_db = -60;
    if (isfinite(cut->pslr_db) && cut->pslr_db < -45) floor_db = -10 * ceil((15 - cut->pslr_db) / 10);
    if (floor_db < -120) floor_db = -120;
    const double smin = cut->n ? cut->s_m[0] : -1, smax = cut->n > 1 ? cut->s_m[cut->n - 1] : 1;
    const double span = smax > smin ? smax - smin : 1;
#define XP(s) (x0 + (int)lround(((s)-smin) / span * (x1 - x0)))
#define YP(d) (y0 + (int)lround((-(d)) / (-floor_db) * (y1 - y0)))

    if (isfinite(cut->null_lo_m) && isfinite(cut->null_hi_m))
        fill(c, XP(cut->null_lo_m), y0, XP(cut->null_hi_m), y1, SHADE);
    for (double d = 0; d >= floor_db - 1e-9; d -= 10) {
        hline(c, x0, x1, YP(d), GRID, 0);
        snprintf(b, sizeof b, "%.0f", d);
        text(c, x0 - 4 - text_width(b), YP(d) - 3, b, BLACK);
    }
    const double step = nice_step(span, 6);
    for (double s = ceil(smin / step) * step; s <= smax + 1e-9 * span; s += step) {
        int x = XP(s);
        vline(c, x, y0, y1, GRID);
        vline(c, x, y1, y1 + 3, BLACK);
        snprintf(b, sizeof b, "%.3g", fabs(s) < 1e-9 * span ? 0.0 : s);
        text(c, x - text_width(b) / 2, y1 + 6, b, BLACK);
    }
    hline(c, x0, x1, YP(-3.0), GREEN, 4);
    if (isfinite(cut->pslr_db) && cut->pslr_db > floor_db) hline(c, x0, x1, YP(cut->pslr_db), ORANGE, 4);

    if (cut->peak > 0) {
        int lx = 0, ly = 0;
        for (size_t i = 0; i < cut->n; i++) {
            double d = cut->mag[i] > 0 ? 20 * log10(cut->mag[i] / cut->peak) : floor_db;
            if (d < floor_db) d = floor_db;
            if (d > 0) d = 0;
            int x = XP(cut->s_m[i]), y = YP(d);
            if (i > 0) line(c, lx, ly, x, y, CURVE[idx]);
            else px(c, x, y, CURVE[idx]);
            lx = x;
            ly = y;
        }
    }
#undef XP
#undef YP
    /* frame */
    hline(c, x0, x1, y0, BLACK, 0);
    hline(c, x0, x1, y1, BLACK, 0);
    vline(c, x0, y0, y1, BLACK);
    vline(c, x1, y0, y1, BLACK);
    const char *xl = "m from peak";
    text(c, (x0 + x1) / 2 - text_width(xl) / 2, y1 + 17, xl, GREYTXT);
}

sarbp_status sarbp_pointtarget_plot(const char *path, const sarbp_pt_result *r, size_t width,
                                    size_t height)
{
    if (!path || !r) return sarbp_error(SARBP_ERR_INVALID, "sarbp_pointtarget_plot: missing path or result");
    if (width < 320 || height < 200 || width > 8192 || height > 8192)
        return sarbp_error(SARBP_ERR_INVALID, "plot size %zu x %zu is outside 320 x 200 .. 8192 x 8192",
                           width, height);
    canvas c = {malloc(width * height * 3), (int)width, (int)height};
    if (!c.p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a %zu x %zu plot", width, height);
    fill(&c, 0, 0, c.w - 1, c.h - 1, WHITE);

    char b[160];
    snprintf(b, sizeof b, "point target at x %.3f m, y %.3f m   peak |I| %.4g   (dB re peak)", r->x,
             r->y, r->peak);
    text(&c, 8, 5, b, BLACK);
    const int top = 52, bottom = c.h - 32;
    for (int k = 0; k < 2; k++) {
        int left = k * c.w / 2 + 34, right = (k + 1) * c.w / 2 - 14;
        panel(&c, &r->cut[k], k, left, right, top, bottom);
    }
    sarbp_status st = sarbp_png_write8(path, c.p, width, height, 3);
    free(c.p);
    return st;
}

sarbp_status sarbp_phase_plot(const char *path, const char *title, const double *v, size_t n,
                              size_t width, size_t height)
{
    if (!path || !v || n == 0) return sarbp_error(SARBP_ERR_INVALID, "sarbp_phase_plot: nothing to plot");
    if (width < 320 || height < 200 || width > 8192 || height > 8192)
        return sarbp_error(SARBP_ERR_INVALID, "plot size %zu x %zu is outside 320 x 200 .. 8192 x 8192",
                           width, height);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return sarbp_error(SARBP_ERR_INVALID, "sarbp_phase_plot: value %zu is not finite", i);
    canvas c = {malloc(width * height * 3), (int)width, (int)height};
    if (!c.p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a %zu x %zu plot", width, height);
    fill(&c, 0, 0, c.w - 1, c.h - 1, WHITE);
    text(&c, 8, 5, title ? title : "", BLACK);
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    if (hi - lo < 1e-3) { /* a flat line: a band of +-0.1 rad around it */
        lo -= 0.1;
        hi += 0.1;
    }
    const double ystep = nice_step(hi - lo, 6);
    lo = floor(lo / ystep) * ystep;
    hi = ceil(hi / ystep) * ystep;
    const int x0 = 60, x1 = c.w - 14, y0 = 24, y1 = c.h - 32;
    const double xspan = n > 1 ? (double)(n - 1) : 1.0;
#define XP(i) (x0 + (int)lround((double)(i) / xspan * (x1 - x0)))
#define YP(d) (y1 - (int)lround(((d) - lo) / (hi - lo) * (y1 - y0)))
    char b[64];
    for (double d = lo; d <= hi + 1e-9 * ystep; d += ystep) {
        hline(&c, x0, x1, YP(d), GRID, 0);
        snprintf(b, sizeof b, "%.3g", fabs(d) < 1e-9 * ystep ? 0.0 : d);
        text(&c, x0 - 4 - text_width(b), YP(d) - 3, b, BLACK);
    }
    const double xstep = nice_step(xspan, 8);
    for (double s = 0; s <= xspan + 1e-9; s += xstep) {
        vline(&c, XP(s), y0, y1, GRID);
        vline(&c, XP(s), y1, y1 + 3, BLACK);
        snprintf(b, sizeof b, "%.0f", s);
        text(&c, XP(s) - text_width(b) / 2, y1 + 6, b, BLACK);
    }
    for (size_t i = 1; i < n; i++) line(&c, XP(i - 1), YP(v[i - 1]), XP(i), YP(v[i]), CURVE[0]);
    if (n == 1) px(&c, XP(0), YP(v[0]), CURVE[0]);
#undef XP
#undef YP
    hline(&c, x0, x1, y0, BLACK, 0);
    hline(&c, x0, x1, y1, BLACK, 0);
    vline(&c, x0, y0, y1, BLACK);
    vline(&c, x1, y0, y1, BLACK);
    const char *xl = "pulse", *yl = "rad";
    text(&c, (x0 + x1) / 2 - text_width(xl) / 2, y1 + 17, xl, GREYTXT);
    text(&c, 8, y0 - 12, yl, GREYTXT);
    sarbp_status st = sarbp_png_write8(path, c.p, width, height, 3);
    free(c.p);
    return st;
}
