/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One libvirt guest of a run, on the loop: start it (or attach to it), find
 * its channel socket, wait until it is ready, find its SSH address; notice
 * at once when it goes away; at the end leave it as it was found, or
 * destroy it when it was made for the run.
 *
 * Blocking libvirt calls (create, start, XML, addresses, shutdown, destroy)
 * run as uv_queue_work jobs, one at a time per guest; guests start in
 * parallel up to libuv's thread pool size.  Everything the owner sees comes
 * through ops on the loop.  Every error names the guest, what failed and,
 * from libvirt, its own message.  Nothing here logs.
 *
 *   virt_guest_init -> virt_guest_start -> ops->ready (or ops->failed)
 *   ... ops->failed whenever the domain stops, shuts down or crashes
 *   virt_guest_stop -> ops->stopped -> virt_guest_fini
 *
 * When libvirt's connection closed and came back (or gave up coming back),
 * the owner calls virt_guest_conn_changed: the guest looks its domain up
 * again on the new connection (by UUID) and fails as lost when libvirtd
 * destroyed it meanwhile; a stop asked for while the connection was down
 * waits for it.
 */
#ifndef LOCKSTEP_VIRT_GUEST_H
#define LOCKSTEP_VIRT_GUEST_H

#include <libvirt/libvirt.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "virt_accel.h"
#include "virt_addr.h"
#include "virt_conn.h"
#include "virt_console.h"
#include "virt_settings.h"

enum virt_guest_state {
	VIRT_GUEST_NEW,
	VIRT_GUEST_STARTING,   /* creating or starting the domain */
	VIRT_GUEST_BOOTING,    /* waiting for LOCKSTEP-READY */
	VIRT_GUEST_ADDRESSING, /* asking libvirt for its address */
	VIRT_GUEST_READY,
	VIRT_GUEST_FAILED, /* error says why; stop still cleans up */
	VIRT_GUEST_STOPPING,
	VIRT_GUEST_STOPPED,
};

struct virt_guest;

/* Each may call virt_guest_stop on its guest. */
struct virt_guest_ops {
	/* channel_path, addr, hostkey (if the console gave one) are set */
	void (*ready)(struct virt_guest *g);
	/* start or boot failed, or the domain went away (lost is then true) */
	void (*failed)(struct virt_guest *g);
	/* virt_guest_stop is done; error is non-empty when stopping had trouble */
	void (*stopped)(struct virt_guest *g);
	/* the domain was paused (suspended) or resumed: see paused; may be NULL */
	void (*paused)(struct virt_guest *g);
	/* QEMU says the guest opened or closed the agent's port; may be NULL */
	void (*port)(struct virt_guest *g, bool open);
};

struct virt_guest {
	/* what the owner gave */
	size_t index; /* 0-based, in settings->names */
	const char *name;
	const struct virt_settings *settings;
	const struct virt_accel *accel;
	const struct virt_guest_ops *ops;
	void *data;

	/* what is known, for the owner and the manifest */
	enum virt_guest_state state;
	bool transient;		/* made for the run: destroyed at the end */
	bool was_running;	/* existing and running before: left running */
	bool started_by_us;	/* existing and off before: stopped at the end */
	bool lost;		/* the domain stopped/shut down/crashed under us */
	bool paused;		/* suspended (lifecycle event), not resumed yet */
	int paused_detail;	/* virDomainEventSuspendedDetailType */
	int64_t paused_ns;	/* CLOCK_MONOTONIC of the suspend event */
	unsigned pauses;	/* how many times it was paused in the run */
	char channel_alias[64]; /* the channel's device alias ("channel0"), "" if unknown */
	char uuid[VIR_UUID_STRING_BUFLEN];
	char domain_type[16];		/* from the live XML: "qemu" (TCG) or "kvm" */
	char *channel_path;		/* host side of org.lockstep.agent.0 */
	char *console_log;		/* NULL when the console is not a file */
	struct virt_addr addr;		/* host and port for SSH */
	char hostkey[VIRT_HOSTKEY_MAX]; /* from the console, "" if none */
	double create_s;		/* how long virDomainCreateXML/virDomainCreate took */
	double boot_s;			/* from the domain's start to ready */
	int64_t ready_ns;		/* CLOCK_MONOTONIC */
	char error[1024];		/* "guest NAME: what failed: libvirt's message" */
	char failure[1024]; /* error as it was when the guest failed, "" if it did not */

	/* private */
	struct virt_conn *conn;
	virDomainPtr dom;
	struct virt_watch watch;
	uv_work_t work;
	int job, job_result;
	int lost_event, lost_detail;
	bool busy, stop_requested, shutdown_sent, down;
	bool reattach_wanted, stop_deferred;
	char *authkey_line;
	char job_error[1024]; /* written by the job's thread only */
	off_t console_offset;
	int64_t start_ns; /* virt_guest_start was called: older events are not ours */
	int64_t created_ns, deadline_ns;
	struct virt_console_wait *console;
	uv_timer_t *timer;
};

/* index is in s->names; authkey_line ("ssh-ed25519 AAAA... comment") fills
 * @AUTHKEY@ as base64 for template guests (may be NULL). */
void virt_guest_init(struct virt_guest *g, struct virt_conn *c, const struct virt_settings *s,
		     const struct virt_accel *a, size_t index, const char *authkey_line,
		     const struct virt_guest_ops *ops, void *data);
/* Queues the start; 0, or -errno when libuv refused the job. */
int virt_guest_start(struct virt_guest *g);
/* Ends the guest's part in the run, whatever its state: waits for a job in
 * flight, then destroys a transient domain, shuts down (then destroys, after
 * GUEST_SHUTDOWN_TIMEOUT) an existing one that was off, leaves one that was
 * running.  ops->stopped follows, never from within this call. */
void virt_guest_stop(struct virt_guest *g);
/* libvirt's connection is back (or will not come back): look the domain up
 * again, or go on with a stop that waited for it. */
void virt_guest_conn_changed(struct virt_guest *g);
/* Frees; only in NEW, STOPPED, or FAILED without a job in flight. */
void virt_guest_fini(struct virt_guest *g);

/* Connects to the guest's channel socket (a local unix socket: it answers
 * at once).  The connected fd, close-on-exec and non-blocking, for
 * node_attach; or -errno. */
int virt_guest_channel_connect(const struct virt_guest *g);

const char *virt_guest_state_name(enum virt_guest_state s);

#endif
