/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Putting the agent into a guest: one uv_queue_work job per guest that
 * connects over SSH (host key pinned), pushes the harness as one tar
 * stream, and starts the agent there, detached from the session.  The
 * blocking libssh session lives entirely inside the job; the loop only sees
 * the outcome, through done().
 */
#ifndef LOCKSTEP_HARNESS_H
#define LOCKSTEP_HARNESS_H

#include <stdint.h>
#include <uv.h>

#include "ssh_push.h"

struct harness_job {
	/* inputs, owned by the caller until done() */
	const char *node; /* also the agent's --node */
	const char *host;
	int port;
	const char *user;
	const char *private_key_path;
	const char *expected_hostkey; /* from the console, or NULL */
	const char *known_hosts_path; /* when expected_hostkey is NULL */
	const char *agent_path;	      /* the static agent on this host */
	/* more members after the agent (bundle.h: the binaries and their
	 * libraries, relative to remote_dir); may be NULL */
	const struct ssh_push_file *extra_files;
	size_t nextra_files;
	/* the files the node's g.conf ships (cat >FILE <<END), into
	 * remote_dir, the agent's work folder; may be NULL */
	const struct ssh_push_file *shipped_files;
	size_t nshipped_files;
	const char *remote_dir; /* where it goes in the guest */
	int start_rt_priority;	/* the agent's --start-rt-priority */
	int timeout_ms;		/* for each SSH operation */
	int connect_timeout_ms; /* for sshd to come up at all */

	/* outputs, valid in done() */
	int result; /* 0 or -errno */
	char error[1024];
	struct ssh_push_hostkey hostkey;
	struct ssh_push_stats stats;
	long agent_pid;
	double connect_s; /* until the SSH session was up */

	/* harness_fetch_log_start: where the agent's log goes on the host */
	const char *log_local_path; /* for messages */
	int log_local_fd;	    /* opened by the caller (below the run folder), its to close */
	uint64_t log_bytes;	    /* what was written there */

	void (*done)(struct harness_job *j);
	void *data;
	uv_work_t work; /* private */
};

/* The end of the agent's log that is fetched back: enough for its last
 * steps, never a guest's whole disk. */
#define HARNESS_LOG_MAX (256 * 1024)

/* 1 when path is an ELF executable without a dynamic loader (PT_INTERP),
 * 0 when it has one, -errno when it cannot be read or is not ELF.  A guest
 * may have no libc of ours: only a static agent runs everywhere. */
int harness_elf_is_static(const char *path);

/* Queues the job; 0 or -errno. */
int harness_push_start(uv_loop_t *loop, struct harness_job *j);

/* Queues a job that connects as the push did (the same inputs; a refused
 * connection is retried within timeout_ms) and copies the last HARNESS_LOG_MAX bytes of
 * remote_dir/agent.log into log_local_fd (log_local_path names it).  done() gets result and error as for the push. */
int harness_fetch_log_start(uv_loop_t *loop, struct harness_job *j);

#endif
