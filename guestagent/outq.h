/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's outgoing queue: whole encoded lines waiting for the channel
 * to take them.  Two lanes:
 *   prio  link traffic (0xFF + sync, sync-ack) and pongs: always written
 *         first, even while the link is resyncing, so a pong's t3 stamp is
 *         not delayed behind bulk output;
 *   sess  everything else, written only while the gate is open (the link
 *         is synced), so that after a resync the host sees hello first.
 * The queue is bounded: past OUTQ_SOFT_MAX queued bytes, droppable lines
 * (output, samples, errors) are evicted oldest first and new ones refused;
 * results, done and the rest are always kept.
 */
#ifndef GUESTAGENT_OUTQ_H
#define GUESTAGENT_OUTQ_H

#include <stdbool.h>
#include <stddef.h>

#define OUTQ_SOFT_MAX (4u * 1024 * 1024)
/* Past this even kept lines are too many: the host is not reading at all. */
#define OUTQ_HARD_MAX (16u * 1024 * 1024)

enum outq_class {
	OUTQ_PRIO, /* the prio lane */
	OUTQ_KEEP, /* sess lane, never dropped */
	OUTQ_DROP, /* sess lane, dropped first when the queue is full */
};

struct outq_ent;

struct outq {
	struct outq_ent *prio_head, *prio_tail;
	struct outq_ent *sess_head, *sess_tail;
	struct outq_ent *cur; /* the head being written, or NULL */
	size_t cur_off;	      /* bytes of cur already written */
	size_t bytes;	      /* queued in both lanes */
	size_t dropped;	      /* lines dropped since outq_take_dropped */
	bool gate_open;	      /* the sess lane may be written */
};

void outq_init(struct outq *q);
void outq_free(struct outq *q);

/* Appends one or more whole lines.  0, or -ENOBUFS when a droppable line
 * was refused because the queue is full. */
int outq_push(struct outq *q, enum outq_class cls, const void *data, size_t len);
/* Puts lines in front of their lane (a resync's 0xFF + sync, a re-announced
 * hello); never in front of a line already partly written. */
void outq_push_front(struct outq *q, enum outq_class cls, const void *data, size_t len);

/* Our next bytes start with 0xFF, which makes the peer drop any partial
 * line: a partly written head will be written again from its start. */
void outq_rewind(struct outq *q);
/* A new connection: prio lines belonged to the old one. */
void outq_drop_prio(struct outq *q);

/* Something can be written now. */
bool outq_writable(const struct outq *q);
/* Writes what it can without blocking.  0 (maybe with lines left; wait for
 * POLLOUT), or -errno from write(2) other than EAGAIN. */
int outq_flush(struct outq *q, int fd);

size_t outq_take_dropped(struct outq *q);

#endif
