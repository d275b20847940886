/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent's event loop: one poll(2) over the channel, a signalfd and the
 * running step's output.  It blocks in the kernel until one of them has
 * something; the only timeout is the wait before reopening a channel. */
#ifndef GUESTAGENT_AGENT_H
#define GUESTAGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

struct agent_opts {
	const char *channel;   /* a path, or NULL */
	int channel_fd;	       /* an fd, or -1 */
	const char *root;      /* where sys/class/virtio-ports and dev/ are: "/" */
	const char *node;      /* sent in hello */
	const char *work_dir;  /* where command steps run */
	const char *proc_root; /* where the monitors find proc/: "" is / */
	bool no_ptp;	       /* never use a KVM PTP clock (ping/pong only) */
	bool ptp_synthetic;    /* tests: the PTP test double, ptp_synthetic_ns behind */
	int64_t ptp_synthetic_ns;
	uint64_t step_pids_max;	  /* per step, 0: none (issue 20) */
	uint64_t step_memory_max; /* bytes per step, 0: none */
};

/* Runs until the host says bye, goes away for good or a signal comes.
 * Returns the exit code. */
int agent_run(const struct agent_opts *o);

#endif
