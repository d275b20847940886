// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd's libvirt side on the libuv loop, against libvirt's in-process test
 * driver (test:///default: no daemon, no qemu): lifecycle events through
 * libvirt's event thread into the loop, the thread's clean stop, the
 * console waiter, and a guest's whole life (attach, start, ready, lost,
 * shut down, left as found) with every error naming the guest.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libvirt/virterror.h>

#include "config.h"
#include "testlib.h"
#include "virt_conn.h"
#include "virt_console.h"
#include "virt_guest.h"
#include "virt_json.h"
#include "xalloc.h"

#define TEST_URI "test:///default"
#define GUARD_S 30 /* a hang fails the test instead of the whole run */

static uv_loop_t loop;
static bool guard_fired;
static char dir[256];

static void guard_cb(uv_timer_t *t)
{
	(void)t;
	guard_fired = true;
}

/* Runs the loop until *flag, failing after GUARD_S. */
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

static void setup(void)
{
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	testlib_tmpdir(dir, sizeof(dir), "test-virt-loop");
}

/* Every handle must be closed: uv_loop_close fails otherwise. */
static void teardown(void)
{
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	ck_assert_int_eq(testlib_rmtree(dir), 0);
}

static char *path_in(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* ---- events ---- */

#define MAX_EVENTS 16
static struct {
	char domain[64];
	int event, detail;
} seen[MAX_EVENTS], watched[MAX_EVENTS];
static int nseen, nwatched;
static bool got_stopped;

static void on_lifecycle(struct virt_conn *c, const struct virt_lifecycle *ev)
{
	(void)c;
	if (nseen < MAX_EVENTS) {
		snprintf(seen[nseen].domain, sizeof(seen[0].domain), "%s", ev->domain);
		seen[nseen].event = ev->event;
		seen[nseen++].detail = ev->detail;
	}
	if (ev->event == VIR_DOMAIN_EVENT_STOPPED)
		got_stopped = true;
}

static void on_closed(struct virt_conn *c, int reason, const char *why)
{
	(void)c;
	ck_abort_msg("connection closed: %d %s", reason, why);
}

static const struct virt_conn_ops ops = { .lifecycle = on_lifecycle, .closed = on_closed };

static void on_watch(struct virt_watch *w, const struct virt_lifecycle *ev)
{
	(void)w;
	if (nwatched < MAX_EVENTS) {
		watched[nwatched].event = ev->event;
		watched[nwatched++].detail = ev->detail;
	}
}

static struct virt_conn *open_test(void)
{
	struct virt_conn *c;
	char err[512];
	int r = virt_conn_open(&loop, TEST_URI, &ops, NULL, &c, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	return c;
}

static bool with_nic;

static const char *domain_xml(const char *name, const char *type, bool channel)
{
	static char xml[2048];
	snprintf(xml, sizeof(xml),
		 "<domain type='%s'><name>%s</name><memory unit='MiB'>64</memory>"
		 "<os><type>hvm</type></os><devices>"
		 "<serial type='file'><source path='%s/%s.console.log'/></serial>%s%s"
		 "</devices></domain>",
		 type, name, dir, name,
		 channel ? "<channel type='unix'><source mode='bind' path='/tmp/lockstep-unit.sock'/>"
			   "<target type='virtio' name='org.lockstep.agent.0'/></channel>"
			 : "",
		 /* the test driver makes up an address for it; nothing is sent */
		 with_nic ? "<interface type='network'><source network='default'/>"
			    "<mac address='52:54:00:00:00:01'/></interface>"
			  : "");
	return xml;
}

START_TEST(events_reach_the_loop)
{
	struct virt_conn *c = open_test();
	struct virt_watch w = { .domain = "lockstep-unit-1", .cb = on_watch };
	virDomainPtr dom;

	ck_assert(!virt_conn_keepalive(c)); /* the test driver runs in-process */
	ck_assert_str_eq(virt_conn_uri(c), TEST_URI);
	virt_conn_watch_add(c, &w);
	dom = virDomainCreateXML(virt_conn_ptr(c), domain_xml("lockstep-unit-1", "test", false), 0);
	ck_assert_msg(dom, "%s", virGetLastErrorMessage());
	ck_assert_int_eq(virDomainDestroy(dom), 0);
	virDomainFree(dom);
	run_until(&got_stopped, "stopped event");

	ck_assert_int_eq(nseen, 2);
	ck_assert_str_eq(seen[0].domain, "lockstep-unit-1");
	ck_assert_str_eq(virt_event_name(seen[0].event), "started");
	ck_assert_str_eq(virt_event_detail_name(seen[0].event, seen[0].detail), "booted");
	ck_assert_str_eq(virt_event_name(seen[1].event), "stopped");
	ck_assert_str_eq(virt_event_detail_name(seen[1].event, seen[1].detail), "destroyed");
	ck_assert(virt_event_is_loss(seen[1].event));
	ck_assert_int_eq(nwatched, 2);
	ck_assert_int_eq(watched[1].event, VIR_DOMAIN_EVENT_STOPPED);

	virt_conn_watch_remove(c, &w);
	virt_conn_close(c);
}
END_TEST

/* A watch that removes the next one: the dispatch must not visit it. */
static struct virt_conn *conn_for_removal;
static struct virt_watch watches[3];
static int calls[3];

static void removing_watch(struct virt_watch *w, const struct virt_lifecycle *ev)
{
	(void)ev;
	int i = (int)(w - watches);
	calls[i]++;
	if (calls[i] == 1)
		for (int k = 0; k < 3; k++)
			virt_conn_watch_remove(conn_for_removal, &watches[k]);
}

START_TEST(watch_removal_during_dispatch)
{
	struct virt_conn *c = open_test();
	virDomainPtr dom;

	conn_for_removal = c;
	for (int i = 0; i < 3; i++) {
		watches[i] = (struct virt_watch){ .domain = "lockstep-unit-2", .cb = removing_watch };
		virt_conn_watch_add(c, &watches[i]);
	}
	dom = virDomainCreateXML(virt_conn_ptr(c), domain_xml("lockstep-unit-2", "test", false), 0);
	ck_assert_msg(dom, "%s", virGetLastErrorMessage());
	virDomainDestroy(dom);
	virDomainFree(dom);
	run_until(&got_stopped, "stopped event");
	/* the first visited removed all three: exactly one call in all */
	ck_assert_int_eq(calls[0] + calls[1] + calls[2], 1);
	virt_conn_close(c);
}
END_TEST

START_TEST(open_fails_with_the_uri)
{
	struct virt_conn *c = NULL;
	char err[512];
	int r = virt_conn_open(&loop, "bogus:///nowhere", &ops, NULL, &c, err, sizeof(err));
	ck_assert_int_lt(r, 0);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "libvirt bogus:///nowhere: cannot connect: "), "%s", err);
	/* a failed open leaves nothing behind: another one works */
	c = open_test();
	virt_conn_close(c);
}
END_TEST

/* ---- the console waiter ---- */

static int wait_status = 1;
static bool wait_done;
static char wait_key[VIRT_HOSTKEY_MAX], wait_last[128], wait_failure[256];

static void on_console(struct virt_console_wait *w, int status, void *data)
{
	(void)data;
	const struct virt_console_scan *s = virt_console_result(w);
	wait_status = status;
	snprintf(wait_key, sizeof(wait_key), "%s", s->hostkey);
	snprintf(wait_last, sizeof(wait_last), "%s", s->last);
	snprintf(wait_failure, sizeof(wait_failure), "%s", s->failure);
	wait_done = true;
	virt_console_wait_free(w);
}

static const char *writer_path;
static int writer_step;

/* Writes the boot a piece at a time, as a guest would. */
static void writer_cb(uv_timer_t *t)
{
	static const char *const pieces[] = {
		"[    1.625234] Run /init as init process\r\n",
		("LOCKSTEP-HOSTKEY ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDgxHYKGTKoF7f33hBTmYElc\r\n"
		 "lockstep-init: ready 3.34s after "),
		"kernel start\r\nLOCKSTEP-RE",
		"ADY\r\n",
	};
	append(writer_path, pieces[writer_step++]);
	if (writer_step == 4)
		uv_close((uv_handle_t *)t, NULL);
}

START_TEST(console_ready_as_it_grows)
{
	char *log = path_in("console.log");
	struct virt_console_wait *w;
	uv_timer_t writer;

	/* an earlier boot, skipped by the offset */
	append(log, "LOCKSTEP-HOSTKEY ssh-ed25519 OLDOLDOLDOLDOLDOLDOLDOLD\r\nLOCKSTEP-READY\r\n");
	off_t old = (off_t)strlen("LOCKSTEP-HOSTKEY ssh-ed25519 OLDOLDOLDOLDOLDOLDOLDOLD\r\n"
				  "LOCKSTEP-READY\r\n");
	ck_assert_int_eq(virt_console_wait_start(&loop, log, old, GUARD_S, on_console, NULL, &w), 0);
	ck_assert_str_eq(virt_console_path(w), log);
	writer_path = log;
	uv_timer_init(&loop, &writer);
	uv_timer_start(&writer, writer_cb, 20, 20);
	run_until(&wait_done, "LOCKSTEP-READY");
	ck_assert_int_eq(wait_status, 0);
	ck_assert_int_eq(writer_step, 4);
	ck_assert_str_eq(wait_key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDgxHYKGTKoF7f33hBTmYElc");
	free(log);
}
END_TEST

START_TEST(console_timeout_and_fail)
{
	char *log = path_in("console.log");
	struct virt_console_wait *w;

	append(log, "Booting from ROM...\r\n");
	ck_assert_int_eq(virt_console_wait_start(&loop, log, 0, 0.2, on_console, NULL, &w), 0);
	run_until(&wait_done, "timeout");
	ck_assert_int_eq(wait_status, -ETIMEDOUT);
	ck_assert_str_eq(wait_last, "Booting from ROM...");

	wait_done = false;
	append(log, "LOCKSTEP-FAIL no eth0 after 5 s\r\n");
	ck_assert_int_eq(virt_console_wait_start(&loop, log, 0, GUARD_S, on_console, NULL, &w), 0);
	run_until(&wait_done, "LOCKSTEP-FAIL");
	ck_assert_int_eq(wait_status, -EPROTO);
	ck_assert_str_eq(wait_failure, "no eth0 after 5 s");

	ck_assert_int_eq(virt_console_wait_start(&loop, "/nonexistent/console.log", 0, 1,
						 on_console, NULL, &w),
			 -ENOENT);
	free(log);
}
END_TEST

/* ---- a guest's life ---- */

static struct virt_conn *conn;
static struct virt_settings settings;
static struct virt_accel accel;
static struct virt_guest guest;
static bool g_ready, g_failed, g_stopped;

static void on_ready(struct virt_guest *g)
{
	(void)g;
	g_ready = true;
}

static void on_failed(struct virt_guest *g)
{
	(void)g;
	g_failed = true;
}

static void on_stopped(struct virt_guest *g)
{
	(void)g;
	g_stopped = true;
}

static const struct virt_guest_ops guest_ops = { .ready = on_ready,
						 .failed = on_failed,
						 .stopped = on_stopped };

static void guest_setup(const char *extra_conf, const char *type, bool channel, bool running)
{
	char *text = xasprintf("LIBVIRT_URI=" TEST_URI "\nGUEST_DOMAINS=lockstep-unit-g\n"
			       "GUEST_READY=console\nGUEST_ADDRESSES=127.0.0.1:2222\n"
			       "GUEST_BOOT_TIMEOUT=%d\nGUEST_SHUTDOWN_TIMEOUT=%d\n%s",
			       GUARD_S / 2, GUARD_S / 2, extra_conf);
	struct config *c = config_new();
	struct config_diag d;
	ck_assert_int_eq(config_load_string(c, "h.conf", text, &d), 0);
	ck_assert_msg(virt_settings_load(c, "h.conf", 1, NULL, &settings, &d) == 0, "%s", d.text);
	config_free(c);
	free(text);

	/* qemu creates the console log when the domain starts; the test
	 * driver does not */
	char *log = path_in("lockstep-unit-g.console.log");
	append(log, "");
	free(log);

	conn = open_test();
	virDomainPtr dom = virDomainDefineXML(virt_conn_ptr(conn),
					      domain_xml("lockstep-unit-g", type, channel));
	ck_assert_msg(dom, "%s", virGetLastErrorMessage());
	if (running)
		ck_assert_int_eq(virDomainCreate(dom), 0);
	virDomainFree(dom);
	virt_accel_decide("/nonexistent", VIRT_ACCEL_AUTO, &accel);
	virt_guest_init(&guest, conn, &settings, &accel, 0, "ssh-ed25519 AAAAkey test", &guest_ops,
			NULL);
}

static void guest_teardown(void)
{
	virt_guest_fini(&guest);
	virt_conn_close(conn);
	virt_settings_fini(&settings);
}

static int domain_active(void)
{
	virDomainPtr dom = virDomainLookupByName(virt_conn_ptr(conn), "lockstep-unit-g");
	ck_assert_ptr_nonnull(dom);
	int active = virDomainIsActive(dom);
	virDomainFree(dom);
	return active;
}

/* The test driver writes no console: the test says READY once it boots. */
static void say_ready_cb(uv_timer_t *t)
{
	if (guest.state != VIRT_GUEST_BOOTING)
		return;
	append(guest.console_log, "LOCKSTEP-HOSTKEY ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIunit\r\n"
				  "LOCKSTEP-READY\r\n");
	uv_close((uv_handle_t *)t, NULL);
}

static void boot_guest(void)
{
	static uv_timer_t t;
	uv_timer_init(&loop, &t);
	uv_timer_start(&t, say_ready_cb, 10, 10);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_ready, "ready guest");
}

START_TEST(guest_started_then_shut_down)
{
	guest_setup("", "test", true, false);
	boot_guest();
	ck_assert_str_eq(guest.channel_path, "/tmp/lockstep-unit.sock");
	ck_assert_ptr_nonnull(strstr(guest.console_log, "lockstep-unit-g.console.log"));
	ck_assert_str_eq(guest.hostkey, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIunit");
	ck_assert_str_eq(guest.addr.host, "127.0.0.1");
	ck_assert_int_eq(guest.addr.port, 2222);
	ck_assert_str_eq(guest.domain_type, "test");
	ck_assert(guest.started_by_us && !guest.was_running && !guest.transient);
	ck_assert_int_eq(strlen(guest.uuid), 36);

	struct json_object *j = virt_guest_json(&guest);
	const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
								     JSON_C_TO_STRING_NOSLASHESCAPE);
	ck_assert_msg(strstr(text, "\"domain\":\"lockstep-unit-g\",\"origin\":\"existing\","
				   "\"state\":\"ready\"") &&
			      strstr(text, "\"address\":\"127.0.0.1:2222\"") &&
			      strstr(text, "\"started_by_us\":true") && !strstr(text, "failure"),
		      "%s", text);
	json_object_put(j);
	j = virt_accel_json(&accel);
	text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	ck_assert_msg(strstr(text, "\"requested\":\"auto\",\"chosen\":\"tcg\",\"domain_type\":"
				   "\"qemu\",\"reason\":\"tcg: /nonexistent/dev/kvm cannot be "
				   "opened"),
		      "%s", text);
	json_object_put(j);

	/* it was off: it is shut off again */
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	ck_assert_str_eq(guest.error, "");
	ck_assert_int_eq(domain_active(), 0);
	ck_assert(!g_failed);
	guest_teardown();
}
END_TEST

START_TEST(guest_lost_mid_run_is_named)
{
	guest_setup("", "test", true, false);
	boot_guest();
	virDomainPtr dom = virDomainLookupByName(virt_conn_ptr(conn), "lockstep-unit-g");
	ck_assert_int_eq(virDomainDestroy(dom), 0);
	virDomainFree(dom);
	run_until(&g_failed, "failed guest");
	ck_assert(guest.lost);
	ck_assert_int_eq(guest.state, VIRT_GUEST_FAILED);
	ck_assert_msg(strstr(guest.error, "guest lockstep-unit-g: its domain went away mid-run: "
					  "libvirt says stopped (destroyed); its console log is "),
		      "%s", guest.error);
	ck_assert_str_eq(guest.failure, guest.error);
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	guest_teardown();
}
END_TEST

START_TEST(guest_running_is_left_running)
{
	char *log = path_in("lockstep-unit-g.console.log");
	guest_setup("", "test", true, true);
	append(log, "LOCKSTEP-HOSTKEY ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIold\r\n"
		    "LOCKSTEP-READY\r\n");
	free(log);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_ready, "ready guest");
	ck_assert(guest.was_running && !guest.started_by_us);
	ck_assert_str_eq(guest.hostkey, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIold");
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	ck_assert_int_eq(domain_active(), 1);
	guest_teardown();
}
END_TEST

START_TEST(guest_boot_timeout_names_the_log)
{
	guest_setup("GUEST_BOOT_TIMEOUT=0.2\n", "test", true, false);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_failed, "failed guest");
	ck_assert_msg(strstr(guest.error, "guest lockstep-unit-g: not ready within "
					  "GUEST_BOOT_TIMEOUT=0.2s: no LOCKSTEP-READY line in its "
					  "console log ") &&
			      strstr(guest.error, "lockstep-unit-g.console.log"),
		      "%s", guest.error);
	/* it was started for the run: stop shuts it off again */
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	ck_assert_int_eq(domain_active(), 0);
	guest_teardown();
}
END_TEST

START_TEST(guest_errors_name_guest_and_cause)
{
	/* no channel */
	guest_setup("", "test", false, false);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_failed, "failed guest");
	ck_assert_msg(strstr(guest.error, "guest lockstep-unit-g: its live XML has no channel "
					  "named org.lockstep.agent.0"),
		      "%s", guest.error);
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	guest_teardown();
}
END_TEST

START_TEST(guest_kvm_domain_refused_on_tcg)
{
	guest_setup("", "kvm", true, false);
	ck_assert(!accel.kvm);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_failed, "failed guest");
	ck_assert_msg(strstr(guest.error, "guest lockstep-unit-g: it is a KVM domain (type='kvm') "
					  "but hostd decided on tcg: "),
		      "%s", guest.error);
	ck_assert_int_eq(domain_active(), 0);
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	guest_teardown();
}
END_TEST

START_TEST(guest_missing_domain)
{
	guest_setup("", "test", true, false);
	virt_guest_fini(&guest);
	const char *other[] = { "lockstep-unit-none" };
	char **saved = settings.names;
	settings.names = (char **)other;
	virt_guest_init(&guest, conn, &settings, &accel, 0, NULL, &guest_ops, NULL);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_failed, "failed guest");
	ck_assert_msg(strstr(guest.error, "guest lockstep-unit-none: cannot find its domain "
					  "(GUEST_DOMAINS): Domain not found"),
		      "%s", guest.error);
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	settings.names = saved;
	guest_teardown();
}
END_TEST

/* No GUEST_ADDRESSES, no console: the address comes from libvirt. */
START_TEST(guest_address_from_libvirt)
{
	with_nic = true;
	guest_setup("GUEST_READY=none\nGUEST_ADDRESSES=\nGUEST_SSH_PORT=2022\n", "test", true, false);
	ck_assert_ptr_null(settings.addrs); /* empty means unset */
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_ready, "ready guest");
	ck_assert_msg(strncmp(guest.addr.host, "192.168.122.", 12) == 0, "%s", guest.addr.host);
	ck_assert_int_eq(guest.addr.port, 2022);
	ck_assert_str_eq(guest.hostkey, "");
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	guest_teardown();
}
END_TEST

/* The whole template path up to virDomainCreateXML, whose error (the test
 * driver refuses AUTODESTROY) must come back naming the guest. */
START_TEST(template_guest_error_names_guest_and_libvirt)
{
	char *tmpl = path_in("t.xml"), *text;
	struct config *c = config_new();
	struct config_diag d;

	append(tmpl, "<domain type='qemu'><name>@NAME@</name><memory unit='MiB'>@MEMORY_MIB@"
		     "</memory><os><type>hvm</type></os><devices><channel type='unix'>"
		     "<source mode='bind' path='@CHANNEL_PATH@'/><target type='virtio' "
		     "name='org.lockstep.agent.0'/></channel></devices></domain>\n");
	text = xasprintf("LIBVIRT_URI=" TEST_URI "\nGUEST_TEMPLATE=%s\nGUEST_RUNTIME_DIR=%s/run\n",
			 tmpl, dir);
	ck_assert_int_eq(config_load_string(c, "h.conf", text, &d), 0);
	ck_assert_msg(virt_settings_load(c, "h.conf", 1, NULL, &settings, &d) == 0, "%s", d.text);
	config_free(c);
	conn = open_test();
	virt_accel_decide("/nonexistent", VIRT_ACCEL_AUTO, &accel);
	virt_guest_init(&guest, conn, &settings, &accel, 0, NULL, &guest_ops, NULL);
	ck_assert_int_eq(virt_guest_start(&guest), 0);
	run_until(&g_failed, "failed guest");
	ck_assert_msg(strstr(guest.error, "guest lockstep-guest1: cannot create its domain from the "
					  "template: unsupported flags"),
		      "%s", guest.error);
	ck_assert(!guest.transient);
	virt_guest_stop(&guest);
	run_until(&g_stopped, "stopped guest");
	guest_teardown();
	free(text);
	free(tmpl);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("virt-loop");
	TCase *t = tcase_create("conn");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, events_reach_the_loop);
	tcase_add_test(t, watch_removal_during_dispatch);
	tcase_add_test(t, open_fails_with_the_uri);
	suite_add_tcase(s, t);
	t = tcase_create("console");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, console_ready_as_it_grows);
	tcase_add_test(t, console_timeout_and_fail);
	suite_add_tcase(s, t);
	t = tcase_create("guest");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, guest_started_then_shut_down);
	tcase_add_test(t, guest_lost_mid_run_is_named);
	tcase_add_test(t, guest_running_is_left_running);
	tcase_add_test(t, guest_boot_timeout_names_the_log);
	tcase_add_test(t, guest_errors_name_guest_and_cause);
	tcase_add_test(t, guest_kvm_domain_refused_on_tcg);
	tcase_add_test(t, guest_missing_domain);
	tcase_add_test(t, guest_address_from_libvirt);
	tcase_add_test(t, template_guest_error_names_guest_and_libvirt);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return testlib_main(suite());
}
