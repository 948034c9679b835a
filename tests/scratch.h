/* scratch.h - folders and files in the tests' scratch directory
 * (SARBP_TEST_TMP): made fresh, filled, read back and checked for what a
 * run left there. Each helper fails the test (cmocka) when the file system
 * refuses it; none removes anything outside the folder it is given. */
#ifndef SARBP_TEST_SCRATCH_H
#define SARBP_TEST_SCRATCH_H

#include <stddef.h>

/* An empty folder SARBP_TEST_TMP/<name> (removed with what it holds and made
 * again). Returns a static buffer slot (4 rotate). */
const char *tu_fresh_dir(const char *name);

/* dir and what it holds removed (rm -rf): not there afterwards, for a run
 * that must create it. */
void tu_remove_dir(const char *dir);

/* "<dir>/<name>" in a static buffer slot (8 rotate). */
const char *tu_in_dir(const char *dir, const char *name);

/* Entries of dir other than . and .. (temporaries included). */
int tu_count_entries(const char *dir);

/* The folder holds exactly the names given (NULL-terminated), in any order;
 * with allow_tmp, also temporaries ("*.tmp-*"), which are counted into
 * *ntmp. */
void tu_assert_dir_holds_tmp(const char *dir, const char *const *names, int allow_tmp, int *ntmp);
#define tu_assert_dir_holds(dir, names) tu_assert_dir_holds_tmp(dir, names, 0, NULL)
#define TU_NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* No name in dir holds ".tmp-" (a temporary of sarbp's); a folder that is
 * not there holds none. */
void tu_no_temporaries(const char *dir);

/* No name in dir starts with prefix: no output and no temporary of it. */
void tu_nothing_named(const char *dir, const char *prefix);

/* path is a regular file of its own (not a link, not a folder). */
void tu_assert_regular(const char *path);

/* Creates (or truncates) path holding text. */
void tu_write_text(const char *path, const char *text);

/* The whole file, NUL-terminated, malloc'd (the caller frees), its length
 * in *len (len may be NULL); NULL when it cannot be read. */
char *tu_slurp(const char *path, size_t *len);

/* The whole file into buf (n bytes, NUL-terminated, truncated); -1 when it
 * cannot be read (errno set), else 0. */
int tu_read_text(const char *path, char *buf, size_t n);

/* path holds exactly text. */
void tu_assert_text(const char *path, const char *text);

#endif
