// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bringing the participants of a run up and down.
 *
 * Local guests and the host are agent processes on socketpairs: up at once.
 * A libvirt guest goes through virt_guest (start or attach, boot, address),
 * then its channel socket is connected and the harness job pushes the agent
 * in over SSH and starts it.  The processes on the host start only once
 * every libvirt guest is up, and the first barrier's clock starts then, so
 * that a slow boot (tens of seconds under TCG) never counts against
 * BARRIER_TIMEOUT: boots have GUEST_BOOT_TIMEOUT.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bundle.h"
#include "clock.h"
#include "fileio.h"
#include "log.h"
#include "run_priv.h"
#include "ssh_key.h"
#include "virt_json.h"
#include "xalloc.h"

/* A participant's launch: run_launch.c's alone. */
struct part_launch {
	bool launched; /* its agent was started */
	/* PART_LOCAL and PART_HOST */
	struct local_guest proc;
	char exit_desc[64]; /* how its agent process ended */
	/* PART_LIBVIRT */
	struct virt_guest vm;
	bool vm_stopped; /* nothing more to undo for it */
	struct harness_job push;
	bool push_busy;
	char *known_hosts;
	struct harness_job fetch; /* agent.log back, before it is stopped */
	bool fetch_busy, log_fetched;
	char *log_path;
};

/* The run's side: libvirt, hostd's SSH key, the guests still coming up. */
struct run_launch {
	struct virt_conn *conn;
	struct virt_accel accel;
	char *key_path, *pubkey;
	json_object *libvirt_info; /* for the manifest */
	size_t launching;	   /* libvirt guests not up yet */
};

void run_launch_init(struct run *r)
{
	r->launch = xcalloc(1, sizeof(*r->launch));
	for (size_t i = 0; i < r->n; i++)
		r->p[i].launch = xcalloc(1, sizeof(*r->p[i].launch));
}

bool run_launch_uses_libvirt(const struct run *r)
{
	return r->launch && r->launch->conn;
}

json_object *run_launch_libvirt_json(struct run *r)
{
	struct run_launch *l = r->launch;
	if (l && l->conn && !l->libvirt_info) {
		l->libvirt_info = json_object_new_object();
		json_object_object_add(l->libvirt_info, "connection", virt_conn_json(l->conn));
		json_object_object_add(l->libvirt_info, "accelerator", virt_accel_json(&l->accel));
	}
	return l && l->libvirt_info ? json_object_get(l->libvirt_info) : NULL;
}

void run_launch_kill(struct participant *p)
{
	local_guest_kill(&p->launch->proc, SIGKILL);
}

bool run_launch_agent_running(const struct participant *p)
{
	return p->launch->proc.running;
}

virDomainPtr run_launch_domain(const struct participant *p)
{
	return p->kind == PART_LIBVIRT ? p->launch->vm.dom : NULL;
}

const char *run_launch_exit(const struct participant *p)
{
	return p->launch->exit_desc[0] ? p->launch->exit_desc : NULL;
}

static const char *trust_name(enum ssh_push_trust t)
{
	switch (t) {
	case SSH_PUSH_TRUST_PINNED: return "pinned";
	case SSH_PUSH_TRUST_KNOWN: return "known";
	case SSH_PUSH_TRUST_RECORDED: return "recorded";
	}
	return "unknown";
}

void run_launch_json(json_object *o, const struct participant *p)
{
	const struct part_launch *l = p->launch;
	if (p->kind != PART_LIBVIRT)
		return;
	if (l->vm.name)
		json_object_object_add(o, "libvirt", virt_guest_json(&l->vm));
	if (!l->launched)
		return;
	json_object *h = json_object_new_object();
	json_object_object_add(h, "bytes", json_object_new_uint64(l->push.stats.bytes));
	json_object_object_add(h, "seconds", json_object_new_double(l->push.stats.seconds));
	json_object_object_add(h, "ssh_connect_s", json_object_new_double(l->push.connect_s));
	json_object_object_add(h, "hostkey_fingerprint",
			       json_object_new_string(l->push.hostkey.fingerprint));
	json_object_object_add(h, "hostkey_trust",
			       json_object_new_string(trust_name(l->push.hostkey.trust)));
	json_object_object_add(h, "agent_pid", json_object_new_int64(l->push.agent_pid));
	json_object_object_add(o, "harness", h);
}

const char *run_part_kind_name(enum part_kind k)
{
	switch (k) {
	case PART_LOCAL: return "local";
	case PART_HOST: return "host";
	case PART_LIBVIRT: return "libvirt";
	}
	return "unknown";
}

/* ---- processes on the host --------------------------------------------- */

static void on_exited(struct local_guest *g)
{
	struct participant *p = g->data;
	struct run *r = p->run;
	if (g->exit_status > 128)
		snprintf(p->launch->exit_desc, sizeof(p->launch->exit_desc), "killed by signal %d (%s)",
			 g->exit_status - 128, strsignal(g->exit_status - 128));
	else
		snprintf(p->launch->exit_desc, sizeof(p->launch->exit_desc),
			 "exited with status %d", g->exit_status);
	if (r->finishing) {
		run_gone_check(r);
		return;
	}
	run_fail(r, p, "its agent %s", p->launch->exit_desc);
	run_manifest_write(r); /* the exit status completes an earlier failure */
}

/* The files its g.conf ships (cat >FILE <<END), where its steps run:
 * written below the run folder's fd, never through a link a submitter
 * may have planted in her work folder. */
static int write_shipped(struct run *r, struct participant *p)
{
	const struct ssh_push_file *shipped;
	size_t nshipped = experiment_shipped(r->exp, p->guest_index, &shipped);
	int e = 0;
	for (size_t i = 0; e == 0 && i < nshipped; i++) {
		char *rel = xasprintf("nodes/%s/work/%s", p->node.name, shipped[i].name_in_tar);
		int fd = results_open_file(r->results, rel, O_WRONLY | O_CREAT | O_EXCL, 0644);
		e = fd < 0 ? fd : fileio_write_all(fd, shipped[i].data, shipped[i].len);
		if (fd >= 0 && close(fd) < 0 && e == 0)
			e = -errno;
		if (e < 0)
			log_error("cannot write %s/%s, shipped with the steps of %s: %s",
				  results_path(r->results), rel, p->node.name, strerror(-e));
		free(rel);
	}
	return e;
}

static int launch_process(struct run *r, struct participant *p)
{
	const struct runas *ra = r->opt->runas;
	char *work = NULL;
	int e = results_work_dir(r->results, p->node.name, ra ? ra->uid : (uid_t)-1,
				 ra ? ra->gid : (gid_t)-1, &work);
	if (e < 0) {
		log_error("cannot create the work folder of %s in %s/nodes: %s", p->node.name,
			  results_path(r->results), strerror(-e));
		return e;
	}
	char *log_rel = xasprintf("nodes/%s/agent.log", p->node.name);
	int fd = -1,
	    log_fd = results_open_file(r->results, log_rel, O_WRONLY | O_CREAT | O_APPEND, 0640);
	p->launch->proc.data = p;
	p->launch->proc.exited = on_exited;
	/* the test double of a guest's own clock */
	char offset[32], drift[32], jitter[32];
	const struct experiment *x = r->exp;
	snprintf(offset, sizeof(offset), "%lld", (long long)x->local_clock_offset_ns);
	snprintf(drift, sizeof(drift), "%g", x->local_clock_drift_ppm);
	snprintf(jitter, sizeof(jitter), "%lld", (long long)x->local_clock_jitter_ns);
	/* the same real-time priority for the start stamp as hostd's release */
	char prio[16];
	snprintf(prio, sizeof(prio), "%d", x->release_rt_priority);
	const char *extra[] = { "--start-rt-priority",
				prio,
				"--clock-offset-ns",
				offset,
				"--clock-drift-ppm",
				drift,
				"--clock-jitter-ns",
				jitter,
				NULL };
	if (part_clock_shared(p->clock))
		extra[2] = NULL;
	if (log_fd < 0) {
		e = log_fd;
		log_error("cannot open %s/%s: %s", results_path(r->results), log_rel, strerror(-e));
	} else if ((e = write_shipped(r, p)) < 0) {
		/* named by write_shipped */
	} else if ((e = local_guest_spawn(r->loop, &p->launch->proc, r->opt->agent_path,
					  p->node.name, work, extra, log_fd, ra, &fd)) < 0) {
		log_error("cannot start the agent of %s (%s): %s", p->node.name, r->opt->agent_path,
			  strerror(-e));
	} else if ((e = node_attach(&p->node, r->loop, fd)) < 0) {
		log_error("cannot watch the channel of %s: %s", p->node.name, strerror(-e));
	}
	if (log_fd >= 0)
		close(log_fd);
	free(work);
	free(log_rel);
	return e;
}

/* Every libvirt guest is up (or out): the processes on the host start, and
 * so does the first barrier's clock. */
static void launch_processes(struct run *r)
{
	for (size_t i = 0; i < r->n && !r->finishing; i++) {
		struct participant *p = &r->p[i];
		if (p->kind == PART_LIBVIRT || p->failed)
			continue;
		if (launch_process(r, p) < 0) {
			run_fail(r, p, "could not be started");
			continue;
		}
		p->launch->launched = true;
	}
	if (!r->finishing)
		run_launched(r);
}

static void launch_step_done(struct run *r)
{
	if (r->launch->launching > 0 && --r->launch->launching == 0)
		launch_processes(r);
}

/* ---- libvirt guests ---------------------------------------------------- */

/* How long hostd tries to get libvirt back after libvirtd went away (it
 * restarts in seconds); the guests and their channels live on meanwhile. */
#define RUN_LIBVIRT_RECONNECT_S 120

static void fill_ssh(struct run *r, struct participant *p, struct harness_job *j);

static void fetch_done(struct harness_job *j)
{
	struct participant *p = j->data;
	struct run *r = p->run;
	p->launch->fetch_busy = false;
	p->launch->log_fetched = true;
	if (j->log_local_fd >= 0)
		close(j->log_local_fd);
	j->log_local_fd = -1;
	if (j->result < 0)
		log_warn("%s: cannot fetch its agent.log: %s", p->node.name, j->error);
	if (p->launch->vm.state != VIRT_GUEST_NEW && !p->launch->vm_stopped)
		virt_guest_stop(&p->launch->vm);
	run_gone_check(r);
}

/* The agent's log is worth a few seconds of SSH only from a guest that runs
 * and had an agent: a paused or lost one would just time out. */
static bool fetch_log(struct run *r, struct participant *p)
{
	const struct virt_guest *g = &p->launch->vm;
	if (p->launch->log_fetched || p->launch->fetch_busy || !p->launch->launched || g->lost ||
	    g->paused || (r->launch->conn && virt_conn_lost(r->launch->conn) && g->transient))
		return false;
	char *dir = NULL;
	if (results_node_dir(r->results, p->node.name, &dir) < 0)
		return false;
	free(p->launch->log_path);
	p->launch->log_path = xasprintf("%s/agent.log", dir);
	free(dir);
	char *rel = xasprintf("nodes/%s/agent.log", p->node.name);
	int fd = results_open_file(r->results, rel, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	free(rel);
	if (fd < 0) {
		log_warn("%s: cannot write its agent.log to %s: %s", p->node.name,
			 p->launch->log_path, strerror(-fd));
		return false;
	}
	struct harness_job *j = &p->launch->fetch;
	fill_ssh(r, p, j);
	j->log_local_path = p->launch->log_path;
	j->log_local_fd = fd;
	j->done = fetch_done;
	if (harness_fetch_log_start(r->loop, j) < 0) {
		close(fd);
		j->log_local_fd = -1;
		return false;
	}
	p->launch->fetch_busy = true;
	return true;
}

void run_launch_drop(struct run *r, struct participant *p)
{
	if (p->kind != PART_LIBVIRT || p->launch->push_busy || p->launch->fetch_busy ||
	    p->launch->vm_stopped || p->launch->vm.state == VIRT_GUEST_NEW)
		return;
	if (!fetch_log(r, p))
		virt_guest_stop(&p->launch->vm);
}

const char *run_launch_closed_why(struct run *r, struct participant *p)
{
	if (p->kind != PART_LIBVIRT)
		return NULL;
	/* QEMU holds the host side of the channel: only its end closes it,
	 * often a little before libvirt's lifecycle event says why */
	if (!r->launch->conn || !virt_conn_lost(r->launch->conn))
		return "its channel closed: its QEMU exited (the domain was destroyed, shut down "
		       "or crashed)";
	return "its channel closed (its QEMU exited) while libvirt's connection was down: "
	       "libvirtd stopped, and a guest made for the run (AUTODESTROY) is destroyed by "
	       "libvirtd as it stops";
}

bool run_launch_paused_why(struct run *r, struct participant *p, char *buf, size_t len)
{
	(void)r;
	const struct virt_guest *g = &p->launch->vm;
	if (p->kind != PART_LIBVIRT || !g->paused)
		return false;
	snprintf(buf, len,
		 "its domain was paused (libvirt: suspended, %s) %.1f s ago and is "
		 "still paused",
		 virt_event_detail_name(VIR_DOMAIN_EVENT_SUSPENDED, g->paused_detail),
		 (double)(clock_mono_ns() - g->paused_ns) / NSEC_PER_SEC);
	return true;
}

static void push_done(struct harness_job *j)
{
	struct participant *p = j->data;
	struct run *r = p->run;
	p->launch->push_busy = false;
	if (r->finishing) {
		if (j->result == 0)
			p->launch->launched = true;
		if (!fetch_log(r, p) && p->launch->vm.state != VIRT_GUEST_NEW)
			virt_guest_stop(&p->launch->vm);
		run_gone_check(r);
		return;
	}
	if (j->result < 0 || p->failed) {
		/* failed meanwhile (lost, or the push itself): out of the run now */
		run_fail(r, p, "%s", j->error);
		run_launch_drop(r, p);
		launch_step_done(r);
		return;
	}
	if (j->hostkey.trust == SSH_PUSH_TRUST_RECORDED)
		log_warn("%s: first SSH connection: its host key %s was recorded in %s",
			 p->node.name, j->hostkey.fingerprint, j->known_hosts_path);
	log_info("%s: agent started (pid %ld in the guest); harness %.1f KiB in %.2f s",
		 p->node.name, j->agent_pid, (double)j->stats.bytes / 1024, j->stats.seconds);
	p->launch->launched = true;
	run_manifest_write(r);
	launch_step_done(r);
}

/* Where and how to reach a guest over SSH: the push's and the fetch's. */
static void fill_ssh(struct run *r, struct participant *p, struct harness_job *j)
{
	const struct virt_guest *g = &p->launch->vm;
	const struct experiment *x = r->exp;
	j->node = p->node.name;
	j->host = g->addr.host;
	j->port = g->addr.port;
	j->user = x->ssh_user;
	j->private_key_path = r->launch->key_path;
	j->expected_hostkey = g->hostkey[0] ? g->hostkey : NULL;
	if (!p->launch->known_hosts)
		p->launch->known_hosts =
			xasprintf("%s/known_hosts.d/%s", r->opt->state_dir, p->node.name);
	j->known_hosts_path = p->launch->known_hosts;
	j->remote_dir = x->harness_dir;
	j->timeout_ms = (int)(x->ssh_timeout_s * 1000);
	j->data = p;
}

static void vm_ready(struct virt_guest *g)
{
	struct participant *p = g->data;
	struct run *r = p->run;
	if (r->finishing || p->failed)
		return;
	log_info("%s: up after %.1f s (%s), channel %s, SSH %s:%d", p->node.name, g->boot_s,
		 g->domain_type, g->channel_path, g->addr.host, g->addr.port);

	/* The channel first: a guest writing to its port blocks until we are
	 * connected, so nothing the agent says is lost. */
	int fd = virt_guest_channel_connect(g);
	int e = fd < 0 ? fd : node_attach(&p->node, r->loop, fd);
	if (e < 0) {
		run_fail(r, p, "cannot connect to its channel %s: %s", g->channel_path, strerror(-e));
		launch_step_done(r);
		return;
	}

	struct harness_job *j = &p->launch->push;
	const struct experiment *x = r->exp;
	fill_ssh(r, p, j);
	j->agent_path = r->opt->guest_agent_path;
	/* HARNESS_BINARIES and the rest (bundle_settings.h), after the agent */
	j->extra_files = x->bundles.bundle ? x->bundles.bundle->files : NULL;
	j->nextra_files = x->bundles.bundle ? x->bundles.bundle->nfiles : 0;
	j->nshipped_files = experiment_shipped(x, p->guest_index, &j->shipped_files);
	j->start_rt_priority = x->release_rt_priority;
	j->connect_timeout_ms = j->timeout_ms;
	j->done = push_done;
	j->data = p;
	if ((e = harness_push_start(r->loop, j)) < 0) {
		run_fail(r, p, "cannot queue the harness push: %s", strerror(-e));
		launch_step_done(r);
		return;
	}
	p->launch->push_busy = true;
}

static void vm_failed(struct virt_guest *g)
{
	struct participant *p = g->data;
	struct run *r = p->run;
	if (r->finishing) {
		run_gone_check(r);
		return;
	}
	bool was_launching = !p->launch->launched && !p->failed && !p->launch->push_busy;
	run_fail(r, p, "%s", g->failure[0] ? g->failure : g->error);
	if (was_launching)
		launch_step_done(r);
}

static void vm_stopped(struct virt_guest *g)
{
	struct participant *p = g->data;
	/* an error now is about stopping; why it failed earlier is in failure */
	if (g->error[0] && strcmp(g->error, g->failure) != 0)
		log_warn("%s: %s", p->node.name, g->error);
	p->launch->vm_stopped = true;
	run_gone_check(p->run);
}

static void vm_paused(struct virt_guest *g)
{
	struct participant *p = g->data;
	struct run *r = p->run;
	char what[160];
	if (r->finishing)
		return;
	if (g->paused)
		snprintf(what, sizeof(what), "its domain was paused (libvirt: suspended, %s)",
			 virt_event_detail_name(VIR_DOMAIN_EVENT_SUSPENDED, g->paused_detail));
	else
		snprintf(what, sizeof(what), "its domain was resumed after %.1f s paused",
			 (double)(clock_mono_ns() - g->paused_ns) / NSEC_PER_SEC);
	log_warn("%s: %s", p->node.name, what);
	if (!p->failed)
		run_add_event(r, p, 0, what);
}

/* The agent holds its port open for its whole life (guestagent/agent.c):
 * the guest closing it means the agent is gone, and the host side of the
 * channel (QEMU's socket) says nothing of it.  QEMU does, and libvirt
 * passes it on. */
static void vm_port(struct virt_guest *g, bool open)
{
	struct participant *p = g->data;
	struct run *r = p->run;
	if (open || r->finishing || p->failed || !p->launch->launched)
		return;
	run_fail(r, p,
		 "its agent closed its virtio-serial port in the guest (QEMU: %s closed): "
		 "the agent exited or was killed; its log is nodes/%s/agent.log",
		 g->channel_alias, p->node.name);
}

static const struct virt_guest_ops vm_ops = {
	.ready = vm_ready,
	.failed = vm_failed,
	.stopped = vm_stopped,
	.paused = vm_paused,
	.port = vm_port,
};

static void conn_lifecycle(struct virt_conn *c, const struct virt_lifecycle *ev)
{
	(void)c;
	(void)ev; /* our guests have watches of their own; others are not ours */
}

static void conn_closed(struct virt_conn *c, int reason, const char *why)
{
	struct run *r = virt_conn_data(c);
	(void)reason;
	/* The guests and their channels live on without libvirtd (but a
	 * stopping libvirtd destroys AUTODESTROY domains); only lifecycle
	 * events and the clean-up at the end need it. */
	log_error("lost the connection to libvirt (%s); reconnecting for up to %d s", why,
		  RUN_LIBVIRT_RECONNECT_S);
	char what[320];
	snprintf(what, sizeof(what), "lost the connection to libvirt: %s", why);
	run_add_event(r, NULL, 0, what);
}

static void conn_reconnect(struct virt_conn *c, int status, unsigned attempt, double next_s,
			   const char *why)
{
	struct run *r = virt_conn_data(c);
	char what[640];
	if (status == -EAGAIN) {
		log_warn("libvirt %s: reconnect %u failed (%s); next in %.1f s", virt_conn_uri(c),
			 attempt, why, next_s);
		return;
	}
	if (status == 0) {
		snprintf(what, sizeof(what),
			 "reconnected to libvirt after %.1f s (%u tries); "
			 "lifecycle events are watched again",
			 next_s, attempt);
		log_info("%s", what);
	} else {
		snprintf(what, sizeof(what),
			 "gave up reconnecting to libvirt after %u tries within "
			 "%d s (last: %s): guests are watched through their channels only, and guests "
			 "made for this run may need `virsh destroy`",
			 attempt, RUN_LIBVIRT_RECONNECT_S, why);
		log_error("%s", what);
	}
	run_add_event(r, NULL, 0, what);
	/* each guest looks its domain up on the new connection, and a stop
	 * that waited for it goes on */
	for (size_t i = 0; i < r->n; i++)
		if (r->p[i].kind == PART_LIBVIRT && r->p[i].launch->vm.state != VIRT_GUEST_NEW)
			virt_guest_conn_changed(&r->p[i].launch->vm);
}

static void conn_overflow(struct virt_conn *c, uint64_t lost)
{
	struct run *r = virt_conn_data(c);
	char what[96];
	snprintf(what, sizeof(what), "%llu libvirt events lost", (unsigned long long)lost);
	run_add_event(r, NULL, 0, what);
}

static const struct virt_conn_ops conn_ops = {
	.lifecycle = conn_lifecycle,
	.closed = conn_closed,
	.overflow = conn_overflow,
	.reconnect = conn_reconnect,
};

int run_launch_preflight(struct run *r)
{
	const struct experiment *x = r->exp;
	char err[1024];
	int e;
	bool guests = false;
	for (size_t i = 0; i < r->n; i++)
		guests |= r->p[i].kind == PART_LIBVIRT;
	if (!guests || r->launch->pubkey)
		return 0;

	char *pub = NULL;
	if (x->ssh_key) {
		if (access(x->ssh_key, R_OK) < 0) {
			e = -errno;
			log_error("GUEST_SSH_KEY=%s: cannot read the private key: %s", x->ssh_key,
				  strerror(-e));
			return e;
		}
		r->launch->key_path = xstrdup(x->ssh_key);
		char *pub_path = xasprintf("%s.pub", x->ssh_key);
		size_t len;
		e = fileio_read_all(pub_path, 16384, &pub, &len);
		if (e < 0) {
			log_error("GUEST_SSH_KEY=%s: cannot read its public key %s: %s", x->ssh_key,
				  pub_path, strerror(-e));
			free(pub_path);
			return e;
		}
		free(pub_path);
		pub[strcspn(pub, "\n")] = '\0';
	} else if ((e = ssh_key_ensure(r->opt->state_dir, &r->launch->key_path, &pub, err,
				       sizeof(err))) < 0) {
		log_error("%s", err);
		return e;
	}
	r->launch->pubkey = pub;
	char *kh = xasprintf("%s/known_hosts.d", r->opt->state_dir);
	e = fileio_mkdir_p(kh, 0700);
	free(kh);
	if (e < 0) {
		log_error("cannot create %s/known_hosts.d: %s", r->opt->state_dir, strerror(-e));
		return e;
	}
	return 0;
}

static int open_libvirt(struct run *r)
{
	const struct experiment *x = r->exp;
	char err[1024];
	int e = run_launch_preflight(r); /* done already by setup(), unless a test skipped it */
	if (e < 0)
		return e;

	virt_accel_decide(NULL, x->virt.accel, &r->launch->accel);
	log_info("accelerator: %s (%s)", r->launch->accel.name, r->launch->accel.reason);

	e = virt_conn_open(r->loop, x->virt.uri, &conn_ops, r, &r->launch->conn, err, sizeof(err));
	if (e < 0) {
		log_error("%s", err);
		return e;
	}
	virt_conn_set_reconnect(r->launch->conn, RUN_LIBVIRT_RECONNECT_S);
	return 0;
}

/* ---- the run's side ---------------------------------------------------- */

int run_launch_all(struct run *r)
{
	size_t guests = 0;
	for (size_t i = 0; i < r->n; i++)
		guests += r->p[i].kind == PART_LIBVIRT;
	if (guests == 0) {
		launch_processes(r);
		return 0;
	}
	int e = open_libvirt(r);
	if (e < 0)
		return e;
	r->launch->launching = guests;
	for (size_t i = 0; i < r->n && !r->finishing; i++) {
		struct participant *p = &r->p[i];
		if (p->kind != PART_LIBVIRT)
			continue;
		virt_guest_init(&p->launch->vm, r->launch->conn, &r->exp->virt, &r->launch->accel,
				p->guest_index, r->launch->pubkey, &vm_ops, p);
		if ((e = virt_guest_start(&p->launch->vm)) < 0) {
			run_fail(r, p, "cannot queue its start: %s", strerror(-e));
			launch_step_done(r);
		}
	}
	return 0;
}

void run_launch_stop_all(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		if (p->kind == PART_LIBVIRT && !p->launch->push_busy && !p->launch->fetch_busy &&
		    !p->launch->vm_stopped && p->launch->vm.state != VIRT_GUEST_NEW)
			run_launch_drop(r, p);
		else if (p->kind == PART_LIBVIRT && p->launch->vm.state == VIRT_GUEST_NEW)
			p->launch->vm_stopped = true;
	}
}

bool run_launch_gone(const struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct participant *p = &r->p[i];
		if (p->launch->proc.running || p->node.open || p->launch->push_busy ||
		    p->launch->fetch_busy)
			return false;
		if (p->kind == PART_LIBVIRT && !p->launch->vm_stopped)
			return false;
	}
	return true;
}

void run_launch_kill_all(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		local_guest_kill(&r->p[i].launch->proc, SIGKILL);
		node_close(&r->p[i].node);
	}
}

void run_launch_release(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		if (p->kind == PART_LIBVIRT && p->launch->vm.state != VIRT_GUEST_NEW) {
			virt_guest_fini(&p->launch->vm);
			p->launch->vm.state = VIRT_GUEST_NEW;
		}
	}
	/* its async handle is what keeps the loop alive now */
	virt_conn_close(r->launch->conn);
	r->launch->conn = NULL;
}

void run_launch_fini(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (!r->p[i].launch)
			continue;
		free(r->p[i].launch->known_hosts);
		free(r->p[i].launch->log_path);
		free(r->p[i].launch);
	}
	if (!r->launch)
		return;
	free(r->launch->key_path);
	free(r->launch->pubkey);
	json_object_put(r->launch->libvirt_info);
	free(r->launch);
	r->launch = NULL;
}
