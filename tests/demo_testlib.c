// SPDX-License-Identifier: GPL-2.0-or-later
#include "demo_testlib.h"

#include <check.h>
#include <libvirt/libvirt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostd_testlib.h"

char demo_prefix[64];
const char *demo_args[5] = { "--state-dir", "/var/lib/lockstep" };
static char tag_[16];

void demo_skip_unless_possible(void)
{
	if (geteuid() != 0 || access(DEMO_DIR "/vmlinux", R_OK) != 0) {
		fprintf(stderr, "needs root and the demo guest (vm-templates/build-demo-guest)\n");
		exit(77);
	}
}

void demo_test_setup(const char *tag)
{
	hostd_test_setup();
	const char *guest_agent = getenv("LOCKSTEP_GUEST_AGENT");
	if (guest_agent) {
		demo_args[2] = "--guest-agent";
		demo_args[3] = guest_agent;
	}
	snprintf(tag_, sizeof(tag_), "%s", tag);
	snprintf(demo_prefix, sizeof(demo_prefix), "lockstep-%s-%d-", tag, (int)getpid());
}

void demo_test_teardown(unsigned count)
{
	virConnectPtr c = virConnectOpen("qemu:///system");
	if (c) {
		for (unsigned i = 1; i <= count; i++) {
			char name[96];
			snprintf(name, sizeof(name), "%s%u", demo_prefix, i);
			virDomainPtr d = virDomainLookupByName(c, name);
			if (d) {
				virDomainDestroy(d);
				virDomainFree(d);
			}
		}
		virConnectClose(c);
	}
	hostd_test_teardown();
}

void demo_write_hconf(unsigned count, int port_base, const char *extra)
{
	char text[4096], dir[128];
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	ck_assert_ptr_nonnull(src);
	snprintf(dir, sizeof(dir), "/run/lockstep/%s-%d", tag_, (int)getpid());
	snprintf(text, sizeof(text),
		 "GUEST_KIND=libvirt\nGUEST_COUNT=%u\nGUEST_NAME_PREFIX=%s\n"
		 "GUEST_TEMPLATE=%s/vm-templates/demo-guest.xml.in\n"
		 "GUEST_SSH_PORT_BASE=%d\nGUEST_RUNTIME_DIR=%s\n%s",
		 count, demo_prefix, src, port_base + (getpid() % 400) * 2, dir, extra);
	write_file("h.conf", text, 0644);
	mkdir("/run/lockstep", 0755);
	mkdir(dir, 0755);
}

bool demo_domain_exists(const char *name)
{
	/* libvirtd may be starting again (a test restarted it): wait a while */
	virConnectPtr c = NULL;
	for (int i = 0; i < 300 && !(c = virConnectOpen("qemu:///system")); i++)
		usleep(200 * 1000);
	ck_assert_ptr_nonnull(c);
	virDomainPtr d = virDomainLookupByName(c, name);
	bool there = d != NULL;
	if (d)
		virDomainFree(d);
	virConnectClose(c);
	return there;
}
