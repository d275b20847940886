// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pure parts of hostd's libvirt side: template filling, the XML reader
 * (on live XML captured from real domains, tests/data/virt-live-*.xml), the
 * accelerator decision on a fake /dev/kvm and /proc/cpuinfo, addresses,
 * vCPU pinning, the console scanner and the settings.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testlib.h"
#include "fileio.h"
#include "virt_accel.h"
#include "virt_addr.h"
#include "virt_console.h"
#include "virt_settings.h"
#include "virt_template.h"
#include "virt_xml.h"
#include "xalloc.h"

static char *data_file(const char *name)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	char *path = xasprintf("%s/tests/data/%s", src ? src : "..", name), *text;
	size_t len;
	int r = fileio_read_all(path, 1 << 20, &text, &len);
	ck_assert_msg(r == 0, "cannot read %s: %s", path, strerror(-r));
	free(path);
	return text;
}

static void write_file(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_file(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path, "w");
	ck_assert_msg(f, "cannot write %s", path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* ---- template ---- */

START_TEST(template_fills_and_escapes)
{
	const struct virt_template_var v[] = {
		{ "NAME", "g1" },
		{ "CMDLINE_EXTRA", "a<b & c\"d'e>f" },
		{ "UNUSED", "x" },
	};
	bool used[3];
	char err[256], *out;
	int r = virt_template_fill("<domain><name>@NAME@</name>"
				   "<cmdline>@CMDLINE_EXTRA@ @NAME@</cmdline></domain>",
				   "t.xml", v, 3, used, &out, err, sizeof(err));
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(out, "<domain><name>g1</name><cmdline>a&lt;b &amp; c&quot;d&apos;e&gt;f "
			      "g1</cmdline></domain>");
	ck_assert(used[0] && used[1] && !used[2]);
	free(out);
}
END_TEST

START_TEST(template_unknown_placeholder_is_named)
{
	const struct virt_template_var v[] = { { "NAME", "g1" } };
	char err[256], *out = (char *)1;
	int r = virt_template_fill("<domain>\n<name>@NAME@</name>\n<memory>@MEMORY_MIB@</memory>\n",
				   "demo.xml.in", v, 1, NULL, &out, err, sizeof(err));
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(err, "demo.xml.in:3: unknown placeholder @MEMORY_MIB@");
}
END_TEST

START_TEST(template_leaves_comments_and_other_ats)
{
	const struct virt_template_var v[] = { { "NAME", "g1" } };
	char err[256], *out;
	const char *t = "<!-- the @PLACEHOLDERS@ are documented --><a b='x@y.z' c='@lower@' "
			"d='@ NAME@' e='@NAME'>@NAME@@NAME@</a>";
	int r = virt_template_fill(t, "t", v, 1, NULL, &out, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_str_eq(out, "<!-- the @PLACEHOLDERS@ are documented --><a b='x@y.z' c='@lower@' "
			      "d='@ NAME@' e='@NAME'>g1g1</a>");
	free(out);
}
END_TEST

START_TEST(template_rejects_what_xml_cannot_carry)
{
	const struct virt_template_var v[] = { { "NAME", "a\001b" } };
	char err[256], *out;
	ck_assert_int_eq(virt_template_fill("<a>@NAME@</a>", "t", v, 1, NULL, &out, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "@NAME@") && strstr(err, "0x01"), "%s", err);
	ck_assert_int_eq(virt_template_fill("<a/><!-- open", "t", v, 0, NULL, &out, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "t:1: comment not closed"), "%s", err);
}
END_TEST

START_TEST(base64_vectors)
{
	static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const out[] = { "",	       "Zg==",	   "Zm8=",    "Zm9v",
					   "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	for (int i = 0; i < 7; i++) {
		char *b = virt_base64(in[i], strlen(in[i]));
		ck_assert_str_eq(b, out[i]);
		free(b);
	}
}
END_TEST

/* ---- XML ---- */

START_TEST(xml_channel_from_live_demo)
{
	char *xml = data_file("virt-live-demo.xml"), *path = NULL;
	ck_assert_int_eq(virt_xml_channel_path(xml, "org.lockstep.agent.0", &path), 0);
	ck_assert_str_eq(path, "/tmp/vp/agent.sock");
	free(path);
	ck_assert_int_eq(virt_xml_channel_path(xml, "org.qemu.guest_agent.0", &path), -ENOENT);
	bool append = true;
	ck_assert_int_eq(virt_xml_console_file(xml, &path, &append), 0);
	ck_assert_str_eq(path, "/tmp/vp/console.log");
	ck_assert(!append); /* live XML says append='off' */
	free(path);
	ck_assert_int_eq(virt_xml_domain_type(xml, &path), 0);
	ck_assert_str_eq(path, "qemu");
	free(path);
	free(xml);
}
END_TEST

START_TEST(xml_channel_from_live_autopath)
{
	char *xml = data_file("virt-live-autopath.xml"), *path = NULL;
	ck_assert_int_eq(virt_xml_channel_path(xml, "org.lockstep.agent.0", &path), 0);
	ck_assert_str_eq(path, "/var/lib/libvirt/qemu/channel/target/domain-8-lockstep-test-probe2/"
			       "org.lockstep.agent.0");
	free(path);
	ck_assert_int_eq(virt_xml_channel_path(xml, "org.qemu.guest_agent.0", &path), 0);
	ck_assert_str_eq(path, "/var/lib/libvirt/qemu/channel/target/domain-8-lockstep-test-probe2/"
			       "org.qemu.guest_agent.0");
	free(path);
	free(xml);
}
END_TEST

START_TEST(xml_channel_edge_cases)
{
	char *p = NULL;
	/* a SPICE channel under graphics is not a virtio-serial one; target
	 * before source; double quotes; entities in the path */
	const char *xml =
		"<?xml version='1.0'?>\n<!-- <channel> -->\n"
		"<domain type=\"kvm\"><devices>"
		"<graphics type='spice'><channel name='org.lockstep.agent.0' mode='secure'/></graphics>"
		"<channel type=\"unix\"><target type='virtio' name=\"org.lockstep.agent.0\"/>"
		"<source mode='bind' path='/run/a&amp;b &apos;c&apos;&#x41;&#66;.sock'/></channel>"
		"</devices></domain>\n";
	ck_assert_int_eq(virt_xml_channel_path(xml, "org.lockstep.agent.0", &p), 0);
	ck_assert_str_eq(p, "/run/a&b 'c'AB.sock");
	free(p);
	ck_assert_int_eq(virt_xml_console_file(xml, &p, NULL), -ENOENT);

	ck_assert_int_eq(virt_xml_channel_path("<domain><devices><channel type='pty'>"
					       "<target type='virtio' name='x'/></channel>"
					       "</devices></domain>",
					       "x", &p),
			 -EPROTO);
	ck_assert_int_eq(virt_xml_channel_path("<domain><devices><channel type='unix'>"
					       "<source mode='bind'/><target type='virtio' name='x'/>"
					       "</channel></devices></domain>",
					       "x", &p),
			 -EPROTO);
	/* a pty console with a log file */
	bool append = false;
	ck_assert_int_eq(virt_xml_console_file("<domain><devices><serial type='pty'>"
					       "<log file='/var/log/c.log' append='on'/></serial><serial "
					       "type='file'><source path='/x'/></serial></devices>"
					       "</domain>",
					       &p, &append),
			 0);
	ck_assert_str_eq(p, "/var/log/c.log");
	ck_assert(append);
	free(p);
}
END_TEST

START_TEST(xml_rejects_malformed)
{
	static const char *const bad[] = {
		"<domain><devices></domain>", /* mismatched */
		"<domain><devices>",	      /* unclosed */
		"<domain/><domain/>",	      /* two roots */
		"<domain a=b/>",	      /* unquoted */
		"<domain a='1'b='2'/>",	      /* no space between attributes */
		"<domain type='&bogus;'/>",   /* unknown entity */
		"text<domain/>",	      /* text outside the root */
		"<domain><!-- unterminated </domain>",
		"",
	};
	char *p;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = virt_xml_domain_type(bad[i], &p);
		ck_assert_msg(r == -EINVAL, "\"%s\" gave %d", bad[i], r);
	}
	char deep[2048] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "<a>");
	ck_assert_int_eq(virt_xml_domain_type(deep, &p), -EINVAL);
}
END_TEST

START_TEST(xml_edit_domain)
{
	char *xml = data_file("virt-live-demo.xml"), *out, *again, *p;
	const char *block = "<cputune><vcpupin vcpu='0' cpuset='1'/></cputune>";

	ck_assert_int_eq(virt_xml_edit_domain(xml, "kvm", block, &out), 0);
	ck_assert_int_eq(virt_xml_domain_type(out, &p), 0);
	ck_assert_str_eq(p, "kvm");
	free(p);
	ck_assert_ptr_nonnull(strstr(out, "  <cputune><vcpupin vcpu='0' cpuset='1'/></cputune>\n"
					  "</domain>"));
	ck_assert_int_eq(virt_xml_channel_path(out, "org.lockstep.agent.0", &p), 0);
	ck_assert_str_eq(p, "/tmp/vp/agent.sock");
	free(p);
	ck_assert_int_eq(virt_xml_edit_domain(out, NULL, block, &again), -EEXIST);
	free(out);
	free(xml);

	/* no type attribute yet: one is added */
	ck_assert_int_eq(virt_xml_edit_domain("<domain><name>x</name></domain>", "qemu", NULL, &out),
			 0);
	ck_assert_str_eq(out, "<domain type='qemu'><name>x</name></domain>");
	free(out);
	ck_assert_int_eq(virt_xml_edit_domain("<network/>", "qemu", NULL, &out), -EINVAL);
}
END_TEST

/* ---- accelerator ---- */

static char root[256];

static void fake_root(bool kvm, const char *flags)
{
	char path[300];
	testlib_tmpdir(root, sizeof(root), "test-virt-accel");
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	if (kvm) {
		snprintf(path, sizeof(path), "%s/dev/kvm", root);
		write_file(path, "%s", "");
	}
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	write_file(path,
		   "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: %s\n\n"
		   "processor\t: 1\nflags\t\t: %s\n",
		   flags, flags);
}

static void rm_root(void)
{
	ck_assert_int_eq(testlib_rmtree(root), 0);
}

START_TEST(accel_auto_needs_kvm_and_flags)
{
	struct virt_accel a;

	fake_root(true, "fpu vme de pse tsc msr pae mce cx8 vmx ssse3 hypervisor");
	virt_accel_decide(root, VIRT_ACCEL_AUTO, &a);
	ck_assert(a.kvm);
	ck_assert_str_eq(a.domain_type, "kvm");
	ck_assert_msg(strstr(a.reason, "usable"), "%s", a.reason);
	rm_root();

	fake_root(true, "fpu svm lahf_lm");
	virt_accel_decide(root, VIRT_ACCEL_AUTO, &a);
	ck_assert(a.kvm);
	rm_root();

	/* the PVM host of FACTS.md: /dev/kvm opens, no vmx/svm ("nvmx" is not vmx) */
	fake_root(true, "fpu vme nvmx svmx hypervisor");
	virt_accel_decide(root, VIRT_ACCEL_AUTO, &a);
	ck_assert(!a.kvm);
	ck_assert_str_eq(a.name, "tcg");
	ck_assert_str_eq(a.domain_type, "qemu");
	ck_assert_msg(strstr(a.reason, "neither vmx nor svm") && strstr(a.reason, "hangs"), "%s",
		      a.reason);
	rm_root();

	fake_root(false, "vmx");
	virt_accel_decide(root, VIRT_ACCEL_AUTO, &a);
	ck_assert(!a.kvm);
	ck_assert_msg(strstr(a.reason, "/dev/kvm cannot be opened"), "%s", a.reason);
	rm_root();
}
END_TEST

START_TEST(accel_forced)
{
	struct virt_accel a;
	enum virt_accel_mode m;

	fake_root(true, "fpu");
	ck_assert_int_eq(virt_accel_parse("kvm", &m), 0);
	virt_accel_decide(root, m, &a);
	ck_assert(a.kvm);
	ck_assert_msg(strstr(a.reason, "forced by GUEST_ACCEL=kvm") && strstr(a.reason, "vmx"),
		      "%s", a.reason);
	rm_root();

	fake_root(true, "vmx");
	ck_assert_int_eq(virt_accel_parse("tcg", &m), 0);
	virt_accel_decide(root, m, &a);
	ck_assert(!a.kvm);
	ck_assert_msg(strstr(a.reason, "forced by GUEST_ACCEL=tcg"), "%s", a.reason);
	rm_root();
	ck_assert_int_eq(virt_accel_parse("KVM", &m), -EINVAL);
}
END_TEST

/* ---- addresses ---- */

START_TEST(addresses_parse)
{
	struct virt_addr *a;
	char err[256], buf[300];
	int r = virt_addr_parse_list(" 127.0.0.1:2201\t[::1]:22\nguest-3.lab.example "
				     "10.0.0.4:65535 ",
				     4, 22, &a, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_str_eq(a[0].host, "127.0.0.1");
	ck_assert_int_eq(a[0].port, 2201);
	ck_assert_str_eq(a[1].host, "::1");
	virt_addr_format(&a[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "[::1]:22");
	ck_assert_str_eq(a[2].host, "guest-3.lab.example");
	ck_assert_int_eq(a[2].port, 22);
	ck_assert_int_eq(a[3].port, 65535);
	free(a);
}
END_TEST

START_TEST(addresses_reject)
{
	static const struct {
		const char *list;
		const char *why;
	} bad[] = {
		{ "127.0.0.1:22", "has 1 address, expected 2" },
		{ "a:1 b:2 c:3", "more than the 2" },
		{ "127.0.0.1:0 b:2", "entry 1: \"127.0.0.1:0\": the port \"0\"" },
		{ "a:1 b:65536", "entry 2: \"b:65536\": the port" },
		{ "a:1 b:x", "the port \"x\"" },
		{ "::1:22 a:1", "needs brackets" },
		{ "[::g]:22 a:1", "not an IPv6 address" },
		{ "300.1.1.1:22 a:1", "neither an IPv4 address nor a host name" },
		{ "a..b:22 a:1", "neither an IPv4" },
		{ "-a:22 a:1", "neither an IPv4" },
		{ "a: b:1", "the port \"\"" },
	};
	struct virt_addr *a;
	char err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(virt_addr_parse_list(bad[i].list, 2, 22, &a, err, sizeof(err)),
				 -EINVAL);
		ck_assert_msg(strstr(err, bad[i].why), "\"%s\": \"%s\" lacks \"%s\"", bad[i].list,
			      err, bad[i].why);
	}
	/* without a default port, the port is required */
	struct virt_addr one;
	ck_assert_int_eq(virt_addr_parse("host", 0, &one, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(virt_addr_parse("host", 2222, &one, err, sizeof(err)), 0);
	ck_assert_int_eq(one.port, 2222);
}
END_TEST

/* ---- pinning ---- */

START_TEST(cputune_blocks)
{
	char *b, why[256];
	ck_assert_int_eq(virt_settings_cputune("0,3-5", 2, &b, why, sizeof(why)), 0);
	ck_assert_str_eq(b, "<cputune><vcpupin vcpu='0' cpuset='0'/><vcpupin vcpu='1' "
			    "cpuset='3-5'/></cputune>");
	free(b);
	ck_assert_int_eq(virt_settings_cputune("0", 2, &b, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "pins 1 vCPU; the guest has 2"), "%s", why);
	ck_assert_int_eq(virt_settings_cputune("0,1,2", 2, &b, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(virt_settings_cputune("0,,1", 3, &b, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(virt_settings_cputune("5-3", 1, &b, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(virt_settings_cputune("1-+2", 1, &b, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(virt_settings_cputune("a", 1, &b, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "\"a\" is neither"), "%s", why);
}
END_TEST

/* ---- console ---- */

START_TEST(console_scan)
{
	struct virt_console_scan s;
	const char *log = "[    1.62] Run /init as init process\r\n"
			  "lockstep-init: LOCKSTEP-READY is not at the start\r\n"
			  "LOCKSTEP-HOSTKEY ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDgxHYKGTKoF7f33\r\n"
			  "lockstep-init: ready 3.34s after kernel start\r\n"
			  "LOCKSTEP-READY\r\n";
	virt_console_scan_init(&s);
	/* in pieces of 7 bytes: lines cross every boundary */
	for (size_t i = 0; i < strlen(log); i += 7) {
		size_t n = strlen(log) - i < 7 ? strlen(log) - i : 7;
		ck_assert(!s.ready);
		virt_console_scan_feed(&s, log + i, n);
	}
	ck_assert(s.ready);
	ck_assert_str_eq(s.hostkey, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDgxHYKGTKoF7f33");
	ck_assert_str_eq(s.last, "LOCKSTEP-READY");

	/* a new boot in an appended log: the old READY no longer counts */
	const char *again = "LOCKSTEP-HOSTKEY ssh-ed25519 BBBBC3NzaC1lZDI1NTE5AAAAIDgx\r\n";
	virt_console_scan_feed(&s, again, strlen(again));
	ck_assert(!s.ready);
	ck_assert_str_eq(s.hostkey, "ssh-ed25519 BBBBC3NzaC1lZDI1NTE5AAAAIDgx");
	const char *failed = "LOCKSTEP-FAIL eth0 not up after 10 s\r\n";
	virt_console_scan_feed(&s, failed, strlen(failed));
	ck_assert(s.failed);
	ck_assert_str_eq(s.failure, "eth0 not up after 10 s");

	/* a key that is not one is not taken */
	virt_console_scan_init(&s);
	const char *bad = "LOCKSTEP-HOSTKEY ssh-ed25519 AAAA;rm -rf /\nLOCKSTEP-READY\n";
	virt_console_scan_feed(&s, bad, strlen(bad));
	ck_assert(s.ready);
	ck_assert_str_eq(s.hostkey, "");
}
END_TEST

/* A whole boot of the demo guest, as virtlogd wrote it. */
START_TEST(console_scan_real_log)
{
	struct virt_console_scan s;
	char *log = data_file("virt-console-demo.log");
	size_t n = strlen(log);

	virt_console_scan_init(&s);
	for (size_t i = 0; i < n; i += 4096)
		virt_console_scan_feed(&s, log + i, n - i < 4096 ? n - i : 4096);
	ck_assert(s.ready && !s.failed);
	ck_assert_str_eq(s.hostkey, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAvCAmayPD2/j4du4LDCJwO9nd"
				    "D0vpawgSrb0XbE5rUJ");
	free(log);
}
END_TEST

/* ---- settings ---- */

static char tdir[256];

static struct config *conf(const char *text)
{
	struct config *c = config_new();
	struct config_diag d;
	int r = config_load_string(c, "h.conf", text, &d);
	ck_assert_msg(r == 0, "%s", d.text);
	return c;
}

static void make_template(const char *extra)
{
	char path[300];
	testlib_tmpdir(tdir, sizeof(tdir), "test-virt-settings");
	snprintf(path, sizeof(path), "%s/t.xml", tdir);
	write_file(path,
		   "<!-- @PLACEHOLDERS@ in a comment -->\n<domain type='qemu'>\n<name>@NAME@</name>\n"
		   "<os><kernel>@KERNEL@</kernel><cmdline>@CMDLINE_EXTRA@ @FLAVOUR@</cmdline></os>\n"
		   "<devices><channel type='unix'><source mode='bind' path='@CHANNEL_PATH@'/>"
		   "<target type='virtio' name='org.lockstep.agent.0'/></channel></devices>\n"
		   "%s</domain>\n",
		   extra);
	snprintf(path, sizeof(path), "%s/vmlinux", tdir);
	write_file(path, "%s", "not a kernel");
}

static void rm_tdir(void)
{
	ck_assert_int_eq(testlib_rmtree(tdir), 0);
}

START_TEST(settings_template_guests)
{
	make_template("");
	char *text = xasprintf("LIBVIRT_URI=test:///default\nGUEST_TEMPLATE=%s/t.xml\n"
			       "GUEST_KERNEL=%s/vmlinux\nGUEST_VAR_FLAVOUR='a&b'\n"
			       "GUEST_VCPUS=2\nGUEST_VCPU_PINNING=\"0,1 1-2,3\"\n"
			       "GUEST_RUNTIME_DIR=%s/run\n",
			       tdir, tdir, tdir);
	struct config *c = conf(text);
	struct virt_settings s;
	struct config_diag d;
	int r = virt_settings_load(c, "h.conf", 2, NULL, &s, &d);
	ck_assert_msg(r == 0, "%s:%d: %s", d.file, d.line, d.text);
	ck_assert_int_eq(s.origin, VIRT_ORIGIN_TEMPLATE);
	ck_assert_str_eq(s.uri, "test:///default");
	ck_assert_int_eq(s.count, 2);
	ck_assert_str_eq(s.names[1], "lockstep-guest2");
	ck_assert(s.wait_console);
	ck_assert(!s.template_has_ssh_port);
	ck_assert_str_eq(s.cputune[1], "<cputune><vcpupin vcpu='0' cpuset='1-2'/><vcpupin "
				       "vcpu='1' cpuset='3'/></cputune>");
	char *chan = virt_settings_channel_path(&s, 0);
	ck_assert_str_eq(chan + strlen(tdir), "/run/lockstep-guest1.agent.sock");
	free(chan);
	virt_settings_fini(&s);
	config_free(c);
	free(text);
	rm_tdir();
}
END_TEST

/* MMTests' name for the list of domains, and the count taken from it */
START_TEST(settings_mmtests_vms)
{
	struct config *c = conf("LIBVIRT_URI=test:///default\nMMTESTS_VMS=\"vm-a vm-b vm-c\"\n");
	struct virt_settings s;
	struct config_diag d;
	int r = virt_settings_load(c, "h.conf", VIRT_COUNT_UNSET, NULL, &s, &d);
	ck_assert_msg(r == 0, "%s:%d: %s", d.file, d.line, d.text);
	ck_assert_int_eq(s.origin, VIRT_ORIGIN_EXISTING);
	ck_assert_int_eq(s.count, 3);
	ck_assert_str_eq(s.names[2], "vm-c");
	virt_settings_fini(&s);
	config_free(c);

	/* no LIBVIRT_URI: LIBVIRT_DEFAULT_URI, as virsh does (issue 15) */
	setenv("LIBVIRT_DEFAULT_URI", "test:///from-env", 1);
	c = conf("MMTESTS_VMS=vm-a\n");
	ck_assert_int_eq(virt_settings_load(c, "h.conf", VIRT_COUNT_UNSET, NULL, &s, &d), 0);
	ck_assert_str_eq(s.uri, "test:///from-env");
	virt_settings_fini(&s);
	config_free(c);
	c = conf("LIBVIRT_URI=test:///default\nMMTESTS_VMS=vm-a\n");
	ck_assert_int_eq(virt_settings_load(c, "h.conf", VIRT_COUNT_UNSET, NULL, &s, &d), 0);
	ck_assert_str_eq(s.uri, "test:///default"); /* h.conf's wins */
	virt_settings_fini(&s);
	config_free(c);
	unsetenv("LIBVIRT_DEFAULT_URI");

	/* GUESTS too; a GUEST_COUNT that disagrees is an error naming the list */
	c = conf("LIBVIRT_URI=test:///default\nGUESTS=\"vm-a vm-b\"\n");
	ck_assert_int_eq(virt_settings_load(c, "h.conf", 3, NULL, &s, &d), -EINVAL);
	ck_assert_msg(strstr(d.text, "GUESTS names 2 domains but GUEST_COUNT is 3"), "%s", d.text);
	ck_assert_int_eq(d.line, 2);
	virt_settings_fini(&s);
	config_free(c);
}
END_TEST

static void expect_error(const char *text, unsigned count, const char *want, int line)
{
	struct config *c = conf(text);
	struct virt_settings s;
	struct config_diag d;
	ck_assert_int_eq(virt_settings_load(c, "h.conf", count, NULL, &s, &d), -EINVAL);
	ck_assert_msg(strstr(d.text, want), "\"%s\" lacks \"%s\"", d.text, want);
	ck_assert_msg(d.line == line, "%s: line %d, expected %d", d.text, d.line, line);
	virt_settings_fini(&s);
	config_free(c);
}

START_TEST(settings_errors_name_the_place)
{
	make_template("<memory>@MEMORY_MB@</memory>\n");
	char *t = xasprintf("GUEST_KERNEL=%s/vmlinux\nGUEST_VAR_FLAVOUR=x\nGUEST_TEMPLATE=%s/t.xml\n",
			    tdir, tdir);
	expect_error(t, 1, "t.xml:6: unknown placeholder @MEMORY_MB@", 3);
	free(t);
	t = xasprintf("GUEST_TEMPLATE=%s/t.xml\nGUEST_VAR_FLAVOUR=x\nGUEST_VAR_MEMORY_MB=1\n"
		      "GUEST_KERNEL=%s/nope\n",
		      tdir, tdir);
	expect_error(t, 1, "GUEST_KERNEL=", 4);
	free(t);
	expect_error("GUEST_DOMAINS=\"a b\"\n", 3, "names 2 domains but GUEST_COUNT is 3", 1);
	expect_error("\nGUEST_DOMAINS=\"a a\"\n", 2, "names \"a\" twice", 2);
	expect_error("GUEST_DOMAINS=\"a b/c\"\n", 2, "\"b/c\" is not a name", 1);
	expect_error("GUEST_DOMAINS=a\nGUEST_ADDRESSES=\"1.2.3.4:22 x:1\"\n", 1,
		     "more than the 1 addresses", 2);
	expect_error("GUEST_DOMAINS=a\nGUEST_ACCEL=fast\n", 1, "GUEST_ACCEL", 2);
	t = xasprintf("GUEST_TEMPLATE=%s/t.xml\nGUEST_VAR_NAME=x\n", tdir);
	expect_error(t, 1, "GUEST_VAR_NAME: @NAME@ is filled by hostd", 2);
	free(t);
	rm_tdir();
}
END_TEST

START_TEST(settings_existing_defaults)
{
	struct config *c = conf("GUEST_DOMAINS=\"vm1 vm2\"\nGUEST_ADDRESSES=\"h1 h2:2022\"\n");
	struct virt_settings s;
	struct config_diag d;
	int r = virt_settings_load(c, "h.conf", 2, NULL, &s, &d);
	ck_assert_msg(r == 0, "%s", d.text);
	ck_assert_int_eq(s.origin, VIRT_ORIGIN_EXISTING);
	ck_assert_str_eq(s.uri, "qemu:///system");
	ck_assert_int_eq(s.accel, VIRT_ACCEL_AUTO);
	ck_assert(s.restore_state);
	ck_assert(!s.wait_console);
	ck_assert_int_eq(s.addrs[0].port, 22);
	ck_assert_int_eq(s.addrs[1].port, 2022);
	virt_settings_fini(&s);
	config_free(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("virt");
	TCase *t = tcase_create("template");
	tcase_add_test(t, template_fills_and_escapes);
	tcase_add_test(t, template_unknown_placeholder_is_named);
	tcase_add_test(t, template_leaves_comments_and_other_ats);
	tcase_add_test(t, template_rejects_what_xml_cannot_carry);
	tcase_add_test(t, base64_vectors);
	suite_add_tcase(s, t);
	t = tcase_create("xml");
	tcase_add_test(t, xml_channel_from_live_demo);
	tcase_add_test(t, xml_channel_from_live_autopath);
	tcase_add_test(t, xml_channel_edge_cases);
	tcase_add_test(t, xml_rejects_malformed);
	tcase_add_test(t, xml_edit_domain);
	suite_add_tcase(s, t);
	t = tcase_create("accel");
	tcase_add_test(t, accel_auto_needs_kvm_and_flags);
	tcase_add_test(t, accel_forced);
	suite_add_tcase(s, t);
	t = tcase_create("settings");
	tcase_add_test(t, addresses_parse);
	tcase_add_test(t, addresses_reject);
	tcase_add_test(t, cputune_blocks);
	tcase_add_test(t, console_scan);
	tcase_add_test(t, console_scan_real_log);
	tcase_add_test(t, settings_template_guests);
	tcase_add_test(t, settings_mmtests_vms);
	tcase_add_test(t, settings_errors_name_the_place);
	tcase_add_test(t, settings_existing_defaults);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return testlib_main(suite());
}
