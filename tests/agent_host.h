/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake host for tests of the real guestagent binary: spawns it on a
 * socketpair (or lets it find a socket), speaks proto to it, and turns what
 * it sends into events the tests assert on.  Every wait is bounded by
 * HOST_WAIT_MS so that a hung agent fails a test instead of hanging it.
 */
#ifndef TESTS_AGENT_HOST_H
#define TESTS_AGENT_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

#define HOST_WAIT_MS 30000 /* liveness bound only */
#define NODE "test-node"

extern char agent_host_bin[512]; /* the agent binary */

struct hev {
	enum proto_event ev;
	struct proto_msg m; /* owned: proto_msg_clear */
	int err;
};

struct host {
	pid_t pid;
	int fd;
	struct proto_decoder dec;
	struct hev *evs;
	size_t head, len, cap;
	char dir[64]; /* work folder and fake trees; removed by host_wait */
};

/* What the agent sent for one step between started and done. */
struct step_seen {
	struct proto_msg started, done;
	struct proto_msg results[4];
	int nresults;
	char *out; /* all output, NUL-terminated; free it */
	size_t outlen, max_chunk;
};

void host_mkworkdir(struct host *h);
/* The agent on a socketpair (--channel-fd), extra options after ours. */
void host_spawn(struct host *h, const char *const *extra);
/* The same with SO_SNDBUF of both ends set to sndbuf (the kernel takes its
 * minimum for a tiny one): short writes and EAGAIN on both sides. */
void host_spawn_sndbuf(struct host *h, const char *const *extra, int sndbuf);
/* The agent with exactly args (NULL-terminated); h->fd stays -1. */
void host_spawn_args(struct host *h, const char *const *args);
/* Accepts the agent's connection on a listening socket. */
void host_accept(struct host *h, int lfd);
/* Waits for the agent to exit, cleans up; returns its wait status. */
int host_wait(struct host *h);
/* Sends bye and asserts the agent exits 0. */
void host_bye(struct host *h);

struct hev host_next(struct host *h);
/* The next event must be a message of type t; *out takes it (or NULL). */
void host_expect(struct host *h, enum proto_type t, struct proto_msg *out);
/* 0xFF + sync; returns the nonce. */
uint64_t host_expect_sync(struct host *h);
void host_expect_pong(struct host *h, uint64_t seq);
void host_expect_ready(struct host *h, uint32_t step);

void host_send(struct host *h, struct proto_msg *m);
void host_send_raw(struct host *h, const char *s);
void host_ack(struct host *h, uint64_t nonce);
/* sync, ack, hello (into *hello, or dropped when NULL) */
void host_handshake(struct host *h, struct proto_msg *hello);
void host_go(struct host *h, uint32_t step, int64_t at_ns);
void host_ping(struct host *h, uint64_t seq);
/* Steps 1..n: cmds[i] NULL (or cmds NULL) for a cpu-probe, else a command. */
void host_plan(struct host *h, const char *node, const char *const *cmds, uint32_t n);
/* The same plan as a message of the caller's (proto_msg_clear it). */
void host_plan_msg(struct proto_msg *out, const char *node, const char *const *cmds, uint32_t n);
/* agent_host_bin from argv[1], else the build tree's agent; 0, or -1 said. */
int host_find_agent(int argc, char **argv, const char *test);

void host_expect_started(struct host *h, uint32_t step, struct step_seen *s);
void host_collect_rest(struct host *h, uint32_t step, struct step_seen *s);
/* go(step), then everything up to done. */
void host_run_step(struct host *h, uint32_t step, struct step_seen *s);
const struct proto_msg *host_seen_result(const struct step_seen *s, const char *metric);
/* Handshake, a one-step plan with cmd, and the step run to done. */
void host_run_command(struct host *h, const char *cmd, struct step_seen *s);

void host_read_line(const char *path, char *buf, size_t len);
void host_write_file(const char *dir, const char *rel, const char *text);
int64_t host_mono_ns(void);
/* utime + stime of a process, in clock ticks; its VmRSS in KiB. */
unsigned long long host_cpu_ticks(pid_t pid);
long host_vm_rss_kib(pid_t pid);

#endif
