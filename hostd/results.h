/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run's folder, as DESIGN.md lays it out:
 *   manifest.json  config/  samples.ndjson  barriers.ndjson  nodes/<node>/
 * NDJSON records are appended with one write and an fdatasync each, so a
 * run cut short keeps every record it wrote.  Functions return 0 or -errno.
 */
#ifndef LOCKSTEP_RESULTS_H
#define LOCKSTEP_RESULTS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#define RESULTS_SCHEMA_VERSION 1

struct results;

/* Creates DIR/RUN (refusing one that exists, and a RUN that is not a safe
 * name) with config/ and nodes/, and opens the NDJSON files. */
int results_open(const char *dir, const char *run, struct results **out);
void results_close(struct results *r); /* accepts NULL */

const char *results_path(const struct results *r);
/* Copies a config file verbatim into config/<basename>. */
int results_save_config(struct results *r, const char *src_path, const char *as_name);
/* nodes/<node>/ (created on first use); node must be proto_name_valid. */
int results_node_dir(struct results *r, const char *node, char **path_out);
/* Appends raw step output to nodes/<node>/step-<k>.out. */
int results_append_output(struct results *r, const char *node, uint32_t step, const char *data,
			  size_t len);

int results_append_sample(struct results *r, json_object *record);
int results_append_barrier(struct results *r, json_object *record);
/* Writes manifest.json atomically (write, fsync, rename). */
int results_write_manifest(struct results *r, json_object *manifest);

#endif
