// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outq.h"
#include "xalloc.h"

struct outq_ent {
	struct outq_ent *next;
	enum outq_class cls;
	size_t len;
	char data[];
};

void outq_init(struct outq *q)
{
	memset(q, 0, sizeof(*q));
}

static void outq_free_list(struct outq_ent *e)
{
	while (e) {
		struct outq_ent *next = e->next;

		free(e);
		e = next;
	}
}

void outq_free(struct outq *q)
{
	outq_free_list(q->prio_head);
	outq_free_list(q->sess_head);
	outq_init(q);
}

static struct outq_ent *outq_ent_new(enum outq_class cls, const void *data, size_t len)
{
	struct outq_ent *e = xmalloc(sizeof(*e) + len);

	e->next = NULL;
	e->cls = cls;
	e->len = len;
	memcpy(e->data, data, len);
	return e;
}

/* Evicts droppable lines, oldest first, until the queue fits in limit. */
static void outq_evict(struct outq *q, size_t limit)
{
	struct outq_ent **pp = &q->sess_head, *prev = NULL;

	while (*pp && q->bytes > limit) {
		struct outq_ent *e = *pp;

		if (e->cls != OUTQ_DROP || e == q->cur) {
			prev = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (q->sess_tail == e)
			q->sess_tail = prev;
		q->bytes -= e->len;
		q->dropped++;
		free(e);
	}
}

int outq_push(struct outq *q, enum outq_class cls, const void *data, size_t len)
{
	struct outq_ent *e;

	if (q->bytes + len > OUTQ_SOFT_MAX) {
		outq_evict(q, len < OUTQ_SOFT_MAX ? OUTQ_SOFT_MAX - len : 0);
		if (cls == OUTQ_DROP && q->bytes + len > OUTQ_SOFT_MAX) {
			q->dropped++;
			return -ENOBUFS;
		}
	}
	e = outq_ent_new(cls, data, len);
	if (cls == OUTQ_PRIO) {
		if (q->prio_tail)
			q->prio_tail->next = e;
		else
			q->prio_head = e;
		q->prio_tail = e;
	} else {
		if (q->sess_tail)
			q->sess_tail->next = e;
		else
			q->sess_head = e;
		q->sess_tail = e;
	}
	q->bytes += len;
	return 0;
}

void outq_push_front(struct outq *q, enum outq_class cls, const void *data, size_t len)
{
	struct outq_ent *e = outq_ent_new(cls, data, len);
	struct outq_ent **head = cls == OUTQ_PRIO ? &q->prio_head : &q->sess_head;
	struct outq_ent **tail = cls == OUTQ_PRIO ? &q->prio_tail : &q->sess_tail;

	if (*head && *head == q->cur) {
		/* Behind the line on the wire, which must be finished first. */
		e->next = (*head)->next;
		(*head)->next = e;
		if (*tail == *head)
			*tail = e;
	} else {
		e->next = *head;
		*head = e;
		if (!*tail)
			*tail = e;
	}
	q->bytes += len;
}

void outq_rewind(struct outq *q)
{
	q->cur = NULL;
	q->cur_off = 0;
}

void outq_drop_prio(struct outq *q)
{
	if (q->cur && q->cur == q->prio_head)
		outq_rewind(q);
	for (struct outq_ent *e = q->prio_head; e; e = e->next)
		q->bytes -= e->len;
	outq_free_list(q->prio_head);
	q->prio_head = q->prio_tail = NULL;
}

/* The line to write next: the one on the wire, then prio, then sess. */
static struct outq_ent *outq_next(const struct outq *q)
{
	if (q->cur)
		return q->cur;
	if (q->prio_head)
		return q->prio_head;
	if (q->gate_open)
		return q->sess_head;
	return NULL;
}

bool outq_writable(const struct outq *q)
{
	return outq_next(q) != NULL;
}

static void outq_pop(struct outq *q, struct outq_ent *e)
{
	struct outq_ent **head = e == q->prio_head ? &q->prio_head : &q->sess_head;
	struct outq_ent **tail = e == q->prio_head ? &q->prio_tail : &q->sess_tail;

	*head = e->next;
	if (!*head)
		*tail = NULL;
	q->bytes -= e->len;
	free(e);
	outq_rewind(q);
}

int outq_flush(struct outq *q, int fd)
{
	struct outq_ent *e;

	while ((e = outq_next(q))) {
		ssize_t n = write(fd, e->data + q->cur_off, e->len - q->cur_off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* ENOBUFS: the kernel short of buffer memory for a
			 * moment (libuv takes it for EAGAIN too); leaving on it
			 * would drop a working channel with a started or done
			 * in this queue */
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				return 0;
			return -errno;
		}
		q->cur_off += (size_t)n;
		if (q->cur_off == e->len)
			outq_pop(q, e);
		else
			q->cur = e;
	}
	return 0;
}

size_t outq_take_dropped(struct outq *q)
{
	size_t n = q->dropped;

	q->dropped = 0;
	return n;
}
