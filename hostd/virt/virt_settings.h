/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt guests of h.conf (GUEST_KIND=libvirt): which domains, made
 * how, reached how, waited for how long.  Reading checks everything that can
 * be checked before a guest starts: the template is read and filled once
 * with stand-in values (an unknown placeholder is an error naming it), the
 * files it boots exist, the socket paths fit.  Keys: docs/libvirt.md.
 */
#ifndef LOCKSTEP_VIRT_SETTINGS_H
#define LOCKSTEP_VIRT_SETTINGS_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "virt_accel.h"
#include "virt_addr.h"
#include "virt_template.h"

#define VIRT_AGENT_CHANNEL "org.lockstep.agent.0"
#define VIRT_NAME_MAX 64 /* characters in a domain name we accept */
#define VIRT_VCPUS_MAX 512
#define VIRT_DEMO_DIR "/var/lib/lockstep/demo-guest"
/* guest_count when GUEST_COUNT is not set: a list of domains says how many */
#define VIRT_COUNT_UNSET UINT_MAX

enum virt_origin {
	VIRT_ORIGIN_TEMPLATE, /* made for the run from GUEST_TEMPLATE, transient */
	VIRT_ORIGIN_EXISTING, /* GUEST_DOMAINS: defined beforehand, left as found */
};

struct virt_settings {
	char *uri;		    /* LIBVIRT_URI */
	enum virt_accel_mode accel; /* GUEST_ACCEL */
	enum virt_origin origin;
	size_t count;
	char **names; /* domain names, count of them */

	/* existing domains */
	bool restore_state;	   /* GUEST_RESTORE_STATE: stop the ones we started */
	double shutdown_timeout_s; /* GUEST_SHUTDOWN_TIMEOUT, then virDomainDestroy */

	/* readiness and reach */
	bool wait_console;	 /* GUEST_READY=console */
	double boot_timeout_s;	 /* GUEST_BOOT_TIMEOUT */
	struct virt_addr *addrs; /* GUEST_ADDRESSES, count entries; NULL if unset */
	int ssh_port;		 /* GUEST_SSH_PORT: for addresses libvirt finds */

	/* template guests */
	char *template_path; /* GUEST_TEMPLATE */
	char *template_text;
	bool template_has_ssh_port;	/* forwarded to 127.0.0.1:ssh_port_base + i + 1 */
	unsigned vcpus, memory_mib;	/* GUEST_VCPUS, GUEST_MEMORY_MIB */
	char **cputune;			/* GUEST_VCPU_PINNING: a <cputune> per guest, or NULL */
	char *runtime_dir;		/* GUEST_RUNTIME_DIR: sockets and console logs */
	int ssh_port_base;		/* GUEST_SSH_PORT_BASE */
	struct virt_template_var *vars; /* KERNEL, INITRD, CMDLINE_EXTRA, GUEST_VAR_<NAME> */
	size_t nvars;
};

/* Names read here, and the prefix of free placeholders, for
 * config_check_known. */
extern const char *const virt_settings_keys[];
extern const char *const virt_settings_prefixes[];

/*
 * Reads the keys above from c (path names the file in messages).
 * guest_count is GUEST_COUNT (VIRT_COUNT_UNSET when not set); default_template is the demo template's
 * installed path (used when GUEST_TEMPLATE is unset; may be NULL).  0, or
 * -EINVAL with d naming file:line, the key and the value.
 */
int virt_settings_load(const struct config *c, const char *path, unsigned guest_count,
		       const char *default_template, struct virt_settings *s, struct config_diag *d);
void virt_settings_fini(struct virt_settings *s);

/* Per guest i (0-based): where its channel socket and console log go for
 * template guests; new strings. */
char *virt_settings_channel_path(const struct virt_settings *s, size_t i);
char *virt_settings_console_path(const struct virt_settings *s, size_t i);

/*
 * GUEST_VCPU_PINNING for one guest: host CPUs per vCPU separated by ',',
 * each a CPU or a range ("0,1" or "0-1,2-3"): a <cputune> block.  -EINVAL
 * with why.
 */
int virt_settings_cputune(const char *spec, unsigned vcpus, char **block, char *why, size_t len);

#endif
