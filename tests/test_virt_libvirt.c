// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd's libvirt side against the real libvirtd (qemu:///system) with the
 * demo guest (vm-templates/): TCG guests, lifecycle events through the
 * libuv loop, channel sockets, the console's LOCKSTEP-READY, the loopback
 * SSH forward, a guest lost mid-run, an existing domain left as found.
 *
 * Needs root; starts the daemons with tools/start-libvirt.  Skipped (77)
 * without root or without a built demo guest.  Domains are named
 * lockstep-test-PID-*; leftovers of any lockstep-test- run are destroyed
 * before and after, and template guests are AUTODESTROY, so a test that
 * dies takes its guests with it.  Only loopback is ever contacted.  The
 * figures it prints are for reading, never asserted.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <pwd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "config.h"
#include "fileio.h"
#include "testlib.h"
#include "virt_conn.h"
#include "virt_guest.h"
#include "virt_template.h"
#include "virt_xml.h"
#include "xalloc.h"

#define URI "qemu:///system"
#define PREFIX "lockstep-test-"
#define GUARD_S 180
#define AUTHKEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Qta2V5LW5vdC11c2VkLWZvci1sb2dpbg test"

static const char *demo_dir, *src_root;
static char tag[32];	 /* "lockstep-test-PID" */
static char run_dir[64]; /* /run/lockstep-test-PID */
static int port_base;
static uv_loop_t loop;
static bool guard_fired;

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void guard_cb(uv_timer_t *t)
{
	(void)t;
	guard_fired = true;
}

static void run_until(const bool *flag, const char *what)
{
	uv_timer_t guard;
	uv_timer_init(&loop, &guard);
	uv_timer_start(&guard, guard_cb, GUARD_S * 1000, 0);
	while (!*flag && !guard_fired)
		uv_run(&loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&guard, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_msg(*flag, "no %s within %d s", what, GUARD_S);
}

/* Whether a lockstep-test- domain belongs to a run that is over: ours,
 * or one whose process (lockstep-test-PID-...) no longer exists.  Runs of
 * other people going on at the same time keep their guests. */
static bool leftover(const char *name)
{
	char *end;
	if (strncmp(name, PREFIX, strlen(PREFIX)) != 0)
		return false;
	long pid = strtol(name + strlen(PREFIX), &end, 10);
	if (end == name + strlen(PREFIX) || *end != '-' || pid <= 0)
		return true; /* not named by us: an old format */
	return pid == (long)getppid() || pid == (long)getpid() || kill((pid_t)pid, 0) < 0;
}

/* Destroys and undefines the domains of lockstep-test- runs that are over. */
static void cleanup_leftovers(void)
{
	virConnectPtr c = virConnectOpen(URI);
	virDomainPtr *doms = NULL;
	int n;
	if (!c)
		return;
	n = virConnectListAllDomains(c, &doms, 0);
	for (int i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);
		if (name && leftover(name)) {
			if (virDomainIsActive(doms[i]) == 1)
				virDomainDestroy(doms[i]);
			if (virDomainIsPersistent(doms[i]) == 1)
				virDomainUndefine(doms[i]);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	virConnectClose(c);
}

static void setup(void)
{
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(fileio_mkdir_p(run_dir, 0755), 0);
}

static void teardown(void)
{
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}

static int unix_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return r < 0 ? -errno : 0;
}

/* The first line the SSH server at 127.0.0.1:port sends. */
static void ssh_banner(int port, char *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct pollfd p;
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect to port %d: %s",
		      port, strerror(errno));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got < len - 1 && poll(&p, 1, 30000) == 1) {
		ssize_t n = read(fd, buf + got, 1);
		if (n <= 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	close(fd);
}

/* ---- events straight from libvirt ---- */

static struct {
	int event, detail;
	int64_t received_ns, on_loop_ns;
} ev_log[16];
static int nev;
static bool saw_started, saw_stopped;

static void raw_watch(struct virt_watch *w, const struct virt_lifecycle *ev)
{
	(void)w;
	if (nev < 16) {
		ev_log[nev].event = ev->event;
		ev_log[nev].detail = ev->detail;
		ev_log[nev].received_ns = ev->received_ns;
		ev_log[nev++].on_loop_ns = clock_mono_ns();
	}
	saw_started |= ev->event == VIR_DOMAIN_EVENT_STARTED;
	saw_stopped |= ev->event == VIR_DOMAIN_EVENT_STOPPED;
}

static void closed_cb(struct virt_conn *c, int reason, const char *why)
{
	(void)c;
	ck_abort_msg("libvirt connection closed (%d): %s", reason, why);
}

static const struct virt_conn_ops conn_ops = { .closed = closed_cb };

static struct virt_conn *open_conn(void)
{
	struct virt_conn *c;
	char err[512];
	ck_assert_msg(virt_conn_open(&loop, URI, &conn_ops, NULL, &c, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert(virt_conn_keepalive(c));
	return c;
}

static bool destroy_done;
static int destroy_result;
static int64_t destroy_end_ns;
static char destroy_error[512];

static void destroy_work(uv_work_t *w)
{
	destroy_result = virDomainDestroy(w->data);
	destroy_end_ns = clock_mono_ns();
	if (destroy_result < 0)
		snprintf(destroy_error, sizeof(destroy_error), "%s", virGetLastErrorMessage());
}

static void destroy_after(uv_work_t *w, int status)
{
	(void)w;
	(void)status;
	destroy_done = true;
}

static char *demo_template(void)
{
	char *path = xasprintf("%s/vm-templates/demo-guest.xml.in", src_root), *text;
	size_t len;
	ck_assert_int_eq(fileio_read_all(path, 1 << 20, &text, &len), 0);
	free(path);
	return text;
}

START_TEST(raw_lifecycle_events_and_channel)
{
	char *name = xasprintf("%s-raw", tag), *kernel = xasprintf("%s/vmlinux", demo_dir);
	char *initrd = xasprintf("%s/initrd.img", demo_dir), *log = xasprintf("%s/raw.log", run_dir);
	char *sock = xasprintf("%s/raw.sock", run_dir), *key = virt_base64(AUTHKEY, strlen(AUTHKEY));
	char port[16], err[512], *tmpl = demo_template(), *xml, *live, *chan;
	snprintf(port, sizeof(port), "%d", port_base);
	const struct virt_template_var v[] = {
		{ "NAME", name },	 { "MEMORY_MIB", "256" }, { "VCPUS", "1" },
		{ "KERNEL", kernel },	 { "INITRD", initrd },	  { "AUTHKEY", key },
		{ "CMDLINE_EXTRA", "" }, { "CONSOLE_LOG", log },  { "CHANNEL_PATH", sock },
		{ "SSH_PORT", port },
	};
	ck_assert_msg(virt_template_fill(tmpl, "demo-guest.xml.in", v, 10, NULL, &xml, err,
					 sizeof(err)) == 0,
		      "%s", err);

	struct virt_conn *c = open_conn();
	struct virt_watch w = { .domain = name, .cb = raw_watch };
	virt_conn_watch_add(c, &w);

	int64_t t0 = clock_mono_ns();
	virDomainPtr dom = virDomainCreateXML(virt_conn_ptr(c), xml, VIR_DOMAIN_START_AUTODESTROY);
	int64_t t1 = clock_mono_ns();
	ck_assert_msg(dom, "virDomainCreateXML: %s", virGetLastErrorMessage());
	run_until(&saw_started, "started event");
	int st = 0;
	while (ev_log[st].event != VIR_DOMAIN_EVENT_STARTED)
		st++; /* qemu starts paused: a RESUMED may come first */
	ck_assert_int_eq(ev_log[st].detail, VIR_DOMAIN_EVENT_STARTED_BOOTED);
	printf("virDomainCreateXML took %.1f ms; STARTED reached libvirt's thread %.1f ms after "
	       "the call began\n",
	       ms(t1 - t0), ms(ev_log[st].received_ns - t0));

	live = virDomainGetXMLDesc(dom, 0);
	ck_assert_ptr_nonnull(live);
	ck_assert_int_eq(virt_xml_channel_path(live, "org.lockstep.agent.0", &chan), 0);
	ck_assert_str_eq(chan, sock);
	ck_assert_int_eq(unix_connect(chan), 0);

	/* destroyed from libuv's thread pool, as hostd does, so that the loop
	 * is free to take the events while the call runs */
	int before = nev;
	uv_work_t work = { .data = dom };
	destroy_done = false;
	t0 = clock_mono_ns();
	ck_assert_int_eq(uv_queue_work(&loop, &work, destroy_work, destroy_after), 0);
	run_until(&destroy_done, "virDomainDestroy");
	ck_assert_msg(destroy_result == 0, "%s", destroy_error);
	t1 = destroy_end_ns;
	run_until(&saw_stopped, "stopped event");
	int sp = nev - 1;
	ck_assert_int_eq(ev_log[sp].event, VIR_DOMAIN_EVENT_STOPPED);
	ck_assert_int_eq(ev_log[sp].detail, VIR_DOMAIN_EVENT_STOPPED_DESTROYED);
	for (int i = before; i < nev; i++)
		printf("after virDomainDestroy: %s (%s) reached libvirt's thread at +%.1f ms, the "
		       "loop %.0f us later\n",
		       virt_event_name(ev_log[i].event),
		       virt_event_detail_name(ev_log[i].event, ev_log[i].detail),
		       ms(ev_log[i].received_ns - t0),
		       (double)(ev_log[i].on_loop_ns - ev_log[i].received_ns) / 1e3);
	printf("virDomainDestroy itself took %.1f ms\n", ms(t1 - t0));

	virDomainFree(dom);
	virt_conn_watch_remove(c, &w);
	virt_conn_close(c);
	free(live);
	free(chan);
	free(xml);
	free(tmpl);
	free(name);
	free(kernel);
	free(initrd);
	free(log);
	free(sock);
	free(key);
}
END_TEST

/* ---- guests through virt_guest ---- */

#define NGUESTS 2
static struct virt_guest guests[NGUESTS];
static int nready, nfailed, nstopped;
static bool all_ready, one_failed, all_stopped;
static size_t count = NGUESTS;

static void g_ready(struct virt_guest *g)
{
	(void)g;
	all_ready = ++nready == (int)count;
}

static void g_failed(struct virt_guest *g)
{
	nfailed++;
	one_failed = true;
	printf("failed: %s\n", g->error);
}

static void g_stopped(struct virt_guest *g)
{
	(void)g;
	all_stopped = ++nstopped == (int)count;
}

static const struct virt_guest_ops gops = { .ready = g_ready, .failed = g_failed, .stopped = g_stopped };

static void load(struct virt_settings *s, unsigned n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void load(struct virt_settings *s, unsigned n, const char *fmt, ...)
{
	char *text;
	va_list ap;
	struct config *c = config_new();
	struct config_diag d;
	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&text, fmt, ap), 0);
	va_end(ap);
	ck_assert_int_eq(config_load_string(c, "h.conf", text, &d), 0);
	char *tmpl = xasprintf("%s/vm-templates/demo-guest.xml.in", src_root);
	ck_assert_msg(virt_settings_load(c, "h.conf", n, tmpl, s, &d) == 0, "%s:%d: %s", d.file,
		      d.line, d.text);
	free(tmpl);
	free(text);
	config_free(c);
}

static bool domain_exists(struct virt_conn *c, const char *name, int *active)
{
	virDomainPtr dom = virDomainLookupByName(virt_conn_ptr(c), name);
	if (!dom)
		return false;
	*active = virDomainIsActive(dom);
	virDomainFree(dom);
	return true;
}

START_TEST(template_guests_ready_lost_destroyed)
{
	struct virt_settings s;
	struct virt_accel a;
	char banner[128], *live;
	int active;

	load(&s, NGUESTS,
	     "LIBVIRT_URI=" URI "\nGUEST_NAME_PREFIX=%s-g\nGUEST_RUNTIME_DIR=%s\n"
	     "GUEST_SSH_PORT_BASE=%d\nGUEST_KERNEL=%s/vmlinux\nGUEST_INITRD=%s/initrd.img\n"
	     "GUEST_VCPU_PINNING=\"0 1\"\nGUEST_BOOT_TIMEOUT=%d\n",
	     tag, run_dir, port_base, demo_dir, demo_dir, GUARD_S - 10);
	virt_accel_decide(NULL, s.accel, &a);
	printf("accelerator: %s\n", a.reason);

	struct virt_conn *c = open_conn();
	for (size_t i = 0; i < NGUESTS; i++) {
		virt_guest_init(&guests[i], c, &s, &a, i, AUTHKEY, &gops, NULL);
		ck_assert_int_eq(virt_guest_start(&guests[i]), 0);
	}
	run_until(&all_ready, "ready guests");
	ck_assert_int_eq(nfailed, 0);
	for (size_t i = 0; i < NGUESTS; i++) {
		struct virt_guest *g = &guests[i];
		printf("%s: created in %.2f s, ready %.2f s after; %s:%d, channel %s\n", g->name,
		       g->create_s, g->boot_s, g->addr.host, g->addr.port, g->channel_path);
		ck_assert(g->transient);
		ck_assert_str_eq(g->domain_type, a.domain_type);
		ck_assert_msg(strncmp(g->hostkey, "ssh-ed25519 AAAA", 16) == 0, "%s", g->hostkey);
		ck_assert_str_eq(g->addr.host, "127.0.0.1");
		ck_assert_int_eq(g->addr.port, port_base + (int)i + 1);
		int fd = virt_guest_channel_connect(g);
		ck_assert_msg(fd >= 0, "%s: %s", g->channel_path, strerror(-fd));
		close(fd);
		ssh_banner(g->addr.port, banner, sizeof(banner));
		ck_assert_msg(strncmp(banner, "SSH-2.0-dropbear", 16) == 0, "%s", banner);
		/* the pinning reached the domain */
		live = virDomainGetXMLDesc(g->dom, 0);
		char want[64];
		snprintf(want, sizeof(want), "<vcpupin vcpu='0' cpuset='%zu'/>", i);
		ck_assert_msg(strstr(live, want), "no %s in the live XML", want);
		free(live);
	}

	/* guest 2 dies under us: named at once */
	int64_t t0 = clock_mono_ns();
	ck_assert_int_eq(virDomainDestroy(guests[1].dom), 0);
	run_until(&one_failed, "lost guest");
	printf("loss of %s reported on the loop %.1f ms after virDomainDestroy began\n",
	       guests[1].name, ms(clock_mono_ns() - t0));
	ck_assert(guests[1].lost);
	/* qemu's SIGTERM shows as SHUTDOWN (after host request) before STOPPED */
	ck_assert_msg(strstr(guests[1].error, "guest lockstep-test-") &&
			      strstr(guests[1].error, "-g2: its domain went away mid-run: libvirt says "),
		      "%s", guests[1].error);
	ck_assert_int_eq(guests[0].state, VIRT_GUEST_READY);

	for (size_t i = 0; i < NGUESTS; i++)
		virt_guest_stop(&guests[i]);
	run_until(&all_stopped, "stopped guests");
	for (size_t i = 0; i < NGUESTS; i++) {
		ck_assert_msg(guests[i].error[0] == '\0', "%s", guests[i].error);
		ck_assert(!domain_exists(c, guests[i].name, &active));
		virt_guest_fini(&guests[i]);
	}
	virt_conn_close(c);
	virt_settings_fini(&s);
}
END_TEST

/* An existing domain: started because it was off and shut off again; then
 * found running and left running. */
START_TEST(existing_domain_left_as_found)
{
	char *name = xasprintf("%s-e", tag), *kernel = xasprintf("%s/vmlinux", demo_dir);
	char *initrd = xasprintf("%s/initrd.img", demo_dir), *log = xasprintf("%s/e.log", run_dir);
	char *sock = xasprintf("%s/e.sock", run_dir), *key = virt_base64(AUTHKEY, strlen(AUTHKEY));
	char port[16], err[512], *tmpl = demo_template(), *xml;
	struct virt_settings s;
	struct virt_accel a;
	int active;

	snprintf(port, sizeof(port), "%d", port_base + 10);
	const struct virt_template_var v[] = {
		{ "NAME", name },	 { "MEMORY_MIB", "256" }, { "VCPUS", "1" },
		{ "KERNEL", kernel },	 { "INITRD", initrd },	  { "AUTHKEY", key },
		{ "CMDLINE_EXTRA", "" }, { "CONSOLE_LOG", log },  { "CHANNEL_PATH", sock },
		{ "SSH_PORT", port },
	};
	ck_assert_msg(virt_template_fill(tmpl, "demo-guest.xml.in", v, 10, NULL, &xml, err,
					 sizeof(err)) == 0,
		      "%s", err);
	count = 1;
	load(&s, 1,
	     "LIBVIRT_URI=" URI "\nGUEST_DOMAINS=%s\nGUEST_READY=console\n"
	     "GUEST_ADDRESSES=127.0.0.1:%s\nGUEST_SHUTDOWN_TIMEOUT=3\nGUEST_BOOT_TIMEOUT=%d\n",
	     name, port, GUARD_S - 10);
	virt_accel_decide(NULL, s.accel, &a);
	struct virt_conn *c = open_conn();
	virDomainPtr dom = virDomainDefineXML(virt_conn_ptr(c), xml);
	ck_assert_msg(dom, "%s", virGetLastErrorMessage());

	virt_guest_init(&guests[0], c, &s, &a, 0, NULL, &gops, NULL);
	ck_assert_int_eq(virt_guest_start(&guests[0]), 0);
	run_until(&all_ready, "ready guest");
	ck_assert(guests[0].started_by_us && !guests[0].was_running && !guests[0].transient);
	ck_assert_str_eq(guests[0].channel_path, sock);
	ck_assert_str_eq(guests[0].console_log, log);
	ck_assert_int_eq(guests[0].addr.port, port_base + 10);
	printf("%s: started in %.2f s, ready %.2f s after\n", name, guests[0].create_s,
	       guests[0].boot_s);
	/* the demo guest ignores the ACPI button: destroyed after 3 s */
	int64_t t0 = clock_mono_ns();
	virt_guest_stop(&guests[0]);
	run_until(&all_stopped, "stopped guest");
	printf("%s: shut off %.2f s after virt_guest_stop\n", name, ms(clock_mono_ns() - t0) / 1000);
	ck_assert_msg(guests[0].error[0] == '\0', "%s", guests[0].error);
	ck_assert(domain_exists(c, name, &active));
	ck_assert_int_eq(active, 0);
	virt_guest_fini(&guests[0]);

	/* now it runs before hostd comes: left running */
	ck_assert_int_eq(virDomainCreate(dom), 0);
	all_ready = all_stopped = false;
	nready = nstopped = 0;
	virt_guest_init(&guests[0], c, &s, &a, 0, NULL, &gops, NULL);
	ck_assert_int_eq(virt_guest_start(&guests[0]), 0);
	run_until(&all_ready, "ready guest");
	ck_assert(guests[0].was_running && !guests[0].started_by_us);
	ck_assert_msg(strncmp(guests[0].hostkey, "ssh-ed25519 AAAA", 16) == 0, "%s", guests[0].hostkey);
	virt_guest_stop(&guests[0]);
	run_until(&all_stopped, "stopped guest");
	ck_assert(domain_exists(c, name, &active));
	ck_assert_int_eq(active, 1);
	virt_guest_fini(&guests[0]);

	virDomainDestroy(dom);
	virDomainUndefine(dom);
	virDomainFree(dom);
	virt_conn_close(c);
	virt_settings_fini(&s);
	free(xml);
	free(tmpl);
	free(name);
	free(kernel);
	free(initrd);
	free(log);
	free(sock);
	free(key);
}
END_TEST

/* ---- the connection's close callback and keepalive ----
 * A session daemon of our own: the test becomes nobody, with a HOME and a
 * runtime folder of its own, so the libvirtd it spawns serves this test
 * only and may be stopped and killed (by its pid) without touching anyone
 * else's libvirt. */

static bool conn_closed;
static int close_reason = -100;
static char close_why[256];
static char sess_dir[256];

static void session_closed(struct virt_conn *c, int reason, const char *why)
{
	(void)c;
	close_reason = reason;
	snprintf(close_why, sizeof(close_why), "%s", why);
	conn_closed = true;
}

static const struct virt_conn_ops session_ops = { .closed = session_closed };

static void session_setup(void)
{
	struct passwd *pw = getpwnam("nobody");
	char *run;
	ck_assert_ptr_nonnull(pw);
	testlib_tmpdir(sess_dir, sizeof(sess_dir), "test-virt-session");
	ck_assert_int_eq(chown(sess_dir, pw->pw_uid, pw->pw_gid), 0);
	ck_assert_int_eq(setgid(pw->pw_gid), 0);
	ck_assert_int_eq(setuid(pw->pw_uid), 0);
	run = xasprintf("%s/run", sess_dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	setenv("HOME", sess_dir, 1);
	setenv("XDG_RUNTIME_DIR", run, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_CACHE_HOME");
	free(run);
	ck_assert_int_eq(uv_loop_init(&loop), 0);
}

static void session_teardown(void)
{
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	/* as nobody the folder itself cannot leave the suite's (root's, not
	 * writable to others): it goes with that, at testlib_main's end */
}

static pid_t session_daemon(void)
{
	char *path = xasprintf("%s/run/libvirt/libvirtd.pid", sess_dir), *text;
	size_t len;
	ck_assert_int_eq(fileio_read_all(path, 64, &text, &len), 0);
	pid_t pid = (pid_t)atoi(text);
	ck_assert_int_gt(pid, 1);
	free(text);
	free(path);
	return pid;
}

static struct virt_conn *open_session(void)
{
	struct virt_conn *c;
	char err[512];
	ck_assert_msg(virt_conn_open(&loop, "qemu:///session", &session_ops, NULL, &c, err,
				     sizeof(err)) == 0,
		      "%s", err);
	ck_assert(virt_conn_keepalive(c));
	return c;
}

START_TEST(close_callback_when_libvirtd_exits)
{
	struct virt_conn *c = open_session();
	pid_t daemon = session_daemon();
	int64_t t0 = clock_mono_ns();
	ck_assert_int_eq(kill(daemon, SIGTERM), 0);
	run_until(&conn_closed, "close callback");
	printf("libvirtd (session) stopped: the loop heard of it %.1f ms after SIGTERM: %s\n",
	       ms(clock_mono_ns() - t0), close_why);
	ck_assert_int_eq(close_reason, VIR_CONNECT_CLOSE_REASON_EOF);
	ck_assert_str_eq(close_why, "libvirtd closed the connection (end of file: did it stop?)");
	ck_assert(virt_conn_lost(c));
	virt_conn_close(c);
}
END_TEST

START_TEST(keepalive_notices_a_hung_libvirtd)
{
	struct virt_conn *c = open_session();
	pid_t daemon = session_daemon();
	int64_t t0 = clock_mono_ns();
	ck_assert_int_eq(kill(daemon, SIGSTOP), 0);
	run_until(&conn_closed, "keepalive timeout");
	printf("libvirtd (session) hung: keepalive closed the connection %.1f s after SIGSTOP\n",
	       ms(clock_mono_ns() - t0) / 1000);
	ck_assert_int_eq(close_reason, VIR_CONNECT_CLOSE_REASON_KEEPALIVE);
	virt_conn_close(c);
	kill(daemon, SIGKILL);
}
END_TEST

static void in_child(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

int main(void)
{
	static char dd[256];
	char *cmd;
	int failed;

	/* the figures must not be lost or doubled across forks */
	setvbuf(stdout, NULL, _IONBF, 0);
	if (geteuid() != 0) {
		printf("skipped: qemu:///system needs root\n");
		return 77;
	}
	src_root = getenv("LOCKSTEP_SOURCE_ROOT");
	if (!src_root)
		src_root = "..";
	snprintf(dd, sizeof(dd), "%s",
		 getenv("LOCKSTEP_DEMO_GUEST") ? getenv("LOCKSTEP_DEMO_GUEST")
					       : "/var/lib/lockstep/demo-guest");
	demo_dir = dd;
	char *k = xasprintf("%s/vmlinux", demo_dir), *i = xasprintf("%s/initrd.img", demo_dir);
	if (access(k, R_OK) < 0 || access(i, R_OK) < 0) {
		printf("skipped: no demo guest in %s (build it with vm-templates/build-demo-guest)\n",
		       demo_dir);
		return 77;
	}
	free(k);
	free(i);
	cmd = xasprintf("%s/tools/start-libvirt", src_root);
	if (access(cmd, X_OK) == 0 ? system(cmd) != 0 : system("virtlogd -d; libvirtd -d") != 0) {
		printf("cannot start libvirt (%s)\n", cmd);
		return 1;
	}
	free(cmd);
	snprintf(tag, sizeof(tag), PREFIX "%d", (int)getpid());
	snprintf(run_dir, sizeof(run_dir), "/run/%s", tag);
	/* a port range of its own: runs at the same time do not collide */
	port_base = 23000 + (int)(getpid() % 200) * 50;
	in_child(cleanup_leftovers);

	Suite *s = suite_create("virt-libvirt");
	TCase *t = tcase_create("qemu");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 2 * GUARD_S + 60);
	tcase_add_test(t, raw_lifecycle_events_and_channel);
	tcase_add_test(t, template_guests_ready_lost_destroyed);
	tcase_add_test(t, existing_domain_left_as_found);
	suite_add_tcase(s, t);
	t = tcase_create("session");
	tcase_add_checked_fixture(t, session_setup, session_teardown);
	tcase_set_timeout(t, GUARD_S + 60);
	tcase_add_test(t, close_callback_when_libvirtd_exits);
	tcase_add_test(t, keepalive_notices_a_hung_libvirtd);
	suite_add_tcase(s, t);
	/* each case's figures and name, unless CK_VERBOSITY says otherwise */
	setenv("CK_VERBOSITY", "verbose", 0);
	failed = testlib_main(s) != EXIT_SUCCESS;

	in_child(cleanup_leftovers);
	if (testlib_rmtree(run_dir) < 0)
		failed = 1;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
