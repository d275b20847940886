/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Boot-to-ready: waits for the guest's serial console log to say
 *
 *   LOCKSTEP-HOSTKEY ssh-ed25519 AAAA...   its SSH host key, made at boot
 *   LOCKSTEP-READY                         its SSH server listens
 *   LOCKSTEP-FAIL <reason>                 it cannot become ready
 *
 * (vm-templates/guest-init prints them; lines end in "\r\n" there).  Each
 * marker counts only at the start of a line.  A HOSTKEY line starts a new
 * boot: an earlier READY or FAIL in an appended log no longer counts.
 *
 * The log is read as it grows, woken by inotify (uv_fs_event), with a
 * 250 ms timer instead where inotify cannot watch it.  Reads are plain
 * read(2) on the loop: a local file that a guest writes a few KB to.
 */
#ifndef LOCKSTEP_VIRT_CONSOLE_H
#define LOCKSTEP_VIRT_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#define VIRT_CONSOLE_LINE_MAX 4096 /* longer lines are cut there */
#define VIRT_HOSTKEY_MAX 1024
#define VIRT_CONSOLE_TAIL_MAX (4 << 20) /* at most this much old log is read */

/* The pure part: fed the log's bytes in any pieces. */
struct virt_console_scan {
	char line[VIRT_CONSOLE_LINE_MAX];
	size_t len;
	bool ready;
	bool failed;
	char hostkey[VIRT_HOSTKEY_MAX]; /* "ssh-ed25519 AAAA...", "" if none yet */
	char failure[256];		/* the reason of LOCKSTEP-FAIL */
	char last[128];			/* the last non-empty line, printable */
};

void virt_console_scan_init(struct virt_console_scan *s);
void virt_console_scan_feed(struct virt_console_scan *s, const char *buf, size_t len);

struct virt_console_wait;

/*
 * status: 0 ready (hostkey may still be "" for a guest that prints none),
 * -EPROTO the guest said LOCKSTEP-FAIL, -ETIMEDOUT the deadline passed,
 * -errno the log could not be read.  After the callback the waiter is
 * idle; free it (the callback may).
 */
typedef void (*virt_console_cb)(struct virt_console_wait *w, int status, void *data);

/*
 * Starts reading path from offset (bytes of an earlier boot to skip; when
 * the file is shorter, from 0).  timeout_s counts from now.  -errno when the
 * file cannot be opened.  cb never runs from within this call.
 */
int virt_console_wait_start(uv_loop_t *loop, const char *path, off_t offset, double timeout_s,
			    virt_console_cb cb, void *data, struct virt_console_wait **out);
/* Stops (no callback after this) and frees once libuv let go.  Accepts NULL. */
void virt_console_wait_free(struct virt_console_wait *w);

const struct virt_console_scan *virt_console_result(const struct virt_console_wait *w);
const char *virt_console_path(const struct virt_console_wait *w);

#endif
