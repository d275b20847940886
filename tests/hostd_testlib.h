/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the end-to-end tests of hostd share: a temporary folder per case
 * (testlib_tmpdir; the suites' main() is testlib_main),
 * running the real hostd binary on tmpdir/h.conf and tmpdir/g.conf, and
 * reading the run folder it leaves (always results/t). */
#ifndef LOCKSTEP_HOSTD_TESTLIB_H
#define LOCKSTEP_HOSTD_TESTLIB_H

#include <check.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

extern char tmpdir[256];
extern char hostd_path[512], agent_path[512];

void hostd_test_setup(void);
void hostd_test_teardown(void);
void write_file(const char *name, const char *text, mode_t mode);
/* The whole file in a static buffer (1 MiB), NULL if unreadable. */
char *read_text(const char *path);
/* Starts hostd (agent NULL: the built one) with extra arguments (NULL-
 * terminated, may be NULL); stderr goes to tmpdir/stderr. */
pid_t hostd_test_start(const char *agent, const char *const *extra);
/* Waits for it; its exit status (it must exit, not die of a signal). */
int hostd_test_wait(pid_t pid);
int hostd_test_run(const char *agent, const char *const *extra);
/* Waits for a hostd that must have died of a signal. */
void hostd_test_wait_signal(pid_t pid);
/* Waits (at most seconds) until results/t/barriers.ndjson holds a record:
 * the first step was released and every participant started it. */
void hostd_test_wait_first_barrier(int seconds);
/* hostd --check on tmpdir's configs with extra (a shell-quoted string):
 * its exit status, its stdout and stderr in out. */
int hostd_test_check(const char *extra, char *out, size_t size);
/* hostd's stderr of the last run ("" when none), in read_text's buffer. */
const char *hostd_stderr(void);
/* results/t must not exist: the run left no folder (the test fails else). */
void assert_no_run_folder(void);
/* Removes tmpdir/results, so that the next run may be called t again. */
void hostd_test_teardown_results(void);

/* The manifest's failures and the end of hostd's stderr, for a failing
 * assertion to show. */
const char *run_diagnosis(void);
/* A failure record of samples.ndjson and the end of its step's log, into
 * out (the log is read with read_text). */
void describe_failure(json_object *rec, char *out, size_t len);
json_object *manifest(void);
const char *jstr(json_object *o, const char *key);
/* The manifest's participants[] entry of node (the test fails without). */
json_object *participant(json_object *m, const char *node);
int64_t jint(json_object *o, const char *key);
/* Every line of results/t/<name>, parsed; *n gets the count. */
json_object **read_ndjson(const char *name, size_t *n);
void free_ndjson(json_object **v, size_t n);
/* Every line of samples.ndjson in the run folder own (a member's) is in
 * the leader's run folder lead exactly once, its node renamed
 * <member>/<node>, and lead has no other line of member's nodes (the test
 * fails otherwise): how many. */
size_t cluster_samples_once(const char *lead, const char *own, const char *member);
/* How many samples of (node, step, metric) there are. */
int count_sample(json_object **v, size_t n, const char *node, int step, const char *metric);

#endif
