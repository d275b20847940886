/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd's connection to libvirt and libvirt's event loop.
 *
 * libvirt's default event loop (virEventRunDefaultImpl) runs in one thread
 * of its own; its callbacks (domain lifecycle events, the connection's
 * close callback) only copy what they are told into a queue and wake the
 * libuv loop with uv_async_send.  Everything the owner sees arrives on the
 * libuv loop, so the rest of hostd needs no locks.
 *
 * The connection has keepalive (5 s interval, 3 missed answers: a dead
 * libvirtd is noticed within about 20 s) and a close callback: when libvirt
 * closes the connection (libvirtd stopped, keepalive timeout, I/O error),
 * ops->closed runs on the loop with the reason.  With virt_conn_set_reconnect
 * it then opens a new connection with back-off (0.5 s doubling to 8 s, for
 * at most the given time), registers the same callbacks on it, and says so
 * through ops->reconnect; watches carry over.  The old connection is kept
 * (dead) until virt_conn_close: a job in the thread pool may still hold it
 * or a domain of it.
 *
 * QEMU's VSERPORT_CHANGE events (a guest opened or closed a virtio-serial
 * port) come through libvirt-qemu's monitor events where the driver has
 * them (qemu://); watches with a port callback get them.
 *
 * virConnectPtr is thread-safe: blocking libvirt calls on it (creating a
 * domain, reading its XML) run as uv_queue_work jobs (virt_guest.c) while
 * the loop goes on.  Opening and closing block the loop for a round trip to
 * libvirtd (milliseconds); both happen at the start and the end of a run,
 * when nothing else is waiting.
 *
 * One connection at a time per process: libvirt's event loop is
 * process-wide.  Nothing here logs.
 */
#ifndef LOCKSTEP_VIRT_CONN_H
#define LOCKSTEP_VIRT_CONN_H

#include <libvirt/libvirt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define VIRT_URI_DEFAULT "qemu:///system"
#define VIRT_KEEPALIVE_INTERVAL_S 5
#define VIRT_KEEPALIVE_COUNT 3
/* Events waiting for the loop beyond this are counted, not kept: a loop
 * that stopped listening must not make the event thread grow memory. */
#define VIRT_EVENT_QUEUE_MAX 4096
/* Reconnecting: the first try after this, doubling up to the max. */
#define VIRT_RECONNECT_FIRST_MS 500
#define VIRT_RECONNECT_STEP_MAX_MS 8000

struct virt_conn;

/* One lifecycle event of one domain (VIR_DOMAIN_EVENT_ID_LIFECYCLE). */
struct virt_lifecycle {
	const char *domain;  /* its name */
	int event;	     /* virDomainEventType */
	int detail;	     /* virDomainEvent*DetailType of that event */
	int64_t received_ns; /* CLOCK_MONOTONIC, when libvirt's thread got it */
};

struct virt_conn_ops {
	/* every lifecycle event of every domain (after the watches below) */
	void (*lifecycle)(struct virt_conn *c, const struct virt_lifecycle *ev);
	/* libvirt closed the connection; reason is virConnectCloseReason, or
	 * -1 when libvirt's event loop itself failed.  why is a sentence.
	 * Every later libvirt call on it fails at once; with
	 * virt_conn_set_reconnect a new one is sought (ops->reconnect), else
	 * stop the guests (their jobs end quickly) and virt_conn_close. */
	void (*closed)(struct virt_conn *c, int reason, const char *why);
	/* events were lost because the loop did not take them in time */
	void (*overflow)(struct virt_conn *c, uint64_t lost);
	/* after closed, with virt_conn_set_reconnect: status 0 when a new
	 * connection is up (attempt: how many tries it took); -EAGAIN when
	 * try number attempt failed with why and the next comes in next_s;
	 * -ETIMEDOUT when it gave up (why: the last error).  May be NULL. */
	void (*reconnect)(struct virt_conn *c, int status, unsigned attempt, double next_s,
			  const char *why);
};

/*
 * Registers libvirt's event loop (once per process), starts its thread,
 * opens uri (NULL: VIRT_URI_DEFAULT) and subscribes to lifecycle events.
 * 0 with *out; -errno with err: "libvirt URI: what failed: libvirt's
 * message".  Keepalive is not an error when the driver has none (test:///
 * runs in-process); virt_conn_keepalive says whether it is on.
 */
int virt_conn_open(uv_loop_t *loop, const char *uri, const struct virt_conn_ops *ops, void *data,
		   struct virt_conn **out, char *err, size_t errlen);

/*
 * Unsubscribes, closes the connection, stops and joins libvirt's event
 * thread, and frees c once libuv let go of its handle (run the loop after).
 * Every watch must be removed (and every virDomainPtr from this connection
 * freed) before: the connection can only really close then.  Accepts NULL.
 */
void virt_conn_close(struct virt_conn *c);

virConnectPtr virt_conn_ptr(const struct virt_conn *c);
uv_loop_t *virt_conn_loop(const struct virt_conn *c);
void *virt_conn_data(const struct virt_conn *c);
const char *virt_conn_uri(const struct virt_conn *c); /* the URI libvirt reports */
bool virt_conn_keepalive(const struct virt_conn *c);
bool virt_conn_lost(const struct virt_conn *c); /* closed, not (yet) reconnected */
/* After a close, reconnect for at most max_s seconds (0: never, the default). */
void virt_conn_set_reconnect(struct virt_conn *c, double max_s);
/* Closed, and a reconnect is under way (the next try is due or running). */
bool virt_conn_reconnecting(const struct virt_conn *c);
/* How many times a new connection replaced a closed one. */
unsigned virt_conn_generation(const struct virt_conn *c);

/*
 * A watch: events of one domain, delivered on the loop before ops->lifecycle.
 * The callback may remove any watch, itself included.  domain must stay
 * valid while the watch is added.
 */
struct virt_watch {
	const char *domain;
	void (*cb)(struct virt_watch *w, const struct virt_lifecycle *ev);
	/* QEMU says the guest opened or closed the virtio-serial port whose
	 * device alias is alias (e.g. "channel0"); may be NULL */
	void (*port)(struct virt_watch *w, const char *alias, bool open, int64_t received_ns);
	void *data;
	struct virt_watch *next; /* private */
};

void virt_conn_watch_add(struct virt_conn *c, struct virt_watch *w);
void virt_conn_watch_remove(struct virt_conn *c, struct virt_watch *w);

/* "started", "stopped", ... and "booted", "destroyed", "crashed", ...;
 * "unknown" for values this libvirt version did not have. */
const char *virt_event_name(int event);
const char *virt_event_detail_name(int event, int detail);
/* The domain is gone or going: stopped, shut down by the guest, crashed. */
bool virt_event_is_loss(int event);
/* "libvirtd closed the connection (end of file)" and the like */
const char *virt_close_reason_text(int reason);

#endif
