// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The link: the resync rule as a state machine without I/O.  After 0xFF and
 * sync(nonce) a side ignores everything but sync and sync-ack until the ack
 * of that nonce arrives, so that a half-read line or a message meant for an
 * earlier connection cannot be taken for state.  Each side acks every sync
 * it sees, synced or not: the peer may have restarted on its own.
 */
#include <assert.h>
#include <string.h>

#include "proto_impl.h"

void proto_link_restart(struct proto_link *l, uint64_t nonce, struct proto_buf *out)
{
	int r = proto_encode_reset_sync(nonce, out);

	assert(r == 0); /* a sync has no field that can be out of range */
	(void)r;
	l->synced = false;
	l->pending = true;
	l->nonce = nonce;
}

enum proto_link_verdict proto_link_input(struct proto_link *l, const struct proto_msg *m,
					 struct proto_buf *out)
{
	struct proto_msg ack;
	int r;

	switch (m->type) {
	case PROTO_SYNC:
		memset(&ack, 0, sizeof(ack));
		ack.type = PROTO_SYNC_ACK;
		ack.version = PROTO_VERSION;
		ack.u.sync.nonce = m->u.sync.nonce;
		r = proto_encode(&ack, out);
		assert(r == 0);
		(void)r;
		return PROTO_LINK_CONSUMED;
	case PROTO_SYNC_ACK:
		/* an ack of an earlier restart, or a second one, changes nothing */
		if (!l->pending || m->u.sync.nonce != l->nonce)
			return PROTO_LINK_CONSUMED;
		l->pending = false;
		l->synced = true;
		return PROTO_LINK_SYNCED;
	default: return l->synced ? PROTO_LINK_DELIVER : PROTO_LINK_DROPPED;
	}
}
