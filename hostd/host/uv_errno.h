/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one place where libuv's error codes meet errno.  Below hostd's edge
 * every function returns 0 or -errno, and every message says
 * strerror(-r); a libuv call's result is passed through errno_from_uv
 * where it is made, so that no caller has to guess which space a code is
 * in.  On Linux libuv's UV_E* codes are -errno already (checked when this
 * builds); its own codes, which no errno shares, become the nearest errno:
 * UV_EOF -EPIPE (the other end is gone), UV_EAI_MEMORY -ENOMEM,
 * UV_EAI_AGAIN -EAGAIN, UV_ECHARSET -EILSEQ, any other -EIO.
 */
#ifndef LOCKSTEP_UV_ERRNO_H
#define LOCKSTEP_UV_ERRNO_H

/* r when it is 0 or positive (a count) or an errno; else as above. */
int errno_from_uv(int r);

#endif
