// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define ADDR_TEXT_MAX 300 /* one entry of GUEST_ADDRESSES */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_port(const char *s, int *port)
{
	long v = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!is_digit(*s))
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (v < 1)
		return -EINVAL;
	*port = (int)v;
	return 0;
}

/* RFC 1123 host name: labels of letters, digits and '-', not at either end */
static bool dns_name_valid(const char *s)
{
	size_t label = 0, total = strlen(s);
	if (!total || total > 253)
		return false;
	for (const char *p = s;; p++) {
		if (*p == '.' || !*p) {
			if (!label || p[-1] == '-')
				return false;
			if (!*p)
				return true;
			label = 0;
			continue;
		}
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || is_digit(*p) ||
			  (*p == '-' && label);
		if (!ok || ++label > 63)
			return false;
	}
}

static bool looks_numeric(const char *s)
{
	for (; *s; s++)
		if (!is_digit(*s) && *s != '.')
			return false;
	return true;
}

int virt_addr_parse(const char *s, int default_port, struct virt_addr *a, char *err, size_t errlen)
{
	char host[ADDR_TEXT_MAX];
	const char *port = NULL;
	unsigned char bin[16];
	size_t n = strlen(s);

	memset(a, 0, sizeof(*a));
	if (n == 0 || n >= sizeof(host)) {
		snprintf(err, errlen, "\"%.40s\" is %s", s, n ? "too long" : "empty");
		return -EINVAL;
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':')) {
			snprintf(err, errlen, "\"%s\": expected [IPv6]:port", s);
			return -EINVAL;
		}
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		port = close[1] ? close + 2 : NULL;
		if (inet_pton(AF_INET6, host, bin) != 1) {
			snprintf(err, errlen, "\"%s\": \"%s\" is not an IPv6 address", s, host);
			return -EINVAL;
		}
	} else {
		const char *colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon) {
			snprintf(err, errlen,
				 "\"%s\": an IPv6 address needs brackets, as in [::1]:22", s);
			return -EINVAL;
		}
		size_t hl = colon ? (size_t)(colon - s) : n;
		memcpy(host, s, hl);
		host[hl] = '\0';
		port = colon ? colon + 1 : NULL;
		if (looks_numeric(host) ? inet_pton(AF_INET, host, bin) != 1 : !dns_name_valid(host)) {
			snprintf(err, errlen,
				 "\"%s\": \"%s\" is neither an IPv4 address nor a host name", s, host);
			return -EINVAL;
		}
	}
	if (!port && default_port <= 0) {
		snprintf(err, errlen, "\"%s\": expected host:port", s);
		return -EINVAL;
	}
	if (port && parse_port(port, &a->port) < 0) {
		snprintf(err, errlen, "\"%s\": the port \"%s\" is not a number from 1 to 65535", s,
			 port);
		return -EINVAL;
	}
	if (!port)
		a->port = default_port;
	snprintf(a->host, sizeof(a->host), "%s", host);
	return 0;
}

int virt_addr_parse_list(const char *s, size_t count, int default_port, struct virt_addr **out,
			 char *err, size_t errlen)
{
	struct virt_addr *v = xcalloc(count ? count : 1, sizeof(*v));
	size_t i = 0;
	char word[ADDR_TEXT_MAX], why[384];

	for (const char *p = s;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, " \t\n");
		if (i == count) {
			snprintf(err, errlen,
				 "has more than the %zu addresses expected (one per guest)", count);
			goto fail;
		}
		snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
		if (n >= sizeof(word) ||
		    virt_addr_parse(word, default_port, &v[i], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "entry %zu: %s", i + 1,
				 n >= sizeof(word) ? "too long" : why);
			goto fail;
		}
		i++;
		p += n;
	}
	if (i != count) {
		snprintf(err, errlen, "has %zu address%s, expected %zu (one per guest, host:port)",
			 i, i == 1 ? "" : "es", count);
		goto fail;
	}
	*out = v;
	return 0;
fail:
	free(v);
	return -EINVAL;
}

void virt_addr_format(const struct virt_addr *a, char *buf, size_t len)
{
	if (strchr(a->host, ':'))
		snprintf(buf, len, "[%s]:%d", a->host, a->port);
	else
		snprintf(buf, len, "%s:%d", a->host, a->port);
}

/* The first address of the wanted family over all interfaces. */
static bool pick(virDomainInterfacePtr *ifaces, int n, int family, struct virt_addr *a)
{
	for (int i = 0; i < n; i++) {
		for (unsigned j = 0; j < ifaces[i]->naddrs; j++) {
			const virDomainIPAddress *ip = &ifaces[i]->addrs[j];
			if (ip->type == family && ip->addr && strlen(ip->addr) < sizeof(a->host)) {
				snprintf(a->host, sizeof(a->host), "%s", ip->addr);
				return true;
			}
		}
	}
	return false;
}

/* 0 when source knew an address; else its answer in why. */
static int ask(virDomainPtr dom, unsigned source, struct virt_addr *a, char *why, size_t len)
{
	virDomainInterfacePtr *ifaces = NULL;
	int n = virDomainInterfaceAddresses(dom, &ifaces, source, 0);
	bool found;

	if (n < 0) {
		snprintf(why, len, "%s", virGetLastErrorMessage());
		return -EIO;
	}
	found = pick(ifaces, n, VIR_IP_ADDR_TYPE_IPV4, a) || pick(ifaces, n, VIR_IP_ADDR_TYPE_IPV6, a);
	for (int i = 0; i < n; i++)
		virDomainInterfaceFree(ifaces[i]);
	free(ifaces);
	if (!found)
		snprintf(why, len, "no address (%d interface%s)", n, n == 1 ? "" : "s");
	return found ? 0 : -ENOENT;
}

int virt_addr_lookup(virDomainPtr dom, int port, struct virt_addr *a, char *err, size_t errlen)
{
	char lease[256], arp[256];

	memset(a, 0, sizeof(*a));
	a->port = port;
	if (ask(dom, VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_LEASE, a, lease, sizeof(lease)) == 0) {
		a->source = "lease";
		return 0;
	}
	if (ask(dom, VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_ARP, a, arp, sizeof(arp)) == 0) {
		a->source = "arp";
		return 0;
	}
	snprintf(err, errlen, "no address from libvirt: DHCP leases: %s; ARP table: %s", lease, arp);
	return -ENOENT;
}
