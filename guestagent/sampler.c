// SPDX-License-Identifier: GPL-2.0-or-later
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "aclock.h"
#include "log.h"

/* Two snapshots (the previous and the newest) and the read buffer, off the
 * stack: one sampler per process.  /proc/stat holds the CPU lines first,
 * so a larger file cut at this size loses only its tail (interrupts). */
static struct mon_snap sampler_snap[2];
static char sampler_buf[128 * 1024];

struct sampler_emit {
	struct session *sess;
	uint32_t step;
	int64_t ns;
};

static void sampler_send(void *ctx, const char *metric, double value, const char *unit)
{
	struct sampler_emit *e = ctx;

	sess_sample(e->sess, e->step, e->ns, metric, value, unit);
}

void sampler_init(struct sampler *s, const char *proc_root)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->root, sizeof(s->root), "%s", proc_root ? proc_root : "");
	for (int i = 0; i < MON_NSRC; i++)
		s->rd.fd[i] = -1;
	s->tfd = -1;
}

static int sampler_arm(struct sampler *s)
{
	struct itimerspec it = { 0 };

	it.it_interval.tv_sec = s->interval_ms / 1000;
	it.it_interval.tv_nsec = (long)(s->interval_ms % 1000) * 1000000L;
	it.it_value = it.it_interval;
	return timerfd_settime(s->tfd, 0, &it, NULL) < 0 ? -errno : 0;
}

static void sampler_log_sources(const struct sampler *s)
{
	unsigned missing = mon_reader_missing(&s->rd);

	log_info("monitors every %u ms, reading proc/ under %s", s->interval_ms,
		 s->root[0] ? s->root : "/");
	for (int i = 0; i < MON_NSRC; i++)
		if (missing & (1u << i))
			log_info("monitors: no %s on this system; left out", mon_source_path[i]);
}

int sampler_set(struct sampler *s, uint32_t interval_ms)
{
	int r;

	if (interval_ms == s->interval_ms)
		return 0;
	if (!interval_ms) {
		sampler_fini(s);
		log_info("monitors off");
		return 0;
	}
	if (s->tfd < 0) {
		s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (s->tfd < 0)
			return -errno;
		mon_reader_open(&s->rd, s->root);
	}
	s->interval_ms = interval_ms;
	r = sampler_arm(s);
	if (r < 0)
		return r;
	sampler_log_sources(s);
	/* the first interval starts now */
	mon_reader_read(&s->rd, aclock_now(), &sampler_snap[s->cur], sampler_buf, sizeof(sampler_buf));
	s->have_prev = true;
	return 0;
}

int sampler_fd(const struct sampler *s)
{
	return s->tfd;
}

void sampler_take(struct sampler *s, struct session *sess, uint32_t step, bool rearm)
{
	struct sampler_emit e = { sess, step, 0 };
	struct mon_snap *prev, *now;
	uint64_t ticks;
	unsigned bad;

	if (s->tfd < 0)
		return;
	while (read(s->tfd, &ticks, sizeof(ticks)) < 0 && errno == EINTR)
		;
	if (rearm)
		sampler_arm(s);
	prev = &sampler_snap[s->cur];
	s->cur ^= 1;
	now = &sampler_snap[s->cur];
	e.ns = aclock_now();
	mon_reader_read(&s->rd, e.ns, now, sampler_buf, sizeof(sampler_buf));
	bad = s->rd.bad & ~s->warned_bad;
	for (int i = 0; i < MON_NSRC; i++)
		if (bad & (1u << i))
			log_warn("monitors: %s/%s does not read as expected; left out while it does not",
				 s->root, mon_source_path[i]);
	s->warned_bad |= bad;
	if (s->have_prev)
		mon_emit(prev, now, sampler_send, &e);
	s->have_prev = true;
}

void sampler_fini(struct sampler *s)
{
	if (s->tfd >= 0)
		close(s->tfd);
	s->tfd = -1;
	mon_reader_close(&s->rd);
	s->interval_ms = 0;
	s->have_prev = false;
}
