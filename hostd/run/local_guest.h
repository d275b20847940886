/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local guests: agent processes on the host, each on its own socketpair.
 * The node sees the same kind of stream socket a virtio-serial port gives,
 * so everything past the socket is the code path of real guests.  Used for
 * dry runs, tests, and for the host's own participation.
 */
#ifndef LOCKSTEP_LOCAL_GUEST_H
#define LOCKSTEP_LOCAL_GUEST_H

#include <stdbool.h>
#include <uv.h>

#include "runas.h"

struct local_guest {
	uv_process_t proc;
	bool running;
	int exit_status; /* exit code, or 128+signal */
	void (*exited)(struct local_guest *g);
	void *data;
};

/* Starts agent_path --channel-fd 3 --node NODE --work-dir WORK_DIR [extra
 * arguments, NULL-terminated, may be NULL] with its stdout and stderr into
 * log_fd (the caller's to close), as ra's user (NULL: as we are).
 * *host_fd is the host's end of the socketpair. */
int local_guest_spawn(uv_loop_t *loop, struct local_guest *g, const char *agent_path,
		      const char *node, const char *work_dir, const char *const *extra, int log_fd,
		      const struct runas *ra, int *host_fd);
/* Sends sig if the process still runs. */
void local_guest_kill(struct local_guest *g, int sig);

#endif
