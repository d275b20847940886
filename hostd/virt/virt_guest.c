// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_guest.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "diag.h"
#include "fileio.h"
#include "virt_xml.h"
#include "xalloc.h"

#define ADDR_RETRY_MS 1000

enum job { JOB_NONE, JOB_START, JOB_ADDR, JOB_SHUTDOWN, JOB_DESTROY, JOB_REATTACH };

static void set_error(struct virt_guest *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct virt_guest *g, const char *fmt, ...)
{
	char who[VIRT_NAME_MAX + 8]; /* "guest NAME" */
	va_list ap;
	snprintf(who, sizeof(who), "guest %s", g->name);
	va_start(ap, fmt);
	diag_vset(g->error, sizeof(g->error), 0, who, fmt, ap);
	va_end(ap);
}

/* The same for jobs: they write job_error only, which the loop takes over
 * when the job is done (the loop may write error meanwhile). */
static void job_error(struct virt_guest *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void job_error(struct virt_guest *g, const char *fmt, ...)
{
	char who[VIRT_NAME_MAX + 8]; /* "guest NAME" */
	va_list ap;
	snprintf(who, sizeof(who), "guest %s", g->name);
	va_start(ap, fmt);
	diag_vset(g->job_error, sizeof(g->job_error), 0, who, fmt, ap);
	va_end(ap);
}

/* "guest NAME: what: libvirt's message"; in the thread that failed */
static int virt_error(struct virt_guest *g, const char *what)
{
	job_error(g, "%s: %s", what, virGetLastErrorMessage());
	return -EIO;
}

/* ---- jobs (in libuv's thread pool) ---- */

static int create_from_template(struct virt_guest *g)
{
	const struct virt_settings *s = g->settings;
	char port[16], vcpus[16], mem[16], err[512], *xml = NULL, *edited = NULL;
	char *authkey = g->authkey_line ? virt_base64(g->authkey_line, strlen(g->authkey_line))
					: xstrdup("");
	size_t n = s->nvars + 8;
	struct virt_template_var *v = xcalloc(n, sizeof(*v));
	int r = fileio_mkdir_p(s->runtime_dir, 0755);

	if (r < 0) {
		job_error(g, "cannot create GUEST_RUNTIME_DIR %s: %s", s->runtime_dir, strerror(-r));
		goto out;
	}
	g->channel_path = virt_settings_channel_path(s, g->index);
	g->console_log = virt_settings_console_path(s, g->index);
	/* leftovers of a run that crashed: a stale console log would say READY */
	if ((unlink(g->channel_path) < 0 && errno != ENOENT) ||
	    (unlink(g->console_log) < 0 && errno != ENOENT)) {
		r = -errno;
		job_error(g, "cannot remove the old %s or %s: %s", g->channel_path, g->console_log,
			  strerror(errno));
		goto out;
	}
	snprintf(port, sizeof(port), "%d", s->ssh_port_base + (int)g->index + 1);
	snprintf(vcpus, sizeof(vcpus), "%u", s->vcpus);
	snprintf(mem, sizeof(mem), "%u", s->memory_mib);
	v[0] = (struct virt_template_var){ "NAME", g->name };
	v[1] = (struct virt_template_var){ "VCPUS", vcpus };
	v[2] = (struct virt_template_var){ "MEMORY_MIB", mem };
	v[3] = (struct virt_template_var){ "SSH_PORT", port };
	v[4] = (struct virt_template_var){ "CHANNEL_PATH", g->channel_path };
	v[5] = (struct virt_template_var){ "CONSOLE_LOG", g->console_log };
	v[6] = (struct virt_template_var){ "AUTHKEY", authkey };
	v[7] = (struct virt_template_var){ "DOMAIN_TYPE", g->accel->domain_type };
	memcpy(v + 8, s->vars, s->nvars * sizeof(*v));
	r = virt_template_fill(s->template_text, s->template_path, v, n, NULL, &xml, err, sizeof(err));
	if (r < 0) {
		job_error(g, "%s", err);
		goto out;
	}
	r = virt_xml_edit_domain(xml, g->accel->domain_type,
				 s->cputune ? s->cputune[g->index] : NULL, &edited);
	if (r < 0) {
		job_error(g,
			  r == -EEXIST ? "%s already has a <cputune>: remove it, or unset "
					 "GUEST_VCPU_PINNING"
				       : "%s is not a well-formed <domain> once filled",
			  s->template_path);
		goto out;
	}
	int64_t t0 = clock_mono_ns();
	/* AUTODESTROY: should hostd die, libvirt destroys what it made */
	g->dom = virDomainCreateXML(virt_conn_ptr(g->conn), edited, VIR_DOMAIN_START_AUTODESTROY);
	g->created_ns = clock_mono_ns();
	g->create_s = (double)(g->created_ns - t0) / NSEC_PER_SEC;
	if (!g->dom) {
		r = virt_error(g, "cannot create its domain from the template");
		goto out;
	}
	g->transient = true;
out:
	free(edited);
	free(xml);
	free(v);
	free(authkey);
	return r;
}

/* Where the boot we are about to start will begin in the console log: at
 * its end when qemu appends (append='on'), else at 0 (qemu truncates it;
 * an offset would skip the new boot's first lines). */
static void note_console_offset(struct virt_guest *g)
{
	char *xml = virDomainGetXMLDesc(g->dom, VIR_DOMAIN_XML_INACTIVE), *path = NULL;
	struct stat st;
	bool append;
	if (xml && virt_xml_console_file(xml, &path, &append) == 0 && append && stat(path, &st) == 0)
		g->console_offset = st.st_size;
	free(path);
	free(xml);
}

/* An existing domain that wants KVM where KVM hangs would never boot. */
static int check_type(struct virt_guest *g)
{
	char *xml = virDomainGetXMLDesc(g->dom, VIR_DOMAIN_XML_INACTIVE), *type = NULL;
	int r = 0;
	if (!xml)
		return virt_error(g, "cannot read its XML");
	if (virt_xml_domain_type(xml, &type) == 0 && strcmp(type, "kvm") == 0 && !g->accel->kvm) {
		job_error(g,
			  "it is a KVM domain (type='kvm') but hostd decided on %s: "
			  "change it to type='qemu', or set GUEST_ACCEL=kvm to insist",
			  g->accel->reason);
		r = -EINVAL;
	}
	free(type);
	free(xml);
	return r;
}

static int attach_existing(struct virt_guest *g)
{
	int state, reason;
	int64_t t0;

	g->dom = virDomainLookupByName(virt_conn_ptr(g->conn), g->name);
	if (!g->dom)
		return virt_error(g, "cannot find its domain (GUEST_DOMAINS)");
	if (virDomainGetState(g->dom, &state, &reason, 0) < 0)
		return virt_error(g, "cannot read its state");
	switch (state) {
	case VIR_DOMAIN_RUNNING:
	case VIR_DOMAIN_BLOCKED:
		g->was_running = true;
		g->created_ns = clock_mono_ns();
		return 0;
	case VIR_DOMAIN_SHUTOFF:
	case VIR_DOMAIN_CRASHED: break;
	default:
		job_error(g, "its domain is %s; hostd uses domains that run or are shut off",
			  state == VIR_DOMAIN_PAUSED	    ? "paused"
			  : state == VIR_DOMAIN_SHUTDOWN    ? "shutting down"
			  : state == VIR_DOMAIN_PMSUSPENDED ? "suspended by the guest"
							    : "in no state");
		return -EBUSY;
	}
	if (check_type(g) < 0)
		return -EINVAL;
	note_console_offset(g);
	t0 = clock_mono_ns();
	if (virDomainCreate(g->dom) < 0)
		return virt_error(g, "cannot start its domain");
	g->created_ns = clock_mono_ns();
	g->create_s = (double)(g->created_ns - t0) / NSEC_PER_SEC;
	g->started_by_us = true;
	return 0;
}

/* The device alias of the agent's channel, which QEMU's port events name. */
struct alias_scan {
	bool in_channel, ours;
	char alias[64];
	char found[64];
};

static int alias_cb(const struct virt_xml_elem *e, void *data)
{
	struct alias_scan *a = data;
	char *v = NULL;

	if (strcmp(e->path, "domain/devices/channel") == 0) {
		if (e->end && a->ours && a->alias[0]) {
			memcpy(a->found, a->alias, sizeof(a->found));
			return 1;
		}
		a->in_channel = !e->end;
		a->ours = false;
		a->alias[0] = '\0';
		return 0;
	}
	if (!a->in_channel || e->end)
		return 0;
	if (strcmp(e->path, "domain/devices/channel/target") == 0 && virt_xml_attr(e, "name", &v) == 0)
		a->ours = strcmp(v, VIRT_AGENT_CHANNEL) == 0;
	else if (strcmp(e->path, "domain/devices/channel/alias") == 0 &&
		 virt_xml_attr(e, "name", &v) == 0)
		snprintf(a->alias, sizeof(a->alias), "%s", v);
	free(v);
	return 0;
}

static void read_alias(struct virt_guest *g, const char *xml)
{
	struct alias_scan a = { 0 };
	virt_xml_scan(xml, alias_cb, &a);
	memcpy(g->channel_alias, a.found, sizeof(g->channel_alias));
}

/* What the live XML says: channel socket, console log, type. */
static int read_live(struct virt_guest *g)
{
	char *xml = virDomainGetXMLDesc(g->dom, 0), *v = NULL;
	int r;

	if (!xml)
		return virt_error(g, "cannot read its live XML");
	virDomainGetUUIDString(g->dom, g->uuid);
	r = virt_xml_channel_path(xml, VIRT_AGENT_CHANNEL, &v);
	if (r == 0) {
		free(g->channel_path);
		g->channel_path = v;
	} else if (r == -ENOENT) {
		job_error(g, "its live XML has no channel named " VIRT_AGENT_CHANNEL ": add "
			     "<channel type='unix'><source mode='bind'/><target type='virtio' "
			     "name='" VIRT_AGENT_CHANNEL "'/></channel> to its <devices>");
	} else if (r == -EPROTO) {
		job_error(g, "its channel " VIRT_AGENT_CHANNEL " is not a unix socket with a path: "
			     "make it <channel type='unix'> with <source mode='bind'/>");
	} else {
		job_error(g, "its live XML is not well-formed (as far as hostd reads XML)");
	}
	if (r == 0 && virt_xml_console_file(xml, &v, NULL) == 0) {
		free(g->console_log);
		g->console_log = v;
	} else if (r == 0 && g->settings->wait_console) {
		r = -ENOENT;
		job_error(g, "its first serial port does not write to a file, so hostd cannot see "
			     "LOCKSTEP-READY: give it <serial type='file'> (or a <log file=...>), or set "
			     "GUEST_READY=none");
	}
	if (r == 0)
		read_alias(g, xml);
	if (r == 0 && virt_xml_domain_type(xml, &v) == 0) {
		snprintf(g->domain_type, sizeof(g->domain_type), "%s", v);
		free(v);
	}
	free(xml);
	return r;
}

static int job_start(struct virt_guest *g)
{
	int r = g->settings->origin == VIRT_ORIGIN_TEMPLATE ? create_from_template(g)
							    : attach_existing(g);
	return r < 0 ? r : read_live(g);
}

static int refresh_dom(struct virt_guest *g);

static int job_addr(struct virt_guest *g)
{
	char why[640];
	if (refresh_dom(g) != 0)
		return -EIO; /* asked again until the boot deadline */
	int r = virt_addr_lookup(g->dom, g->settings->ssh_port, &g->addr, why, sizeof(why));
	if (r < 0)
		job_error(g, "%s", why);
	return r;
}

/* Already stopped counts as done. */
static bool gone(virDomainPtr dom)
{
	int code = virGetLastErrorCode();
	return code == VIR_ERR_NO_DOMAIN || code == VIR_ERR_OPERATION_INVALID ||
	       virDomainIsActive(dom) == 0;
}

/* g->dom belongs to the connection it was found on; after libvirtd came
 * back it must be looked up again on the new one.  0 with g->dom current,
 * 1 when the domain is no more, -EIO. */
static int refresh_dom(struct virt_guest *g)
{
	virConnectPtr now = virt_conn_ptr(g->conn);
	virDomainPtr d;

	if (!g->dom || virDomainGetConnect(g->dom) == now)
		return 0;
	if (!g->uuid[0])
		return 1;
	d = virDomainLookupByUUIDString(now, g->uuid);
	if (!d)
		return virGetLastErrorCode() == VIR_ERR_NO_DOMAIN
			       ? 1
			       : virt_error(g, "cannot find its domain again after libvirt's "
					       "connection came back");
	virDomainFree(g->dom);
	g->dom = d;
	return 0;
}

/* After a reconnect: 0 running, 1 gone (or shut off), 2 paused; -EIO. */
static int job_reattach(struct virt_guest *g)
{
	int r = refresh_dom(g), state, reason;

	if (r != 0)
		return r;
	if (virDomainGetState(g->dom, &state, &reason, 0) < 0)
		return gone(g->dom) ? 1 : virt_error(g, "cannot read its state");
	if (state == VIR_DOMAIN_SHUTOFF || state == VIR_DOMAIN_CRASHED)
		return 1;
	return state == VIR_DOMAIN_PAUSED ? 2 : 0;
}

static int job_shutdown(struct virt_guest *g)
{
	int r = refresh_dom(g);
	if (r != 0)
		return r < 0 ? r : 0;
	if (virDomainShutdown(g->dom) < 0 && !gone(g->dom))
		return virt_error(g, "cannot shut its domain down");
	return 0;
}

static int job_destroy(struct virt_guest *g)
{
	int r = refresh_dom(g);
	if (r != 0)
		return r < 0 ? r : 0;
	if (virDomainDestroy(g->dom) < 0 && !gone(g->dom))
		return virt_error(g, "cannot destroy its domain");
	return 0;
}

static void work_cb(uv_work_t *w)
{
	struct virt_guest *g = w->data;
	switch (g->job) {
	case JOB_START: g->job_result = job_start(g); break;
	case JOB_ADDR: g->job_result = job_addr(g); break;
	case JOB_SHUTDOWN: g->job_result = job_shutdown(g); break;
	case JOB_DESTROY: g->job_result = g->dom ? job_destroy(g) : 0; break;
	case JOB_REATTACH: g->job_result = g->dom ? job_reattach(g) : 0; break;
	default: g->job_result = 0; break;
	}
}

static void after_work(uv_work_t *w, int status);

static void queue(struct virt_guest *g, enum job job)
{
	assert(!g->busy);
	g->busy = true;
	g->job = job;
	g->work.data = g;
	int r = uv_queue_work(virt_conn_loop(g->conn), &g->work, work_cb, after_work);
	assert(r == 0); /* it only refuses a NULL work_cb */
	(void)r;
}

/* ---- on the loop ---- */

static void timer_closed(uv_handle_t *h)
{
	free(h);
}

static uv_timer_t *timer_of(struct virt_guest *g)
{
	if (!g->timer) {
		g->timer = xmalloc(sizeof(*g->timer));
		uv_timer_init(virt_conn_loop(g->conn), g->timer);
		g->timer->data = g;
	}
	return g->timer;
}

static void quiesce(struct virt_guest *g)
{
	virt_console_wait_free(g->console);
	g->console = NULL;
	if (g->timer)
		uv_timer_stop(g->timer);
}

static void fail(struct virt_guest *g)
{
	quiesce(g);
	memcpy(g->failure, g->error, sizeof(g->failure));
	g->state = VIRT_GUEST_FAILED;
	g->ops->failed(g);
}

static void ready(struct virt_guest *g)
{
	g->state = VIRT_GUEST_READY;
	g->ready_ns = clock_mono_ns();
	g->boot_s = (double)(g->ready_ns - g->created_ns) / NSEC_PER_SEC;
	g->ops->ready(g);
}

static void addr_retry_cb(uv_timer_t *t)
{
	struct virt_guest *g = t->data;
	if (g->state == VIRT_GUEST_ADDRESSING && !g->busy)
		queue(g, JOB_ADDR);
}

static void address(struct virt_guest *g)
{
	const struct virt_settings *s = g->settings;

	g->state = VIRT_GUEST_ADDRESSING;
	if (s->addrs) {
		g->addr = s->addrs[g->index];
		g->addr.source = "config";
	} else if (g->transient && s->template_has_ssh_port) {
		/* QEMU user networking forwards this loopback port to its port 22 */
		snprintf(g->addr.host, sizeof(g->addr.host), "127.0.0.1");
		g->addr.port = s->ssh_port_base + (int)g->index + 1;
		g->addr.source = "forward";
	} else {
		queue(g, JOB_ADDR);
		return;
	}
	ready(g);
}

static void addr_done(struct virt_guest *g, int r)
{
	if (g->state != VIRT_GUEST_ADDRESSING)
		return; /* lost meanwhile: already failed */
	if (r == 0) {
		ready(g);
		return;
	}
	/* no lease yet while it boots: ask again, until the boot deadline */
	if (clock_mono_ns() + (int64_t)ADDR_RETRY_MS * 1000000 < g->deadline_ns) {
		uv_timer_start(timer_of(g), addr_retry_cb, ADDR_RETRY_MS, 0);
		return;
	}
	size_t n = strlen(g->error);
	snprintf(g->error + n, sizeof(g->error) - n,
		 " (asked for GUEST_BOOT_TIMEOUT=%gs; set GUEST_ADDRESSES to name it)",
		 g->settings->boot_timeout_s);
	fail(g);
}

static void console_done(struct virt_console_wait *w, int status, void *data)
{
	struct virt_guest *g = data;
	const struct virt_console_scan *scan = virt_console_result(w);

	snprintf(g->hostkey, sizeof(g->hostkey), "%s", scan->hostkey);
	if (status == 0) {
		virt_console_wait_free(w);
		g->console = NULL;
		address(g);
		return;
	}
	if (status == -ETIMEDOUT)
		set_error(g,
			  "not ready within GUEST_BOOT_TIMEOUT=%gs: no LOCKSTEP-READY line in its "
			  "console log %s (last line: \"%s\")",
			  g->settings->boot_timeout_s, g->console_log, scan->last);
	else if (status == -EPROTO)
		set_error(g, "the guest cannot become ready: LOCKSTEP-FAIL %s (console log %s)",
			  scan->failure, g->console_log);
	else
		set_error(g, "cannot read its console log %s: %s", g->console_log, strerror(-status));
	fail(g);
}

static void boot(struct virt_guest *g)
{
	int64_t left = g->deadline_ns - clock_mono_ns();
	int r;

	g->state = VIRT_GUEST_BOOTING;
	if (!g->settings->wait_console) {
		address(g);
		return;
	}
	r = virt_console_wait_start(virt_conn_loop(g->conn), g->console_log, g->console_offset,
				    left > 0 ? (double)left / NSEC_PER_SEC : 0, console_done, g,
				    &g->console);
	if (r < 0) {
		set_error(g, "cannot open its console log %s: %s", g->console_log, strerror(-r));
		fail(g);
	}
}

static void lost_error(struct virt_guest *g, const char *when)
{
	set_error(g, "its domain went away %s: libvirt says %s (%s)%s%s", when,
		  virt_event_name(g->lost_event),
		  virt_event_detail_name(g->lost_event, g->lost_detail),
		  g->console_log ? "; its console log is " : "", g->console_log ? g->console_log : "");
}

static void start_done(struct virt_guest *g, int r)
{
	if (r < 0) {
		fail(g);
		return;
	}
	g->deadline_ns = g->created_ns + (int64_t)(g->settings->boot_timeout_s * NSEC_PER_SEC);
	if (g->lost) {
		lost_error(g, "while starting");
		fail(g);
		return;
	}
	boot(g);
}

/* ---- stopping ---- */

static void stopped(struct virt_guest *g)
{
	quiesce(g);
	g->state = VIRT_GUEST_STOPPED;
	g->ops->stopped(g);
}

static void shutdown_timeout_cb(uv_timer_t *t)
{
	struct virt_guest *g = t->data;
	if (g->state == VIRT_GUEST_STOPPING && !g->busy)
		queue(g, JOB_DESTROY);
}

static void stop_begin(struct virt_guest *g)
{
	const struct virt_settings *s = g->settings;

	quiesce(g);
	g->state = VIRT_GUEST_STOPPING;
	g->error[0] = '\0';
	if (g->dom && virt_conn_reconnecting(g->conn)) {
		/* a destroy now would fail on the dead connection and leave the
		 * domain running: virt_guest_conn_changed goes on */
		g->stop_deferred = true;
		return;
	}
	if (g->dom && g->transient) {
		queue(g, JOB_DESTROY);
	} else if (g->dom && g->started_by_us && s->restore_state && !g->lost) {
		g->shutdown_sent = true;
		queue(g, s->shutdown_timeout_s > 0 ? JOB_SHUTDOWN : JOB_DESTROY);
	} else {
		queue(g, JOB_NONE); /* left as found; stopped still comes from the loop */
	}
}

static void stop_progress(struct virt_guest *g, int job, int r)
{
	if (job == JOB_SHUTDOWN && r == 0 && !g->down) {
		uv_timer_start(timer_of(g), shutdown_timeout_cb,
			       (uint64_t)(g->settings->shutdown_timeout_s * 1000), 0);
		return;
	}
	if (job == JOB_SHUTDOWN && r < 0) {
		queue(g, JOB_DESTROY);
		return;
	}
	stopped(g);
}

static void set_paused(struct virt_guest *g, bool paused, int detail, int64_t ns)
{
	if (paused == g->paused)
		return;
	g->paused = paused;
	if (paused) {
		g->paused_ns = ns;
		g->paused_detail = detail;
		g->pauses++;
	}
	if (g->ops->paused)
		g->ops->paused(g);
}

/* r from job_reattach: 0 running, 1 gone, 2 paused, < 0 unknown */
static void reattach_done(struct virt_guest *g, int r)
{
	if (r == 2 || r == 0)
		set_paused(g, r == 2, VIR_DOMAIN_EVENT_SUSPENDED_PAUSED, clock_mono_ns());
	if (r != 1 || g->lost || g->state != VIRT_GUEST_READY)
		return;
	g->lost = true;
	set_error(g,
		  "its domain is gone: it ended while libvirt's connection was down "
		  "(libvirtd stopped or restarted; libvirtd destroys a guest made for the run, "
		  "AUTODESTROY, as it stops)%s%s",
		  g->console_log ? "; its console log is " : "", g->console_log ? g->console_log : "");
	fail(g);
}

static void after_work(uv_work_t *w, int status)
{
	(void)status; /* jobs are never cancelled */
	struct virt_guest *g = w->data;
	int job = g->job, r = g->job_result;

	g->busy = false;
	g->job = JOB_NONE;
	/* a guest that failed already keeps the first reason */
	if (r < 0 && g->state != VIRT_GUEST_FAILED)
		memcpy(g->error, g->job_error, sizeof(g->error));
	if (g->state == VIRT_GUEST_STOPPING) {
		stop_progress(g, job, r);
		return;
	}
	if (g->stop_requested) {
		if (job == JOB_START && r < 0)
			memcpy(g->failure, g->error, sizeof(g->failure));
		stop_begin(g);
		return;
	}
	if (job == JOB_START)
		start_done(g, r);
	else if (job == JOB_ADDR)
		addr_done(g, r);
	else if (job == JOB_REATTACH)
		reattach_done(g, r);
	if (g->reattach_wanted && !g->busy && g->state == VIRT_GUEST_READY) {
		g->reattach_wanted = false;
		queue(g, JOB_REATTACH);
	}
}

static void watch_cb(struct virt_watch *w, const struct virt_lifecycle *ev)
{
	struct virt_guest *g = w->data;

	if ((ev->event == VIR_DOMAIN_EVENT_SUSPENDED || ev->event == VIR_DOMAIN_EVENT_RESUMED) &&
	    g->state != VIRT_GUEST_NEW && g->state != VIRT_GUEST_STOPPING &&
	    g->state != VIRT_GUEST_STOPPED && ev->received_ns >= g->start_ns) {
		set_paused(g, ev->event == VIR_DOMAIN_EVENT_SUSPENDED, ev->detail, ev->received_ns);
		return;
	}
	if (!virt_event_is_loss(ev->event) || g->state == VIRT_GUEST_NEW ||
	    g->state == VIRT_GUEST_STOPPED)
		return;
	/* The end of an earlier life of the same domain (stopped just before
	 * we started it again), delivered late: not about this one. */
	if (ev->received_ns < g->start_ns)
		return;
	if (g->state == VIRT_GUEST_STOPPING) {
		/* the shutdown we asked for: done unless a job still runs */
		g->down = true;
		if (g->shutdown_sent && !g->busy)
			stopped(g);
		return;
	}
	if (g->lost)
		return;
	g->lost = true;
	g->lost_event = ev->event;
	g->lost_detail = ev->detail;
	switch (g->state) {
	case VIRT_GUEST_BOOTING:
	case VIRT_GUEST_ADDRESSING:
		lost_error(g, "while booting");
		fail(g);
		break;
	case VIRT_GUEST_READY:
		lost_error(g, "mid-run");
		fail(g);
		break;
	default: break; /* STARTING: start_done reports it */
	}
}

static void port_cb(struct virt_watch *w, const char *alias, bool open, int64_t received_ns)
{
	struct virt_guest *g = w->data;

	if (!g->channel_alias[0] || strcmp(alias, g->channel_alias) != 0 ||
	    received_ns < g->start_ns || g->state != VIRT_GUEST_READY)
		return;
	if (g->ops->port)
		g->ops->port(g, open);
}

void virt_guest_conn_changed(struct virt_guest *g)
{
	if (g->stop_deferred && !g->busy) {
		g->stop_deferred = false;
		stop_begin(g);
		return;
	}
	if (g->state != VIRT_GUEST_READY || virt_conn_lost(g->conn))
		return;
	if (g->busy)
		g->reattach_wanted = true;
	else
		queue(g, JOB_REATTACH);
}

void virt_guest_init(struct virt_guest *g, struct virt_conn *c, const struct virt_settings *s,
		     const struct virt_accel *a, size_t index, const char *authkey_line,
		     const struct virt_guest_ops *ops, void *data)
{
	memset(g, 0, sizeof(*g));
	g->index = index;
	g->name = s->names[index];
	g->settings = s;
	g->accel = a;
	g->ops = ops;
	g->data = data;
	g->conn = c;
	g->authkey_line = authkey_line ? xstrdup(authkey_line) : NULL;
	g->watch.domain = g->name;
	g->watch.cb = watch_cb;
	g->watch.port = port_cb;
	g->watch.data = g;
	virt_conn_watch_add(c, &g->watch);
}

int virt_guest_start(struct virt_guest *g)
{
	if (g->state != VIRT_GUEST_NEW)
		return -EALREADY;
	g->state = VIRT_GUEST_STARTING;
	g->start_ns = clock_mono_ns();
	queue(g, JOB_START);
	return 0;
}

void virt_guest_stop(struct virt_guest *g)
{
	if (g->stop_requested || g->state == VIRT_GUEST_STOPPING || g->state == VIRT_GUEST_STOPPED)
		return;
	g->stop_requested = true;
	if (!g->busy)
		stop_begin(g);
}

void virt_guest_fini(struct virt_guest *g)
{
	assert(!g->busy && "a job still runs for this guest");
	virt_conn_watch_remove(g->conn, &g->watch);
	virt_console_wait_free(g->console);
	if (g->timer)
		uv_close((uv_handle_t *)g->timer, timer_closed);
	if (g->dom)
		virDomainFree(g->dom);
	free(g->channel_path);
	free(g->console_log);
	free(g->authkey_line);
	memset(g, 0, sizeof(*g));
}

int virt_guest_channel_connect(const struct virt_guest *g)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (!g->channel_path || strlen(g->channel_path) >= sizeof(a.sun_path))
		return -EINVAL;
	memcpy(a.sun_path, g->channel_path, strlen(g->channel_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

const char *virt_guest_state_name(enum virt_guest_state s)
{
	static const char *const names[] = {
		"new",	 "starting", "booting",	 "addressing",
		"ready", "failed",   "stopping", "stopped",
	};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}
