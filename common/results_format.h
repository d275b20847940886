/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results folder's format version (docs/results.md, the manifest's
 * schema_version): hostd writes it, hostctl refuses a folder of another.
 * One definition for both, so that they cannot drift apart; raise it with
 * any change that an older hostctl would read wrongly.
 */
#ifndef LOCKSTEP_RESULTS_FORMAT_H
#define LOCKSTEP_RESULTS_FORMAT_H

#define RESULTS_SCHEMA_VERSION 1

#endif
