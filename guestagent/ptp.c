// SPDX-License-Identifier: GPL-2.0-or-later
#include "ptp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ptp_clock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aclock.h"
#include "clock.h"
#include "proto.h"

#define NS 1000000000LL
/* Instants past this are not instants of a clock that started in 1970: a
 * bound that also keeps every sum below from overflowing. */
#define PTP_NS_MAX (INT64_MAX / 4)

/* ---- finding the clock ---- */

/* N of "ptpN", or -1. */
static long ptp_index(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "ptp", 3) || name[3] < '0' || name[3] > '9')
		return -1;
	errno = 0;
	n = strtol(name + 3, &end, 10);
	return errno || *end || n > INT_MAX ? -1 : n;
}

static bool ptp_is_kvm(const char *classdir, const char *name)
{
	char path[PATH_MAX], buf[64];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s/clock_name", classdir, name) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, PTP_KVM_CLOCK_NAME);
}

int ptp_find_kvm(const char *root, char *dev, size_t len)
{
	char classdir[PATH_MAX];
	long best = -1, best_nodev = -1;
	struct dirent *de;
	DIR *d;

	if (snprintf(classdir, sizeof(classdir), "%s/sys/class/ptp", root) >= (int)sizeof(classdir))
		return -ENAMETOOLONG;
	d = opendir(classdir);
	if (!d)
		return -ENOENT;
	/* the lowest N, so that the choice does not depend on readdir's order */
	while ((de = readdir(d))) {
		long n = ptp_index(de->d_name);
		char node[PATH_MAX];
		struct stat st;

		if (n < 0 || !ptp_is_kvm(classdir, de->d_name))
			continue;
		snprintf(node, sizeof(node), "%s/dev/ptp%ld", root, n);
		if (stat(node, &st) == 0) {
			if (best < 0 || n < best)
				best = n;
		} else if (best_nodev < 0 || n < best_nodev) {
			best_nodev = n;
		}
	}
	closedir(d);
	if (best < 0 && best_nodev < 0)
		return -ENOENT;
	if (snprintf(dev, len, "%s/dev/ptp%ld", root, best >= 0 ? best : best_nodev) >= (int)len)
		return -ENAMETOOLONG;
	return best >= 0 ? 0 : -ENODEV;
}

/* ---- reading the device ---- */

static int ptp_ts_ns(const struct ptp_clock_time *t, int64_t *ns)
{
	if (t->sec < 0 || t->sec >= PTP_NS_MAX / NS || t->nsec >= NS)
		return -ERANGE;
	*ns = (int64_t)t->sec * NS + t->nsec;
	return 0;
}

/* One pair from stamps before and after a PHC read. */
static int ptp_pair_around(const struct ptp_clock_time *before, const struct ptp_clock_time *phc,
			   const struct ptp_clock_time *after, struct ptp_pair *out)
{
	int64_t a, b;

	if (ptp_ts_ns(before, &a) || ptp_ts_ns(phc, &out->phc_ns) || ptp_ts_ns(after, &b))
		return -ERANGE;
	out->sys_ns = a + (b - a) / 2;
	out->window_ns = b - a;
	return 0;
}

static int ptp_read_precise(int fd, struct ptp_pair *out)
{
	struct ptp_sys_offset_precise p;

	memset(&p, 0, sizeof(p));
	if (ioctl(fd, PTP_SYS_OFFSET_PRECISE, &p) < 0)
		return -errno;
	if (ptp_ts_ns(&p.sys_realtime, &out->sys_ns) || ptp_ts_ns(&p.device, &out->phc_ns))
		return -ERANGE;
	out->window_ns = 0;
	return 1;
}

static int ptp_read_extended(int fd, struct ptp_pair *out, unsigned max)
{
	static struct ptp_sys_offset_extended x; /* 1.2 KiB: off the stack */
	unsigned k = 0;

	memset(&x, 0, sizeof(x));
	x.n_samples = max < PTP_MAX_SAMPLES ? max : PTP_MAX_SAMPLES;
	if (ioctl(fd, PTP_SYS_OFFSET_EXTENDED, &x) < 0)
		return -errno;
	for (unsigned i = 0; i < x.n_samples; i++)
		if (ptp_pair_around(&x.ts[i][0], &x.ts[i][1], &x.ts[i][2], &out[k]) == 0)
			k++;
	return k ? (int)k : -ERANGE;
}

static int ptp_read_plain(int fd, struct ptp_pair *out, unsigned max)
{
	static struct ptp_sys_offset o;
	unsigned k = 0;

	memset(&o, 0, sizeof(o));
	o.n_samples = max < PTP_MAX_SAMPLES ? max : PTP_MAX_SAMPLES;
	if (ioctl(fd, PTP_SYS_OFFSET, &o) < 0)
		return -errno;
	/* sys0 phc0 sys1 phc1 ... sysN: each PHC read between two stamps */
	for (unsigned i = 0; i < o.n_samples; i++)
		if (ptp_pair_around(&o.ts[2 * i], &o.ts[2 * i + 1], &o.ts[2 * i + 2], &out[k]) == 0)
			k++;
	return k ? (int)k : -ERANGE;
}

/*
 * The best method that works.  ptp_kvm on x86 offers a cross-timestamp
 * only while the guest's clocksource is kvm-clock (the kernel then fails
 * it with -ENODEV or -EOPNOTSUPP), and it has no gettimex64, so that
 * EXTENDED fails too and PLAIN is what a tsc guest gets.  A method that
 * failed is not tried again.
 */
static int ptp_dev_pairs(struct ptp_clock *c, struct ptp_pair *out, unsigned max)
{
	int r = -EOPNOTSUPP;

	for (enum ptp_method m = c->method; m < PTP_NMETHODS; m++) {
		r = m == PTP_PRECISE	? ptp_read_precise(c->fd, out)
		    : m == PTP_EXTENDED ? ptp_read_extended(c->fd, out, max)
					: ptp_read_plain(c->fd, out, max);
		if (r > 0) {
			c->method = m;
			return r;
		}
		if (r == -EINTR)
			return r;
	}
	return r;
}

static int64_t ptp_dev_sys_now(struct ptp_clock *c)
{
	(void)c;
	return clock_real_ns();
}

static const struct ptp_ops ptp_dev_ops = { ptp_dev_pairs, ptp_dev_sys_now };

int ptp_open(struct ptp_clock *c, const char *dev)
{
	struct ptp_clock_caps caps;
	struct ptp_pair pairs[PTP_PAIRS];
	int r;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", dev);
	c->fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	memset(&caps, 0, sizeof(caps));
	if (ioctl(c->fd, PTP_CLOCK_GETCAPS, &caps) < 0) {
		r = -errno;
		goto fail;
	}
	c->ops = &ptp_dev_ops;
	c->method = caps.cross_timestamping ? PTP_PRECISE : PTP_EXTENDED;
	r = ptp_dev_pairs(c, pairs, PTP_PAIRS);
	if (r > 0)
		return 0;
fail:
	close(c->fd);
	c->fd = -1;
	c->ops = NULL;
	return r;
}

/* ---- the test double ---- */

static int ptp_syn_pairs(struct ptp_clock *c, struct ptp_pair *out, unsigned max)
{
	for (unsigned i = 0; i < max; i++) {
		int64_t a = clock_real_ns() - c->behind_ns;
		int64_t phc = clock_real_ns();
		int64_t b = clock_real_ns() - c->behind_ns;

		out[i] = (struct ptp_pair){ a + (b - a) / 2, phc, b - a };
	}
	return (int)max;
}

static int64_t ptp_syn_sys_now(struct ptp_clock *c)
{
	return clock_real_ns() - c->behind_ns;
}

static const struct ptp_ops ptp_syn_ops = { ptp_syn_pairs, ptp_syn_sys_now };

void ptp_open_synthetic(struct ptp_clock *c, int64_t behind_ns)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->ops = &ptp_syn_ops;
	c->behind_ns = behind_ns;
	c->method = PTP_EXTENDED; /* what it imitates: stamps around each read */
	snprintf(c->path, sizeof(c->path), "synthetic");
}

void ptp_close(struct ptp_clock *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->ops = NULL;
}

const char *ptp_method_name(enum ptp_method m)
{
	switch (m) {
	case PTP_PRECISE: return "cross-timestamp";
	case PTP_EXTENDED: return "extended";
	case PTP_PLAIN: return "plain";
	default: return "unknown";
	}
}

/* ---- a reading ---- */

int ptp_combine(int64_t rt_a, int64_t agent_ns, int64_t rt_b, const struct ptp_pair *pairs,
		unsigned n, struct ptp_reading *out)
{
	const struct ptp_pair *best = NULL;

	if (rt_a <= 0 || rt_a > PTP_NS_MAX || rt_b > PTP_NS_MAX || agent_ns <= 0)
		return -ERANGE;
	if (rt_b < rt_a)
		return -EAGAIN; /* the realtime clock was stepped in between */
	for (unsigned i = 0; i < n; i++) {
		const struct ptp_pair *p = &pairs[i];

		if (p->window_ns < 0 || p->window_ns > PROTO_PTP_WINDOW_MAX_NS || p->sys_ns < 0 ||
		    p->sys_ns > PTP_NS_MAX || p->phc_ns <= 0 || p->phc_ns > PTP_NS_MAX)
			continue;
		if (!best || p->window_ns < best->window_ns)
			best = p;
	}
	if (!best)
		return -ERANGE;
	/* The pairs were read a few microseconds after agent_ns: the host's
	 * and this system's realtime drift apart by at most a few hundred
	 * ppm, a nanosecond over that time, which the window's rounding up
	 * below covers. */
	out->mono_ns = agent_ns;
	out->real_ns = rt_a + (rt_b - rt_a) / 2;
	out->host_real_ns = out->real_ns + (best->phc_ns - best->sys_ns);
	out->window_ns = (rt_b - rt_a) + best->window_ns + 1;
	if (out->host_real_ns <= 0 || out->window_ns > PROTO_PTP_WINDOW_MAX_NS)
		return -ERANGE;
	return 0;
}

int ptp_read(struct ptp_clock *c, struct ptp_reading *out)
{
	struct ptp_pair pairs[PTP_PAIRS];
	int64_t rt_a, agent, rt_b;
	int r;

	if (!c || !c->ops)
		return -ENODEV;
	rt_a = c->ops->sys_now(c);
	agent = aclock_now();
	rt_b = c->ops->sys_now(c);
	r = c->ops->pairs(c, pairs, PTP_PAIRS);
	if (r > 0)
		r = ptp_combine(rt_a, agent, rt_b, pairs, (unsigned)r, out);
	else if (r == 0)
		r = -EIO;
	if (r < 0)
		c->failures++;
	return r;
}
