/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Closing an object of the loop that has things out: handles whose close
 * callbacks, worker jobs whose after-work callbacks and child processes
 * whose exits still point at it.  It cannot be freed when its owner closes
 * it, only when the last of them is back; then it is destroyed and the
 * owner's done callback runs.  host_monitor.c and host_proc.c (a timer and
 * a worker job) and monitor_ext.c (the monitors' processes) close this way.
 *
 * Loop thread only.  Each hold is matched by one release (or by
 * closer_close_handle, which releases from the close callback).
 */
#ifndef LOCKSTEP_CLOSER_H
#define LOCKSTEP_CLOSER_H

#include <stdbool.h>
#include <uv.h>

struct closer {
	unsigned out; /* holds not yet released */
	bool closing;
	void (*destroy)(void *obj);
	void *obj;
	void (*done)(void *ctx);
	void *done_ctx;
};

/* destroy(obj) frees the object that c is part of. */
void closer_init(struct closer *c, void (*destroy)(void *obj), void *obj);
/* One more thing out: a handle initialised, a job queued, a child started. */
void closer_hold(struct closer *c);
/* One back: when the object is closing and nothing else is out, it is
 * destroyed here (with c), then done(ctx) runs.  The caller must not touch
 * the object after a release while closing. */
void closer_release(struct closer *c);
/* Starts closing: done(ctx) once the object is destroyed.  c may be NULL
 * (an object never made): done(ctx) at once.  Nothing is destroyed here:
 * the caller closes what it holds (closer_close_handle) and then calls
 * closer_settle, or releases its last hold. */
void closer_close(struct closer *c, void (*done)(void *ctx), void *ctx);
/* Destroys the object now if it is closing and nothing is out. */
void closer_settle(struct closer *c);
/* uv_close of a handle that was held: released from its close callback.
 * Takes over h->data, which no callback of the handle reads after
 * uv_close. */
void closer_close_handle(struct closer *c, uv_handle_t *h);

#endif
