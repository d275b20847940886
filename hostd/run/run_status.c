// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --status-file: where a run is, for hostd --service to show
 * (hostctl status).  Rewritten at each barrier edge by rename, so a reader
 * sees a whole file; not fsynced, as it says only where a live run is and
 * the barrier must not wait for a disk.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "run_priv.h"

#define RUN_STATUS_NAMES_MAX 8

void run_status_publish(struct run *r)
{
	if (!r->opt->status_file || !r->barrier)
		return;
	uint32_t k = barrier_step(r->barrier), n = barrier_nsteps(r->barrier);
	size_t idx[RUN_STATUS_NAMES_MAX];
	size_t waiting = barrier_waiting_for(r->barrier, idx, RUN_STATUS_NAMES_MAX);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "step", json_object_new_int64(k > n ? n : k));
	json_object_object_add(o, "nsteps", json_object_new_int64(n));
	json_object_object_add(o, "phase",
			       json_object_new_string(!r->launch_done ? "starting"
						      : k > n	      ? "finishing"
								      : "running"));
	if (k >= 1 && k <= n) {
		json_object_object_add(o, "benchmark",
				       json_object_new_string(r->exp->steps[k - 1].benchmark));
		json_object_object_add(o, "iteration",
				       json_object_new_int64(r->exp->steps[k - 1].iteration));
	}
	json_object *names = json_object_new_array();
	for (size_t i = 0; i < waiting && i < RUN_STATUS_NAMES_MAX; i++)
		json_object_array_add(names, json_object_new_string(r->p[idx[i]].node.name));
	json_object_object_add(o, "waiting_for", names);
	json_object_object_add(o, "waiting_count", json_object_new_int64((int64_t)waiting));
	json_object_object_add(o, "participants",
			       json_object_new_int64((int64_t)barrier_in_run_count(r->barrier)));
	json_object_object_add(o, "updated", json_object_new_int64((int64_t)time(NULL)));

	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", r->opt->status_file);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* a status that cannot be written costs the reader its view, never the run */
	if (fd >= 0) {
		int err = fileio_write_all(fd, s, strlen(s));
		close(fd);
		if (err == 0)
			rename(tmp, r->opt->status_file);
	}
	json_object_put(o);
}
