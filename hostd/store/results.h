/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run's folder, as DESIGN.md lays it out:
 *   manifest.json  config/  samples.ndjson  barriers.ndjson  nodes/<node>/
 *
 * Records are handed to a writer thread of their own, so that the loop that
 * releases barriers never waits for a disk.  The writer appends whatever is
 * queued and then calls fdatasync once for the files it touched (group
 * commit): every record that reached the queue is on disk one sync later,
 * and a run cut short keeps every record that was synced.
 * Functions return 0 or -errno.
 */
#ifndef LOCKSTEP_RESULTS_H
#define LOCKSTEP_RESULTS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "results_format.h" /* RESULTS_SCHEMA_VERSION, the manifest's */

struct results;

/* Creates DIR/RUN (refusing one that exists, and a RUN that is not a safe
 * name) with config/ and nodes/, opens the NDJSON files and starts the
 * writer. */
int results_open(const char *dir, const char *run, struct results **out);
/* The same, for a run of another user's (hostd under the service): the
 * folders it makes get group (the submitter's gid), mode 0750, so that
 * their work folders can be reached; files are 0640.  DIR is opened once
 * (O_DIRECTORY|O_NOFOLLOW) and everything below goes through that fd:
 * a run folder moved or replaced during the run fails the next file
 * opened and the manifest (-ESTALE), never written elsewhere. */
int results_open_as(const char *dir, const char *run, gid_t group, struct results **out);
/* Drains the queue, stops the writer; returns the first write error the
 * writer met (0 if none).  Accepts NULL. */
int results_close(struct results *r);
/* As results_close, and the run folder is removed with all in it: a run
 * that ended before its first step keeps no folder holding its name.
 * Removes it only while it is the folder results_open made (-ESTALE else,
 * and it stays).  0 or -errno of the removal.  Accepts NULL. */
int results_discard(struct results *r);
/* The first write error so far (0 if none), and the file it concerned. */
int results_error(struct results *r, const char **what);
/* Blocks until everything queued so far is on disk. */
void results_flush(struct results *r);

const char *results_path(const struct results *r);
/* A config's text into config/<as_name> (synchronously, created anew). */
int results_save_config(struct results *r, const char *text, size_t len, const char *as_name);
/* Opens rel below the run folder with flags (O_NOFOLLOW and O_CLOEXEC
 * added), never through a link in any component; an fd or -errno
 * (-ESTALE: the run folder was moved or replaced). */
int results_open_file(struct results *r, const char *rel, int flags, mode_t mode);
/* rel (a folder below the run folder, never through a link) becomes
 * uid:gid's: a folder the submitter's programs write into. */
int results_give_dir(struct results *r, const char *rel, uid_t uid, gid_t gid);
/* rel (a folder below the run folder) stays ours but gid may write into
 * it, sticky (01770): what the submitter's programs make there is theirs,
 * and what we made stays. */
int results_share_dir(struct results *r, const char *rel, gid_t gid);
/* nodes/<node>/work, made and, with uid not (uid_t)-1, given to uid:gid:
 * a local agent's work folder.  *path_out (may be NULL) to free. */
int results_work_dir(struct results *r, const char *node, uid_t uid, gid_t gid, char **path_out);
/* nodes/<node>/ (created on first use); node must be proto_name_valid. */
int results_node_dir(struct results *r, const char *node, char **path_out);

/* Queued appends.  Raw output goes to nodes/<node>/step-<k>.out. */
int results_append_output(struct results *r, const char *node, uint32_t step, const char *data,
			  size_t len);
void results_append_sample(struct results *r, json_object *record);

/* Monitor data waiting for the writer at most; past it appends are
 * refused (-ENOBUFS) until the disk catches up. */
#define RESULTS_MONITOR_QUEUED_MAX (32u << 20)
/* nodes/<node>/monitors/, made now (synchronously, once per node is
 * enough); -ENOTDIR when it or nodes/<node> is not a real folder. */
int results_monitor_dir(struct results *r, const char *node);
/* Queued append to nodes/<node>/monitors/<file>, group-committed like
 * samples.  file is a name the caller picks from a fixed set, never one a
 * peer sends.  -EINVAL for a bad node or file name; -ENOBUFS while over
 * RESULTS_MONITOR_QUEUED_MAX. */
int results_append_monitor(struct results *r, const char *node, const char *file, const char *data,
			   size_t len);
void results_append_barrier(struct results *r, json_object *record);
/* Every sample and barrier line as it is queued (its text, ending in a
 * newline), on the caller's thread: a cluster member's records go to its
 * leader too (run/run_cluster_records.c).  fn NULL: none. */
enum results_line { RESULTS_LINE_SAMPLE, RESULTS_LINE_BARRIER };
typedef void (*results_tee_fn)(void *data, enum results_line kind, const char *line, size_t len);
void results_set_tee(struct results *r, results_tee_fn fn, void *data);
/* Queues manifest.json for an atomic rewrite (write, fsync, rename); when
 * several are queued only the newest is written. */
void results_write_manifest(struct results *r, json_object *manifest);

#endif
