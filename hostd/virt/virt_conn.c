// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_conn.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "uv_errno.h"
#include "xalloc.h"

/* What libvirt's thread hands to the loop. */
enum qkind { Q_LIFECYCLE, Q_CLOSED, Q_PORT };
struct qevent {
	struct qevent *next;
	enum qkind kind;
	bool closed; /* kind == Q_CLOSED */
	bool open;   /* Q_PORT: the guest opened the port (else closed it) */
	int event, detail, reason;
	int64_t received_ns;
	/* the domain's name (Q_PORT: then a NUL and the port's alias), or,
	 * when closed, the sentence */
	char domain[];
};

struct virt_conn {
	uv_loop_t *loop;
	virConnectPtr conn;
	char *uri;
	const struct virt_conn_ops *ops;
	void *data;
	bool keepalive, lost;
	int lifecycle_id; /* -1 when not subscribed */
	int port_id;	  /* VSERPORT_CHANGE monitor events; -1 when none */

	/* reconnecting after a close (the loop's; the job writes fresh_*) */
	double reconnect_max_s;
	unsigned generation, attempt;
	int64_t lost_ns;
	uint64_t delay_ms;
	uv_timer_t rtimer;
	uv_work_t rwork;
	bool rbusy, old_unsubscribed, teardown_pending;
	int handles; /* libuv handles still to close */
	virConnectPtr fresh;
	int fresh_lc, fresh_port;
	char rerr[512];
	virConnectPtr *dead; /* closed connections, released at the end */
	size_t ndead;

	pthread_t thread;
	bool thread_started;
	atomic_bool quit;

	uv_async_t async;
	pthread_mutex_t lock; /* guards the queue below; nothing else */
	struct qevent *head, *tail;
	size_t queued;
	uint64_t dropped;

	struct virt_watch *watches;
	bool dispatching;
	struct virt_watch *next_watch; /* the one the dispatch visits next */
	bool closing;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_result;
static atomic_bool in_use;

/* libvirt prints every error to stderr unless told otherwise; we report
 * errors ourselves, once, with the guest's name. */
static void quiet_errors(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static void init_once(void)
{
	virSetErrorFunc(NULL, quiet_errors);
	once_result = virInitialize() < 0 || virEventRegisterDefaultImpl() < 0 ? -1 : 0;
}

/* ---- libvirt's thread ---- */

static void enqueue(struct virt_conn *c, struct qevent *q)
{
	pthread_mutex_lock(&c->lock);
	/* a closed connection is told whatever the queue holds: it is the one
	 * event that can come only once */
	if (c->queued >= VIRT_EVENT_QUEUE_MAX && !q->closed) {
		c->dropped++;
		free(q);
	} else {
		if (c->tail)
			c->tail->next = q;
		else
			c->head = q;
		c->tail = q;
		c->queued++;
	}
	pthread_mutex_unlock(&c->lock);
	uv_async_send(&c->async);
}

static int lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	(void)conn;
	const char *name = virDomainGetName(dom);
	if (!name)
		name = "?";
	size_t n = strlen(name) + 1;
	struct qevent *q = xcalloc(1, sizeof(*q) + n);
	q->event = event;
	q->detail = detail;
	q->received_ns = clock_mono_ns();
	memcpy(q->domain, name, n);
	enqueue(opaque, q);
	return 0;
}

static void push_closed(struct virt_conn *c, int reason, const char *why)
{
	size_t n = strlen(why) + 1;
	struct qevent *q = xcalloc(1, sizeof(*q) + n);
	q->kind = Q_CLOSED;
	q->closed = true;
	q->reason = reason;
	q->received_ns = clock_mono_ns();
	memcpy(q->domain, why, n);
	enqueue(c, q);
}

/* QEMU's VSERPORT_CHANGE: {"id": "channel0", "open": false} */
static void port_cb(virConnectPtr conn, virDomainPtr dom, const char *event, long long seconds,
		    unsigned int micros, const char *details, void *opaque)
{
	(void)conn;
	(void)event;
	(void)seconds;
	(void)micros;
	json_object *o = details ? json_tokener_parse(details) : NULL, *id, *open;
	const char *name = virDomainGetName(dom);
	if (o && name && json_object_object_get_ex(o, "id", &id) &&
	    json_object_is_type(id, json_type_string) && json_object_object_get_ex(o, "open", &open)) {
		const char *alias = json_object_get_string(id);
		size_t n = strlen(name) + 1, m = strlen(alias) + 1;
		struct qevent *q = xcalloc(1, sizeof(*q) + n + m);
		q->kind = Q_PORT;
		q->open = json_object_get_boolean(open);
		q->received_ns = clock_mono_ns();
		memcpy(q->domain, name, n);
		memcpy(q->domain + n, alias, m);
		enqueue(opaque, q);
	}
	json_object_put(o);
}

static void close_cb(virConnectPtr conn, int reason, void *opaque)
{
	(void)conn;
	push_closed(opaque, reason, virt_close_reason_text(reason));
}

static void *event_thread(void *arg)
{
	struct virt_conn *c = arg;
	while (!atomic_load(&c->quit)) {
		if (virEventRunDefaultImpl() < 0) {
			char why[320];
			snprintf(why, sizeof(why), "libvirt's event loop failed: %s",
				 virGetLastErrorMessage());
			push_closed(c, -1, why);
			break;
		}
	}
	return NULL;
}

/* Runs once in libvirt's thread: its only purpose is to make
 * virEventRunDefaultImpl return so the thread sees quit. */
static void wake_cb(int timer, void *opaque)
{
	atomic_bool *fired = opaque;
	atomic_store(fired, true);
	virEventRemoveTimeout(timer);
}

static void stop_thread(struct virt_conn *c)
{
	atomic_bool fired = false;
	int timer;

	if (!c->thread_started)
		return;
	atomic_store(&c->quit, true);
	timer = virEventAddTimeout(0, wake_cb, &fired, NULL);
	pthread_join(c->thread, NULL);
	/* the thread may have seen quit before the timer ran */
	if (timer >= 0 && !atomic_load(&fired))
		virEventRemoveTimeout(timer);
	c->thread_started = false;
}

/* ---- the loop ---- */

static void dispatch_lifecycle(struct virt_conn *c, const struct qevent *q)
{
	struct virt_lifecycle ev = {
		.domain = q->domain,
		.event = q->event,
		.detail = q->detail,
		.received_ns = q->received_ns,
	};
	c->dispatching = true;
	for (struct virt_watch *w = c->watches; w && !c->closing; w = c->next_watch) {
		c->next_watch = w->next;
		if (strcmp(w->domain, q->domain) == 0)
			w->cb(w, &ev);
	}
	c->dispatching = false;
	if (!c->closing && c->ops && c->ops->lifecycle)
		c->ops->lifecycle(c, &ev);
}

static void dispatch_port(struct virt_conn *c, const struct qevent *q)
{
	const char *alias = q->domain + strlen(q->domain) + 1;
	c->dispatching = true;
	for (struct virt_watch *w = c->watches; w && !c->closing; w = c->next_watch) {
		c->next_watch = w->next;
		if (w->port && strcmp(w->domain, q->domain) == 0)
			w->port(w, alias, q->open, q->received_ns);
	}
	c->dispatching = false;
}

static void reconnect_begin(struct virt_conn *c, int reason);

static void async_cb(uv_async_t *a)
{
	struct virt_conn *c = a->data;
	struct qevent *q;
	uint64_t dropped;

	pthread_mutex_lock(&c->lock);
	q = c->head;
	c->head = c->tail = NULL;
	c->queued = 0;
	dropped = c->dropped;
	c->dropped = 0;
	pthread_mutex_unlock(&c->lock);

	while (q) {
		struct qevent *next = q->next;
		if (c->closing) {
			/* closed from a callback: nobody wants the rest */
		} else if (q->closed) {
			c->lost = true;
			if (c->ops && c->ops->closed)
				c->ops->closed(c, q->reason, q->domain);
			if (!c->closing)
				reconnect_begin(c, q->reason);
		} else if (q->kind == Q_PORT) {
			dispatch_port(c, q);
		} else {
			dispatch_lifecycle(c, q);
		}
		free(q);
		q = next;
	}
	if (dropped && !c->closing && c->ops && c->ops->overflow)
		c->ops->overflow(c, dropped);
}

void virt_conn_watch_add(struct virt_conn *c, struct virt_watch *w)
{
	w->next = c->watches;
	c->watches = w;
}

void virt_conn_watch_remove(struct virt_conn *c, struct virt_watch *w)
{
	for (struct virt_watch **p = &c->watches; *p; p = &(*p)->next) {
		if (*p != w)
			continue;
		*p = w->next;
		/* the dispatch in progress must not step onto a removed watch */
		if (c->dispatching && c->next_watch == w)
			c->next_watch = w->next;
		w->next = NULL;
		return;
	}
}

/* ---- subscriptions ---- */

/* Keepalive, the close callback and the events, on conn (the first one or
 * a new one after a close).  0, or -EIO with libvirt's message in err. */
static int subscribe(struct virt_conn *c, virConnectPtr conn, bool *keepalive, int *lc_id,
		     int *port_id, char *err, size_t errlen)
{
	const char *what = NULL;

	*lc_id = *port_id = -1;
	if (virConnectSetKeepAlive(conn, VIRT_KEEPALIVE_INTERVAL_S, VIRT_KEEPALIVE_COUNT) == 0)
		*keepalive = true;
	else if (virGetLastErrorCode() != VIR_ERR_NO_SUPPORT && virGetLastErrorCode() != VIR_ERR_OK)
		what = "cannot set keepalive";
	if (!what && virConnectRegisterCloseCallback(conn, close_cb, c, NULL) < 0)
		what = "cannot register a close callback";
	if (!what) {
		*lc_id = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
							  VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb),
							  c, NULL);
		if (*lc_id < 0) {
			what = "cannot subscribe to lifecycle events";
			virConnectUnregisterCloseCallback(conn, close_cb);
		}
	}
	if (what) {
		snprintf(err, errlen, "libvirt %s: %s: %s", c->uri, what, virGetLastErrorMessage());
		return -EIO;
	}
	/* QEMU's own events: only the qemu driver has them (not test:///);
	 * without them an agent that dies is named at the barrier deadline */
	*port_id = virConnectDomainQemuMonitorEventRegister(conn, NULL, "VSERPORT_CHANGE", port_cb,
							    c, NULL, 0);
	return 0;
}

static void unsubscribe(virConnectPtr conn, int lc_id, int port_id)
{
	if (port_id >= 0)
		virConnectDomainQemuMonitorEventDeregister(conn, port_id);
	if (lc_id >= 0)
		virConnectDomainEventDeregisterAny(conn, lc_id);
	virConnectUnregisterCloseCallback(conn, close_cb);
}

/* ---- reconnecting ---- */

/* In libuv's thread pool: libvirtd may take seconds to answer while it
 * starts up, and the loop must go on releasing barriers meanwhile. */
static void reconnect_job(uv_work_t *w)
{
	struct virt_conn *c = w->data;
	bool keepalive = false;

	if (!c->old_unsubscribed) {
		/* on a dead connection these fail at once; they free our side */
		unsubscribe(c->conn, c->lifecycle_id, c->port_id);
		c->old_unsubscribed = true;
	}
	c->fresh = virConnectOpen(c->uri);
	if (!c->fresh) {
		snprintf(c->rerr, sizeof(c->rerr), "%s", virGetLastErrorMessage());
		return;
	}
	if (subscribe(c, c->fresh, &keepalive, &c->fresh_lc, &c->fresh_port, c->rerr,
		      sizeof(c->rerr)) < 0) {
		virConnectClose(c->fresh);
		c->fresh = NULL;
	}
}

static void keep_dead(struct virt_conn *c, virConnectPtr conn)
{
	c->dead = xrealloc(c->dead, (c->ndead + 1) * sizeof(*c->dead));
	c->dead[c->ndead++] = conn;
}

static void teardown(struct virt_conn *c);
static void rtimer_cb(uv_timer_t *t);

static void reconnect_done(uv_work_t *w, int status)
{
	(void)status;
	struct virt_conn *c = w->data;
	double elapsed = (double)(clock_mono_ns() - c->lost_ns) / NSEC_PER_SEC;

	c->rbusy = false;
	if (c->teardown_pending) {
		if (c->fresh)
			keep_dead(c, c->fresh);
		c->fresh = NULL;
		teardown(c);
		return;
	}
	if (c->fresh) {
		pthread_mutex_lock(&c->lock);
		keep_dead(c, c->conn);
		c->conn = c->fresh;
		pthread_mutex_unlock(&c->lock);
		c->fresh = NULL;
		c->lifecycle_id = c->fresh_lc;
		c->port_id = c->fresh_port;
		c->old_unsubscribed = false;
		c->lost = false;
		c->generation++;
		if (c->ops && c->ops->reconnect)
			c->ops->reconnect(c, 0, c->attempt, elapsed, NULL);
		return;
	}
	c->delay_ms = c->delay_ms * 2 > VIRT_RECONNECT_STEP_MAX_MS ? VIRT_RECONNECT_STEP_MAX_MS
								   : c->delay_ms * 2;
	if (elapsed + (double)c->delay_ms / 1000 > c->reconnect_max_s) {
		if (c->ops && c->ops->reconnect)
			c->ops->reconnect(c, -ETIMEDOUT, c->attempt, 0, c->rerr);
		return;
	}
	if (c->ops && c->ops->reconnect)
		c->ops->reconnect(c, -EAGAIN, c->attempt, (double)c->delay_ms / 1000, c->rerr);
	uv_timer_start(&c->rtimer, rtimer_cb, c->delay_ms, 0);
}

static void rtimer_cb(uv_timer_t *t)
{
	struct virt_conn *c = t->data;
	if (c->closing || c->rbusy)
		return;
	c->attempt++;
	c->rbusy = true;
	c->rwork.data = c;
	if (uv_queue_work(c->loop, &c->rwork, reconnect_job, reconnect_done) < 0)
		c->rbusy = false;
}

static void reconnect_begin(struct virt_conn *c, int reason)
{
	/* a failed event loop has no events to give a new connection */
	if (c->reconnect_max_s <= 0 || reason < 0 || c->rbusy)
		return;
	c->attempt = 0;
	c->lost_ns = clock_mono_ns();
	c->delay_ms = VIRT_RECONNECT_FIRST_MS;
	uv_timer_start(&c->rtimer, rtimer_cb, c->delay_ms, 0);
}

void virt_conn_set_reconnect(struct virt_conn *c, double max_s)
{
	c->reconnect_max_s = max_s;
}

bool virt_conn_reconnecting(const struct virt_conn *c)
{
	return c->lost && (c->rbusy || uv_is_active((const uv_handle_t *)&c->rtimer));
}

unsigned virt_conn_generation(const struct virt_conn *c)
{
	return c->generation;
}

/* ---- open and close ---- */

static int fail(struct virt_conn *c, char *err, size_t errlen, const char *what)
{
	const char *uri = c->uri ? c->uri : VIRT_URI_DEFAULT;
	snprintf(err, errlen, "libvirt %s: %s: %s", uri, what, virGetLastErrorMessage());
	return -EIO;
}

static void handle_closed(uv_handle_t *h)
{
	struct virt_conn *c = h->data;
	if (--c->handles > 0)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->dead);
	free(c->uri);
	free(c);
}

static void teardown(struct virt_conn *c)
{
	c->closing = true;
	/* a reconnect in the thread pool cannot be stopped: its end comes back
	 * here */
	if (c->rbusy) {
		c->teardown_pending = true;
		return;
	}
	uv_timer_stop(&c->rtimer);
	if (c->conn) {
		if (!c->old_unsubscribed)
			unsubscribe(c->conn, c->lifecycle_id, c->port_id);
		/* while libvirt's thread still runs: the connection's handles and
		 * timers are released by the loop's next turn */
		virConnectClose(c->conn);
		c->conn = NULL;
	}
	for (size_t i = 0; i < c->ndead; i++)
		virConnectClose(c->dead[i]);
	c->ndead = 0;
	stop_thread(c);
	for (struct qevent *q = c->head; q;) {
		struct qevent *next = q->next;
		free(q);
		q = next;
	}
	c->head = c->tail = NULL;
	atomic_store(&in_use, false);
	uv_close((uv_handle_t *)&c->async, handle_closed);
	uv_close((uv_handle_t *)&c->rtimer, handle_closed);
}

int virt_conn_open(uv_loop_t *loop, const char *uri, const struct virt_conn_ops *ops, void *data,
		   struct virt_conn **out, char *err, size_t errlen)
{
	struct virt_conn *c;
	int r;

	*out = NULL;
	if (atomic_exchange(&in_use, true)) {
		snprintf(err, errlen, "libvirt %s: another connection is open in this process",
			 uri ? uri : VIRT_URI_DEFAULT);
		return -EBUSY;
	}
	pthread_once(&once, init_once);
	if (once_result < 0) {
		atomic_store(&in_use, false);
		snprintf(err, errlen, "libvirt: cannot register its event loop: %s",
			 virGetLastErrorMessage());
		return -EIO;
	}
	c = xcalloc(1, sizeof(*c));
	c->loop = loop;
	c->ops = ops;
	c->data = data;
	c->lifecycle_id = c->port_id = -1;
	c->uri = xstrdup(uri ? uri : VIRT_URI_DEFAULT);
	pthread_mutex_init(&c->lock, NULL);
	r = errno_from_uv(uv_async_init(loop, &c->async, async_cb));
	if (r < 0) {
		snprintf(err, errlen, "libvirt %s: uv_async_init: %s", c->uri, strerror(-r));
		atomic_store(&in_use, false);
		pthread_mutex_destroy(&c->lock);
		free(c->uri);
		free(c);
		return r;
	}
	c->async.data = c;
	uv_timer_init(loop, &c->rtimer);
	c->rtimer.data = c;
	c->handles = 2;

	/* the thread first: the remote driver needs a running loop */
	r = pthread_create(&c->thread, NULL, event_thread, c);
	if (r) {
		snprintf(err, errlen, "libvirt %s: cannot start its event thread: %s", c->uri,
			 strerror(r));
		teardown(c);
		return -r;
	}
	c->thread_started = true;

	c->conn = virConnectOpen(c->uri);
	if (!c->conn) {
		r = fail(c, err, errlen, "cannot connect");
		teardown(c);
		return r;
	}
	r = subscribe(c, c->conn, &c->keepalive, &c->lifecycle_id, &c->port_id, err, errlen);
	if (r < 0) {
		c->old_unsubscribed = true; /* nothing to undo */
		teardown(c);
		return r;
	}
	char *real = virConnectGetURI(c->conn);
	if (real) {
		free(c->uri);
		c->uri = real;
	}
	*out = c;
	return 0;
}

void virt_conn_close(struct virt_conn *c)
{
	if (!c)
		return;
	assert(!c->watches && "remove every watch before closing the connection");
	teardown(c);
}

virConnectPtr virt_conn_ptr(const struct virt_conn *c)
{
	struct virt_conn *w = (struct virt_conn *)c; /* the lock only */
	pthread_mutex_lock(&w->lock);
	virConnectPtr p = c->conn;
	pthread_mutex_unlock(&w->lock);
	return p;
}

uv_loop_t *virt_conn_loop(const struct virt_conn *c)
{
	return c->loop;
}

void *virt_conn_data(const struct virt_conn *c)
{
	return c->data;
}

const char *virt_conn_uri(const struct virt_conn *c)
{
	return c->uri;
}

bool virt_conn_keepalive(const struct virt_conn *c)
{
	return c->keepalive;
}

bool virt_conn_lost(const struct virt_conn *c)
{
	return c->lost;
}

/* ---- names ---- */

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const char *nth(const char *const *names, int i)
{
	for (int k = 0; names[k]; k++)
		if (k == i)
			return names[k];
	return "unknown";
}

const char *virt_event_name(int event)
{
	return nth(NAMES("defined", "undefined", "started", "suspended", "resumed", "stopped",
			 "shutdown", "pmsuspended", "crashed"),
		   event);
}

const char *virt_event_detail_name(int event, int detail)
{
	switch (event) {
	case VIR_DOMAIN_EVENT_DEFINED:
		return nth(NAMES("added", "updated", "renamed", "from-snapshot"), detail);
	case VIR_DOMAIN_EVENT_UNDEFINED: return nth(NAMES("removed", "renamed"), detail);
	case VIR_DOMAIN_EVENT_STARTED:
		return nth(NAMES("booted", "migrated", "restored", "from-snapshot", "wakeup"), detail);
	case VIR_DOMAIN_EVENT_SUSPENDED:
		return nth(NAMES("paused", "migrated", "io-error", "watchdog", "restored",
				 "from-snapshot", "api-error", "postcopy", "postcopy-failed"),
			   detail);
	case VIR_DOMAIN_EVENT_RESUMED:
		return nth(NAMES("unpaused", "migrated", "from-snapshot", "postcopy", "postcopy-failed"),
			   detail);
	case VIR_DOMAIN_EVENT_STOPPED:
		return nth(NAMES("shutdown", "destroyed", "crashed", "migrated", "saved", "failed",
				 "from-snapshot"),
			   detail);
	case VIR_DOMAIN_EVENT_SHUTDOWN:
		return nth(NAMES("finished", "finished after guest request",
				 "finished after host request, e.g. a signal"),
			   detail);
	case VIR_DOMAIN_EVENT_PMSUSPENDED: return nth(NAMES("memory", "disk"), detail);
	case VIR_DOMAIN_EVENT_CRASHED: return nth(NAMES("panicked", "crashloaded"), detail);
	default: return "unknown";
	}
}

bool virt_event_is_loss(int event)
{
	return event == VIR_DOMAIN_EVENT_STOPPED || event == VIR_DOMAIN_EVENT_SHUTDOWN ||
	       event == VIR_DOMAIN_EVENT_CRASHED;
}

const char *virt_close_reason_text(int reason)
{
	switch (reason) {
	case VIR_CONNECT_CLOSE_REASON_ERROR:
		return "libvirt closed the connection after an I/O error";
	case VIR_CONNECT_CLOSE_REASON_EOF:
		return "libvirtd closed the connection (end of file: did it stop?)";
	case VIR_CONNECT_CLOSE_REASON_KEEPALIVE:
		return "libvirtd stopped answering keepalive messages";
	case VIR_CONNECT_CLOSE_REASON_CLIENT: return "the connection was closed by hostd";
	default: return "libvirt closed the connection for an unknown reason";
	}
}
