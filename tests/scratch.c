/* scratch.c - folders and files in the tests' scratch directory (scratch.h). */
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

const char *tu_fresh_dir(const char *name)
{
    static char slots[4][512];
    static int next;
    char *d = slots[next++ & 3];
    snprintf(d, sizeof slots[0], "%s/%s", SARBP_TEST_TMP, name);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", d, d);
    assert_int_equal(system(cmd), 0);
    return d;
}

void tu_remove_dir(const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

const char *tu_in_dir(const char *dir, const char *name)
{
    static char slots[8][1024];
    static int next;
    char *p = slots[next++ & 7];
    snprintf(p, sizeof slots[0], "%s/%s", dir, name);
    return p;
}

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open '%s': %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

void tu_assert_dir_holds_tmp(const char *dir, const char *const *names, int allow_tmp, int *ntmp)
{
    size_t want = 0;
    while (names[want]) want++;
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open '%s': %s", dir, strerror(errno));
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int known = 0;
        for (size_t i = 0; i < want && !known; i++) known = !strcmp(e->d_name, names[i]);
        if (!known && allow_tmp && strstr(e->d_name, ".tmp-")) {
            (*ntmp)++;
            continue;
        }
        if (!known) {
            closedir(d);
            fail_msg("'%s' holds '%s', which should not be there", dir, e->d_name);
        }
        n++;
    }
    closedir(d);
    if (n != want) fail_msg("'%s' holds %zu entries, want %zu", dir, n, want);
}

void tu_no_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp-")) fail_msg("'%s/%s' was left", dir, e->d_name);
    closedir(d);
}

void tu_nothing_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open '%s': %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) fail_msg("'%s/%s' was left", dir, e->d_name);
    closedir(d);
}

void tu_assert_regular(const char *path)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISREG(st.st_mode)) fail_msg("'%s' is not a file of its own", path);
}

void tu_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) fail_msg("cannot create '%s': %s", path, strerror(errno));
    fputs(text, f);
    if (fclose(f) != 0) fail_msg("cannot write '%s': %s", path, strerror(errno));
}

char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    char *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (!b) return NULL;
    b[n] = '\0';
    if (len) *len = (size_t)n;
    return b;
}

int tu_read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
    return 0;
}

void tu_assert_text(const char *path, const char *text)
{
    size_t n;
    char *s = tu_slurp(path, &n);
    if (!s) fail_msg("cannot read '%s': %s", path, strerror(errno));
    if (n != strlen(text) || memcmp(s, text, n)) {
        char held[512];
        snprintf(held, sizeof held, "%s", s);
        free(s);
        fail_msg("'%s' holds '%s', want '%s'", path, held, text);
    }
    free(s);
}
