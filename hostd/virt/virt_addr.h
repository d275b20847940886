/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest's SSH address: from GUEST_ADDRESSES (host:port per guest), or
 * asked of libvirt (the DHCP lease of its interface, then the ARP table).
 */
#ifndef LOCKSTEP_VIRT_ADDR_H
#define LOCKSTEP_VIRT_ADDR_H

#include <libvirt/libvirt.h>
#include <stddef.h>

#define VIRT_ADDR_HOST_MAX 254 /* a DNS name is at most 253 characters */

struct virt_addr {
	char host[VIRT_ADDR_HOST_MAX]; /* IPv4, IPv6 (no brackets) or a DNS name */
	int port;
	/* where it came from, for the manifest: "lease", "arp" (set by
	 * virt_addr_lookup), "config", "forward" (set by the caller); NULL
	 * if unknown */
	const char *source;
};

/* "host:port", "[v6addr]:port"; when default_port > 0 the ":port" may be
 * left out.  -EINVAL, with err saying what is wrong with s. */
int virt_addr_parse(const char *s, int default_port, struct virt_addr *a, char *err, size_t errlen);

/* White-space separated list of exactly count addresses (GUEST_ADDRESSES):
 * *out (count entries, a new array).  err names the entry (1-based) and
 * the value. */
int virt_addr_parse_list(const char *s, size_t count, int default_port, struct virt_addr **out,
			 char *err, size_t errlen);

/* "host:port", brackets around IPv6; buf of at least VIRT_ADDR_HOST_MAX + 10 */
void virt_addr_format(const struct virt_addr *a, char *buf, size_t len);

/*
 * Asks libvirt: the first IPv4 (else IPv6) address of any interface of
 * dom, first from the DHCP leases of libvirt's networks, then from the
 * host's ARP table.  Blocking (a call into libvirtd).  -ENOENT when neither
 * source knows one, with both of libvirt's answers in err.  A lease is not a
 * readiness signal: with a fixed MAC, the lease of an earlier boot comes
 * back at once.
 */
int virt_addr_lookup(virDomainPtr dom, int port, struct virt_addr *a, char *err, size_t errlen);

#endif
