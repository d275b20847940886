// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_console.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

#define POLL_MS 250

static const char MARK_HOSTKEY[] = "LOCKSTEP-HOSTKEY ";
static const char MARK_READY[] = "LOCKSTEP-READY";
static const char MARK_FAIL[] = "LOCKSTEP-FAIL";

void virt_console_scan_init(struct virt_console_scan *s)
{
	memset(s, 0, sizeof(*s));
}

static bool starts(const char *line, const char *mark)
{
	return strncmp(line, mark, strlen(mark)) == 0;
}

/* "TYPE BASE64": a key type of [a-z0-9.@-] and base64, nothing else. */
static bool hostkey_valid(const char *k)
{
	size_t type = strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789.@-");
	if (!type || k[type] != ' ')
		return false;
	const char *b = k + type + 1;
	size_t n = strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");
	return n >= 16 && b[n] == '\0';
}

/* Copies what fits of src; cutting is intended. */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void line_done(struct virt_console_scan *s)
{
	char *l = s->line;
	size_t n = s->len;

	while (n && (l[n - 1] == '\r' || l[n - 1] == ' '))
		n--;
	l[n] = '\0';
	s->len = 0;
	if (!n)
		return;
	copy_cut(s->last, sizeof(s->last), l);
	for (char *p = s->last; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';

	if (starts(l, MARK_HOSTKEY)) {
		const char *k = l + strlen(MARK_HOSTKEY);
		/* a new boot: what an earlier one said no longer counts */
		s->ready = s->failed = false;
		s->failure[0] = '\0';
		if (strlen(k) < sizeof(s->hostkey) && hostkey_valid(k))
			copy_cut(s->hostkey, sizeof(s->hostkey), k);
		else
			s->hostkey[0] = '\0';
	} else if (strcmp(l, MARK_READY) == 0) {
		s->ready = true;
	} else if (starts(l, MARK_FAIL) && (l[strlen(MARK_FAIL)] == ' ' || !l[strlen(MARK_FAIL)])) {
		s->failed = true;
		copy_cut(s->failure, sizeof(s->failure),
			 l[strlen(MARK_FAIL)] ? l + strlen(MARK_FAIL) + 1 : "(no reason given)");
	}
}

void virt_console_scan_feed(struct virt_console_scan *s, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			line_done(s);
			continue;
		}
		/* an over-long line is cut: it is never a marker of ours anyway */
		if (s->len < sizeof(s->line) - 1)
			s->line[s->len++] = buf[i];
	}
}

/* ---- on the loop ---- */

struct virt_console_wait {
	uv_fs_event_t ev;
	uv_timer_t timer;
	bool ev_active;
	int open_handles;
	bool done, freed;

	char *path;
	int fd;
	off_t offset;
	uint64_t deadline_ms; /* uv_now */
	struct virt_console_scan scan;
	virt_console_cb cb;
	void *data;
};

static void finish(struct virt_console_wait *w, int status)
{
	if (w->done)
		return;
	w->done = true;
	if (w->ev_active)
		uv_fs_event_stop(&w->ev);
	uv_timer_stop(&w->timer);
	w->cb(w, status, w->data);
}

static void ev_cb(uv_fs_event_t *h, const char *filename, int events, int status);

/* Reads what was added since the last time; 0, or -errno. */
static int read_more(struct virt_console_wait *w)
{
	char buf[65536];
	struct stat st;

	struct stat now;
	if (fstat(w->fd, &st) < 0)
		return -errno;
	/* A log replaced by a new file (a new boot, a log rotated) is not the
	 * one our fd and our inotify watch follow: start over on the new one. */
	if (stat(w->path, &now) == 0 && (now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
		int fd = open(w->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(w->fd);
			w->fd = fd;
			w->offset = 0;
			w->scan.len = 0;
			if (w->ev_active)
				uv_fs_event_stop(&w->ev);
			w->ev_active = uv_fs_event_start(&w->ev, ev_cb, w->path, 0) == 0;
			if (fstat(w->fd, &st) < 0)
				return -errno;
		}
	}
	if (st.st_size < w->offset) {
		/* truncated (a new boot that reopened it) */
		w->offset = 0;
		w->scan.len = 0;
	}
	if (st.st_size - w->offset > VIRT_CONSOLE_TAIL_MAX)
		w->offset = st.st_size - VIRT_CONSOLE_TAIL_MAX;
	for (;;) {
		ssize_t n = pread(w->fd, buf, sizeof(buf), w->offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		w->offset += n;
		virt_console_scan_feed(&w->scan, buf, (size_t)n);
	}
}

static void check(struct virt_console_wait *w)
{
	int r = read_more(w);
	if (r < 0)
		finish(w, r);
	else if (w->scan.failed)
		finish(w, -EPROTO);
	else if (w->scan.ready)
		finish(w, 0);
	else if (uv_now(w->timer.loop) >= w->deadline_ms)
		finish(w, -ETIMEDOUT);
}

static void ev_cb(uv_fs_event_t *h, const char *filename, int events, int status)
{
	(void)filename;
	(void)events;
	struct virt_console_wait *w = h->data;
	if (status < 0)
		finish(w, status);
	else if (!w->done)
		check(w);
}

static void timer_cb(uv_timer_t *t);
/* Next wake-up: the deadline, or the next poll.  The poll runs even with
 * inotify: a watch follows one inode, and a log can be replaced under it. */
static void arm(struct virt_console_wait *w)
{
	uint64_t now = uv_now(w->timer.loop);
	uint64_t left = w->deadline_ms > now ? w->deadline_ms - now : 0;
	uint64_t period = w->ev_active ? 4 * POLL_MS : POLL_MS;
	if (left > period)
		left = period;
	uv_timer_start(&w->timer, timer_cb, left, 0);
}

static void timer_cb(uv_timer_t *t)
{
	struct virt_console_wait *w = t->data;
	if (w->done)
		return;
	check(w);
	if (!w->done)
		arm(w);
}

static void handle_closed(uv_handle_t *h)
{
	struct virt_console_wait *w = h->data;
	if (--w->open_handles > 0)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w);
}

int virt_console_wait_start(uv_loop_t *loop, const char *path, off_t offset, double timeout_s,
			    virt_console_cb cb, void *data, struct virt_console_wait **out)
{
	struct virt_console_wait *w;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*out = NULL;
	if (fd < 0)
		return -errno;
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(path);
	w->offset = offset;
	w->cb = cb;
	w->data = data;
	virt_console_scan_init(&w->scan);
	uv_fs_event_init(loop, &w->ev);
	uv_timer_init(loop, &w->timer);
	w->ev.data = w->timer.data = w;
	w->open_handles = 2;

	w->deadline_ms = uv_now(loop) + (timeout_s > 0 ? (uint64_t)(timeout_s * 1000) : 0);
	/* the watch before the first read, so nothing written in between is
	 * missed; the first read on the loop's next turn, so that cb never
	 * runs inside this call */
	w->ev_active = uv_fs_event_start(&w->ev, ev_cb, path, 0) == 0;
	uv_timer_start(&w->timer, timer_cb, 0, 0);
	*out = w;
	return 0;
}

void virt_console_wait_free(struct virt_console_wait *w)
{
	if (!w || w->freed)
		return;
	w->freed = true;
	w->done = true;
	uv_close((uv_handle_t *)&w->ev, handle_closed);
	uv_close((uv_handle_t *)&w->timer, handle_closed);
}

const struct virt_console_scan *virt_console_result(const struct virt_console_wait *w)
{
	return &w->scan;
}

const char *virt_console_path(const struct virt_console_wait *w)
{
	return w->path;
}
