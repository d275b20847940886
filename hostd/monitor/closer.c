// SPDX-License-Identifier: GPL-2.0-or-later
#include "closer.h"

#include <assert.h>
#include <stddef.h>

void closer_init(struct closer *c, void (*destroy)(void *obj), void *obj)
{
	*c = (struct closer){ .destroy = destroy, .obj = obj };
}

void closer_hold(struct closer *c)
{
	c->out++;
}

void closer_settle(struct closer *c)
{
	/* c is freed with the object: what runs after comes out first */
	void (*done)(void *) = c->done;
	void *ctx = c->done_ctx;

	if (!c->closing || c->out)
		return;
	c->destroy(c->obj);
	if (done)
		done(ctx);
}

void closer_release(struct closer *c)
{
	assert(c->out > 0);
	c->out--;
	closer_settle(c);
}

void closer_close(struct closer *c, void (*done)(void *ctx), void *ctx)
{
	if (!c) {
		if (done)
			done(ctx);
		return;
	}
	assert(!c->closing);
	c->closing = true;
	c->done = done;
	c->done_ctx = ctx;
}

static void handle_closed(uv_handle_t *h)
{
	closer_release(h->data);
}

void closer_close_handle(struct closer *c, uv_handle_t *h)
{
	h->data = c;
	uv_close(h, handle_closed);
}
