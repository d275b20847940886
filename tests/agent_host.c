// SPDX-License-Identifier: GPL-2.0-or-later
/* The fake host of test_agent.c (see agent_host.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_host.h"

char agent_host_bin[512];

static void host_on_event(void *ctx, enum proto_event ev, struct proto_msg *m, int err,
			  const char *detail)
{
	struct host *h = ctx;
	struct hev *e;

	(void)detail;
	if (h->head + h->len == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 16;
		h->evs = realloc(h->evs, h->cap * sizeof(*h->evs));
		ck_assert_ptr_nonnull(h->evs);
	}
	e = &h->evs[h->head + h->len++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	e->err = err;
	if (ev != PROTO_EV_MSG)
		return;
	e->m = *m; /* take what it owns */
	if (m->type == PROTO_PLAN)
		m->u.plan.steps = NULL;
	else if (m->type == PROTO_OUTPUT || m->type == PROTO_MONITOR_OUTPUT)
		m->u.output.data = NULL;
}

void host_mkworkdir(struct host *h)
{
	snprintf(h->dir, sizeof(h->dir), "/tmp/test-agent-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h->dir));
}

/* Starts the agent on one end of a socketpair; extra options follow. */
void host_spawn(struct host *h, const char *const *extra)
{
	host_spawn_sndbuf(h, extra, 0);
}

void host_spawn_sndbuf(struct host *h, const char *const *extra, int sndbuf)
{
	const char *argv[32] = { agent_host_bin, "--channel-fd", "3", "--node", NODE, "--work-dir" };
	int sv[2], n = 6;

	memset(h, 0, sizeof(*h));
	host_mkworkdir(h);
	argv[n++] = h->dir;
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	for (int i = 0; sndbuf > 0 && i < 2; i++)
		ck_assert_msg(setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) == 0,
			      "SO_SNDBUF %d on socketpair end %d: %s", sndbuf, i, strerror(errno));
	h->pid = fork();
	ck_assert_int_ge(h->pid, 0);
	if (h->pid == 0) {
		dup2(sv[1], 3); /* dup2 clears close-on-exec */
		execv(agent_host_bin, (char *const *)argv);
		_exit(127);
	}
	close(sv[1]);
	h->fd = sv[0];
	proto_decoder_init(&h->dec);
}

/* The next event from the agent, reading as needed. */
struct hev host_next(struct host *h)
{
	struct hev e;

	while (!h->len) {
		struct pollfd p = { .fd = h->fd, .events = POLLIN };
		char buf[65536];
		ssize_t n;

		ck_assert_msg(poll(&p, 1, HOST_WAIT_MS) == 1, "no message from the agent in %d ms",
			      HOST_WAIT_MS);
		n = read(h->fd, buf, sizeof(buf));
		ck_assert_msg(n > 0, "the agent closed the channel (read %zd: %s)", n,
			      n < 0 ? strerror(errno) : "eof");
		proto_decoder_feed(&h->dec, buf, (size_t)n, host_on_event, h);
	}
	e = h->evs[h->head++];
	if (!--h->len)
		h->head = 0;
	return e;
}

/* The next message, which must be of type t; *out takes it (or NULL). */
void host_expect(struct host *h, enum proto_type t, struct proto_msg *out)
{
	struct hev e = host_next(h);

	ck_assert_msg(e.ev == PROTO_EV_MSG, "expected %s, got event %d (err %d)",
		      proto_type_name(t), (int)e.ev, e.err);
	ck_assert_msg(e.m.type == t, "expected %s, got %s", proto_type_name(t),
		      proto_type_name(e.m.type));
	if (out)
		*out = e.m;
	else
		proto_msg_clear(&e.m);
}

void host_send(struct host *h, struct proto_msg *m)
{
	struct proto_buf b = { 0 };

	m->version = PROTO_VERSION;
	ck_assert_int_eq(proto_encode(m, &b), 0);
	ck_assert_int_eq(write(h->fd, b.data, b.len), (ssize_t)b.len);
	proto_buf_free(&b);
}

void host_send_raw(struct host *h, const char *s)
{
	ck_assert_int_eq(write(h->fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* 0xFF + sync from the agent; returns its nonce. */
uint64_t host_expect_sync(struct host *h)
{
	struct hev e = host_next(h);
	struct proto_msg m;

	ck_assert_int_eq(e.ev, PROTO_EV_RESET);
	host_expect(h, PROTO_SYNC, &m);
	return m.u.sync.nonce;
}

void host_ack(struct host *h, uint64_t nonce)
{
	struct proto_msg m = { .type = PROTO_SYNC_ACK };

	m.u.sync.nonce = nonce;
	host_send(h, &m);
}

/* Sync, ack, hello: the start of every session. */
void host_handshake(struct host *h, struct proto_msg *hello)
{
	host_ack(h, host_expect_sync(h));
	host_expect(h, PROTO_HELLO, hello);
}

void host_go(struct host *h, uint32_t step, int64_t at_ns)
{
	struct proto_msg m = { .type = PROTO_GO };

	m.u.go.step = step;
	m.u.go.at_ns = at_ns;
	host_send(h, &m);
}

void host_ping(struct host *h, uint64_t seq)
{
	struct proto_msg m = { .type = PROTO_PING };

	m.u.ping.seq = seq;
	m.u.ping.t1 = 12345;
	host_send(h, &m);
}

void host_expect_pong(struct host *h, uint64_t seq)
{
	struct proto_msg m;

	host_expect(h, PROTO_PONG, &m);
	ck_assert_uint_eq(m.u.ping.seq, seq);
	ck_assert_int_eq(m.u.ping.t1, 12345);
	ck_assert_int_gt(m.u.ping.t2, 0);
	ck_assert_int_ge(m.u.ping.t3, m.u.ping.t2);
}

void host_expect_ready(struct host *h, uint32_t step)
{
	struct proto_msg m;

	host_expect(h, PROTO_READY, &m);
	ck_assert_uint_eq(m.u.ready.step, step);
}

/* A plan: each command NULL for a cpu-probe, else a command step. */
void host_plan(struct host *h, const char *node, const char *const *cmds, uint32_t n)
{
	struct proto_msg m;

	host_plan_msg(&m, node, cmds, n);
	host_send(h, &m);
	proto_msg_clear(&m);
}

void host_plan_msg(struct proto_msg *out, const char *node, const char *const *cmds, uint32_t n)
{
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "%s", node);
	m.u.plan.nsteps = n;
	m.u.plan.steps = calloc(n, sizeof(*m.u.plan.steps));
	for (uint32_t i = 0; i < n; i++) {
		struct proto_step *st = &m.u.plan.steps[i];

		st->index = i + 1;
		st->iteration = 1;
		snprintf(st->benchmark, sizeof(st->benchmark), "bench%u", i + 1);
		st->kind = cmds && cmds[i] ? PROTO_STEP_COMMAND : PROTO_STEP_CPU_PROBE;
		st->units = 200000;
		if (cmds && cmds[i])
			ck_assert_int_eq(proto_step_set_command(st, cmds[i]), 0);
	}
	*out = m;
}

/* The agent binary: argv[1], else the build tree's; 0, or -1 said. */
int host_find_agent(int argc, char **argv, const char *test)
{
	const char *build = getenv("LOCKSTEP_BUILD_ROOT");

	if (argc > 1)
		snprintf(agent_host_bin, sizeof(agent_host_bin), "%s", argv[1]);
	else
		snprintf(agent_host_bin, sizeof(agent_host_bin), "%s/guestagent/guestagent",
			 build ? build : ".");
	if (access(agent_host_bin, X_OK) < 0) {
		fprintf(stderr, "%s: no agent at %s: %s\n", test, agent_host_bin, strerror(errno));
		return -1;
	}
	return 0;
}

static int host_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Waits for the agent to exit; returns its wait status. */
int host_wait(struct host *h)
{
	int st;

	ck_assert_int_eq(waitpid(h->pid, &st, 0), h->pid);
	close(h->fd);
	proto_decoder_free(&h->dec);
	for (size_t i = 0; i < h->len; i++)
		proto_msg_clear(&h->evs[h->head + i].m);
	free(h->evs);
	nftw(h->dir, host_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return st;
}

void host_bye(struct host *h)
{
	struct proto_msg m = { .type = PROTO_BYE };
	int st;

	snprintf(m.u.bye.reason, sizeof(m.u.bye.reason), "test over");
	host_send(h, &m);
	st = host_wait(h);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent wait status %#x", st);
}

void host_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

void host_expect_started(struct host *h, uint32_t step, struct step_seen *s)
{
	memset(s, 0, sizeof(*s));
	s->out = calloc(1, 1);
	host_expect(h, PROTO_STARTED, &s->started);
	ck_assert_uint_eq(s->started.u.started.step, step);
}

void host_collect_rest(struct host *h, uint32_t step, struct step_seen *s)
{
	for (;;) {
		struct hev e = host_next(h);
		struct proto_msg *m = &e.m;

		ck_assert_int_eq(e.ev, PROTO_EV_MSG);
		switch (m->type) {
		case PROTO_OUTPUT:
			ck_assert_uint_eq(m->u.output.step, step);
			ck_assert_uint_le(m->u.output.len, PROTO_OUTPUT_MAX);
			s->out = realloc(s->out, s->outlen + m->u.output.len + 1);
			memcpy(s->out + s->outlen, m->u.output.data, m->u.output.len);
			s->outlen += m->u.output.len;
			s->out[s->outlen] = '\0';
			if (m->u.output.len > s->max_chunk)
				s->max_chunk = m->u.output.len;
			proto_msg_clear(m);
			break;
		case PROTO_RESULT:
			ck_assert_uint_eq(m->u.result.step, step);
			ck_assert_int_lt(s->nresults, 4);
			s->results[s->nresults++] = *m;
			break;
		case PROTO_DONE:
			ck_assert_uint_eq(m->u.done.step, step);
			ck_assert_int_ge(m->u.done.mono_ns, s->started.u.started.mono_ns);
			s->done = *m;
			return;
		default: ck_abort_msg("step %u: unexpected %s", step, proto_type_name(m->type));
		}
	}
}

void host_run_step(struct host *h, uint32_t step, struct step_seen *s)
{
	host_go(h, step, 0);
	host_expect_started(h, step, s);
	host_collect_rest(h, step, s);
}

const struct proto_msg *host_seen_result(const struct step_seen *s, const char *metric)
{
	for (int i = 0; i < s->nresults; i++)
		if (!strcmp(s->results[i].u.result.metric, metric))
			return &s->results[i];
	ck_abort_msg("no result '%s'", metric);
	return NULL;
}

/* One command step from plan to done. */
void host_run_command(struct host *h, const char *cmd, struct step_seen *s)
{
	const char *cmds[] = { cmd };

	host_handshake(h, NULL);
	host_plan(h, NODE, cmds, 1);
	host_expect_ready(h, 1);
	host_run_step(h, 1, s);
}

void host_spawn_args(struct host *h, const char *const *args)
{
	const char *argv[16] = { agent_host_bin };
	int n = 1;

	for (; *args; args++)
		argv[n++] = *args;
	h->pid = fork();
	ck_assert_int_ge(h->pid, 0);
	if (h->pid == 0) {
		execv(agent_host_bin, (char *const *)argv);
		_exit(127);
	}
	h->fd = -1;
	proto_decoder_init(&h->dec);
}

void host_write_file(const char *dir, const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

void host_accept(struct host *h, int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	ck_assert_msg(poll(&p, 1, HOST_WAIT_MS) == 1, "the agent did not connect in %d ms",
		      HOST_WAIT_MS);
	h->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(h->fd, 0);
}

int64_t host_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

unsigned long long host_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	/* Fields after the command name, which may hold spaces: state is 3rd. */
	p = strrchr(buf, ')');
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
				&st),
			 2);
	return ut + st;
}

long host_vm_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}
