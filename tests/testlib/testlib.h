/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every Check suite here needs and used to copy: the suite's main(),
 * a temporary folder that goes away with the process, one tree remover,
 * and a fake clock for pure-state code that takes its instants from the
 * caller (barrier.c) or reads them through one function a test can
 * replace (the agent's aclock_now).  Tests only: nothing else links it.
 */
#ifndef LOCKSTEP_TESTLIB_H
#define LOCKSTEP_TESTLIB_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

/* Runs every case of s (each in its own process unless CK_FORK=no), prints
 * Check's report (CK_VERBOSITY chooses how much; normal by default), frees
 * the suite and returns EXIT_SUCCESS, or EXIT_FAILURE when a case failed:
 * what a suite's main() returns.  The cases run with TMPDIR set to a folder
 * of their own (mode 0711: other users may pass through to a case's folder)
 * that is removed afterwards, so that what testlib_tmpdir made goes away
 * even for a case that failed or was killed.  With LOCKSTEP_KEEP_TMP set
 * nothing is removed and the folder is named on stderr, to debug. */
int testlib_main(Suite *s);

/* A new empty folder "<TMPDIR or /tmp>/<name>-XXXXXX"; its path is written
 * to dir (len bytes; 256 is plenty).  The folder and all below it are
 * removed when the process that made it returns from main() or calls exit()
 * (a Check case that passed), and with testlib_main's folder otherwise (a
 * failed case ends in _exit).  Fails the running case, naming the path,
 * when it cannot be made. */
void testlib_tmpdir(char *dir, size_t len, const char *name);

/* Removes path and everything below it, without following links.  0 (also
 * when path does not exist) or -errno of the first entry that could not be
 * removed. */
int testlib_rmtree(const char *path);

/* The fake clock: an instant in nanoseconds that only moves when told.
 * Starts at 0 in each process. */
int64_t testlib_clock_now(void);
void testlib_clock_set(int64_t now_ns);
/* Moves the clock by delta_ns (which may be negative, to test a clock
 * that steps back) and returns the new instant. */
int64_t testlib_clock_advance(int64_t delta_ns);

#define TESTLIB_SEC 1000000000LL
#define TESTLIB_MSEC 1000000LL
/* Check's cap on one failure's message (testlib_main sets it). */
#define TESTLIB_MAX_MSG (64 * 1024)

#endif
