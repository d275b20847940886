// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chaos-agent: a fault injector that hostd starts in place of a local
 * guest's agent (hostd --agent chaos-agent).  It starts the real agent on a
 * unix socket of its own, forwards every line both ways, and at the steps a
 * fault plan names (or at random, from a seed and a rate) breaks the
 * channel the way a guest can: it cuts the connection and lets the agent
 * reconnect and resync, writes garbage, 0xFF inside a line, a line over
 * 64 KiB, valid messages for a stale step, a hello naming another node, a
 * flood of messages, dribbles the agent's bytes one by one, stops the agent
 * past the barrier deadline (or briefly), or kills it, or (only from a plan,
 * "NODE STEP go drop-go") drops the host's first go for STEP, as a channel
 * that loses a message would (issue 19).  Each fault is
 * appended to a log, one JSON line: node, kind, the step the node was in.
 *
 *   chaos-agent --channel-fd 3 --node NODE --work-dir DIR [agent options]
 *
 * Environment:
 *   LOCKSTEP_CHAOS_AGENT    the real agent (default: ../guestagent/guestagent
 *                           beside this binary)
 *   LOCKSTEP_CHAOS_PLAN     lines "NODE STEP go|ready KIND [DELAY_MS]": at the
 *                           go of STEP (plus the delay) or when the agent says
 *                           ready for STEP
 *   LOCKSTEP_CHAOS_SEED, LOCKSTEP_CHAOS_RATE  without a plan: at each go, a
 *                           fault of a random kind with probability RATE
 *   LOCKSTEP_CHAOS_LOG      where faults are logged (default: stderr)
 *   LOCKSTEP_CHAOS_STOP_MS  how long "stop" stops the agent (default 3000)
 *
 * Test and bench tool: it trusts its own environment, not its peers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

#define LINE_CAP (PROTO_LINE_MAX + 2)
#define FLOOD_LINES 100000
#define SLOW_MS 300
#define PAUSE_MS 50
#define PLAN_MAX 4096

enum phase { PH_GO, PH_READY };

struct fault {
	uint32_t step;
	enum phase phase;
	char kind[24];
	int delay_ms;
	bool fired;
	int64_t at_ns; /* armed: fire then */
};

/* Bytes waiting for a file descriptor. */
struct obuf {
	char *data;
	size_t head, len, cap;
};

/* Bytes read from one side, cut into lines. */
struct lines {
	char *buf;
	size_t len;
	bool overflow; /* past LINE_CAP: forwarded raw until the newline */
};

static struct {
	const char *node;
	int hfd, lfd, cfd;
	pid_t agent;
	char sock[108];
	struct obuf to_host, to_agent;
	struct lines from_agent, from_host;
	bool reconnecting, ff_mid_pending;
	int64_t slow_until, cont_at, last_slow_write;
	uint32_t go_step, done_step, nsteps;
	bool bye_seen;
	struct proto_msg hello; /* the agent's own, for an impostor */
	bool have_hello;
	struct fault faults[PLAN_MAX];
	size_t nfaults;
	double rate;
	uint64_t rng;
	int log_fd;
	int stop_ms;
	struct proto_decoder dec;
	struct proto_msg last; /* the line just decoded */
	bool last_ok;
} cx = { .hfd = -1, .lfd = -1, .cfd = -1, .log_fd = 2, .stop_ms = 3000 };

static const char *const all_kinds[] = {
	"reconnect", "garbage", "ff-mid", "long-line", "stale-ready", "stale-go", "stale-result",
	"impostor",  "slow",	"pause",  "stop",      "kill",	      "flood",
};
#define NKINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rnd(void)
{
	/* xorshift64*: the same faults for the same seed and node */
	cx.rng ^= cx.rng >> 12;
	cx.rng ^= cx.rng << 25;
	cx.rng ^= cx.rng >> 27;
	return cx.rng * 2685821657736338717ULL;
}

static void die(const char *what)
{
	fprintf(stderr, "chaos-agent %s: %s: %s\n", cx.node ? cx.node : "?", what, strerror(errno));
	if (cx.sock[0])
		unlink(cx.sock);
	if (cx.agent > 0)
		kill(cx.agent, SIGKILL);
	exit(1);
}

/* ---- buffers ---------------------------------------------------------- */

static void ob_put(struct obuf *b, const void *p, size_t n)
{
	if (b->head && b->head == b->len)
		b->head = b->len = 0;
	if (b->len + n > b->cap) {
		if (b->head) {
			memmove(b->data, b->data + b->head, b->len - b->head);
			b->len -= b->head;
			b->head = 0;
		}
		while (b->len + n > b->cap)
			b->cap = b->cap ? b->cap * 2 : 65536;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			die("out of memory");
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static size_t ob_left(const struct obuf *b)
{
	return b->len - b->head;
}

static void ob_clear(struct obuf *b)
{
	b->head = b->len = 0;
}

/* Writes what the fd takes now; -1 when the fd is gone. */
static int ob_write(struct obuf *b, int fd, size_t max)
{
	size_t n = ob_left(b) < max ? ob_left(b) : max;
	if (!n)
		return 0;
	ssize_t w = write(fd, b->data + b->head, n);
	if (w < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	b->head += (size_t)w;
	return 0;
}

/* ---- the fault log ---------------------------------------------------- */

/* The step hostd thinks the node is in: the one it was released into, or
 * once that is done the barrier it waits at (hostd names faults the same
 * way). */
static uint32_t cur_step(void)
{
	uint32_t s = cx.go_step ? cx.go_step : 1;
	if (cx.go_step && cx.done_step >= cx.go_step)
		s = cx.go_step + 1;
	if (cx.nsteps && s > cx.nsteps)
		s = cx.nsteps;
	return s;
}

static void log_fault(const char *kind, const char *detail)
{
	char line[512];
	int n = snprintf(line, sizeof(line),
			 "{\"node\":\"%s\",\"kind\":\"%s\",\"step\":%" PRIu32
			 ",\"mono_ns\":%" PRId64 ",\"detail\":\"%s\"}\n",
			 cx.node, kind, cur_step(), now_ns(), detail);
	/* one write with O_APPEND: lines of all nodes stay whole */
	if (write(cx.log_fd, line, (size_t)n) < 0)
		perror("chaos-agent: fault log");
}

/* ---- decoding one line ------------------------------------------------- */

static void on_decoded(void *ctx, enum proto_event ev, struct proto_msg *m, int err, const char *detail)
{
	(void)ctx;
	(void)err;
	(void)detail;
	if (ev != PROTO_EV_MSG)
		return;
	proto_msg_clear(&cx.last);
	cx.last = *m;
	memset(m, 0, sizeof(*m)); /* ours now */
	cx.last_ok = true;
}

static bool decode(const char *line, size_t len)
{
	cx.last_ok = false;
	proto_decoder_reset(&cx.dec);
	proto_decoder_feed(&cx.dec, line, len, on_decoded, NULL);
	return cx.last_ok;
}

static void put_msg(struct obuf *b, const struct proto_msg *m)
{
	struct proto_buf pb = { 0 };
	if (proto_encode(m, &pb) == 0)
		ob_put(b, pb.data, pb.len);
	proto_buf_free(&pb);
}

/* ---- the faults -------------------------------------------------------- */

static void fire(struct fault *f)
{
	const char *k = f->kind;
	struct proto_msg m = { .version = PROTO_VERSION };

	f->fired = true;
	if (cx.bye_seen || cx.agent <= 0)
		return;
	if (!strcmp(k, "kill")) {
		log_fault(k, "SIGKILL to the agent");
		kill(cx.agent, SIGKILL);
	} else if (!strcmp(k, "stop") || !strcmp(k, "pause")) {
		int ms = !strcmp(k, "stop") ? cx.stop_ms : PAUSE_MS;
		char d[64];
		snprintf(d, sizeof(d), "SIGSTOP for %d ms", ms);
		log_fault(k, d);
		kill(cx.agent, SIGSTOP);
		cx.cont_at = now_ns() + (int64_t)ms * 1000000;
	} else if (!strcmp(k, "reconnect")) {
		if (cx.cfd < 0 || cx.reconnecting)
			return;
		log_fault(k, "the agent's connection cut; it reconnects");
		/* half-close: the agent sees EOF, and what it wrote before is
		 * still read and forwarded */
		shutdown(cx.cfd, SHUT_WR);
		cx.reconnecting = true;
	} else if (!strcmp(k, "garbage")) {
		static const char *const junk[] = {
			"{]]not json\n",
			"\x01\x02 binary\n",
			"{\"v\":1,\"type\":\"ready\",\"step\":\"three\"}\n",
			"\xc3\x28 bad utf-8\n",
			"{\"v\":1,\"type\":\"frobnicate\"}\n",
		};
		const char *j = junk[rnd() % (sizeof(junk) / sizeof(junk[0]))];
		log_fault(k, "a line that is not a message");
		ob_put(&cx.to_host, j, strlen(j));
	} else if (!strcmp(k, "long-line")) {
		static char big[PROTO_LINE_MAX + 4096];
		memset(big, 'x', sizeof(big));
		memcpy(big, "{\"v\":1,\"type\":\"output\",\"step\":1,\"data\":\"", 40);
		memcpy(big + sizeof(big) - 3, "\"}\n", 3);
		log_fault(k, "a line of 69632 bytes");
		ob_put(&cx.to_host, big, sizeof(big));
	} else if (!strcmp(k, "ff-mid")) {
		cx.ff_mid_pending = true; /* logged when the agent's next line passes */
	} else if (!strcmp(k, "slow")) {
		log_fault(k, "the agent's bytes one per millisecond for 300 ms");
		cx.slow_until = now_ns() + SLOW_MS * 1000000LL;
	} else if (!strcmp(k, "stale-ready") && cx.go_step >= 1) {
		log_fault(k, "ready for the step already released");
		m.type = PROTO_READY;
		m.u.ready.step = cx.go_step;
		put_msg(&cx.to_host, &m);
	} else if (!strcmp(k, "stale-go") && cx.go_step >= 2 && cx.cfd >= 0) {
		log_fault(k, "go for the previous step, to the agent");
		m.type = PROTO_GO;
		m.u.go.step = cx.go_step - 1;
		put_msg(&cx.to_agent, &m);
	} else if (!strcmp(k, "stale-result") && cx.go_step >= 2) {
		log_fault(k, "a result for the previous step");
		m.type = PROTO_RESULT;
		m.u.result.step = cx.go_step - 1;
		snprintf(m.u.result.metric, sizeof(m.u.result.metric), "chaos");
		m.u.result.value = 1;
		put_msg(&cx.to_host, &m);
	} else if (!strcmp(k, "impostor") && cx.have_hello) {
		m = cx.hello;
		snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s",
			 strcmp(cx.node, "guest-1") ? "guest-1" : "guest-2");
		char d[128];
		snprintf(d, sizeof(d), "a hello saying it is %s", m.u.hello.node);
		log_fault(k, d);
		put_msg(&cx.to_host, &m);
	} else if (!strcmp(k, "flood")) {
		static const char pong[] =
			"{\"v\":1,\"type\":\"pong\",\"seq\":0,\"t1\":0,\"t2\":0,\"t3\":0}\n";
		log_fault(k, "100000 pongs at once");
		for (int i = 0; i < FLOOD_LINES; i++)
			ob_put(&cx.to_host, pong, sizeof(pong) - 1);
	}
}

static void arm(enum phase ph, uint32_t step)
{
	for (size_t i = 0; i < cx.nfaults; i++) {
		struct fault *f = &cx.faults[i];
		if (!f->fired && !f->at_ns && f->phase == ph && f->step == step)
			f->at_ns = now_ns() + (int64_t)f->delay_ms * 1000000;
	}
	/* without a plan: a fault of any kind at random */
	if (ph == PH_GO && cx.rate > 0 && cx.nfaults < PLAN_MAX &&
	    (double)(rnd() >> 11) / 9007199254740992.0 < cx.rate) {
		struct fault *f = &cx.faults[cx.nfaults++];
		memset(f, 0, sizeof(*f));
		f->step = step;
		snprintf(f->kind, sizeof(f->kind), "%s", all_kinds[rnd() % NKINDS]);
		f->delay_ms = (int)(rnd() % 20);
		f->at_ns = now_ns() + (int64_t)f->delay_ms * 1000000;
	}
}

static int64_t fire_due(void)
{
	int64_t next = INT64_MAX, now = now_ns();
	for (size_t i = 0; i < cx.nfaults; i++) {
		struct fault *f = &cx.faults[i];
		if (f->fired || !f->at_ns)
			continue;
		if (f->at_ns <= now)
			fire(f);
		else if (f->at_ns < next)
			next = f->at_ns;
	}
	return next;
}

static void load_plan(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[256], node[PROTO_NAME_MAX], ph[16], kind[24];
	if (!fp)
		die(path);
	while (fgets(line, sizeof(line), fp) && cx.nfaults < PLAN_MAX) {
		struct fault f = { 0 };
		unsigned step;
		int n = sscanf(line, "%63s %u %15s %23s %d", node, &step, ph, kind, &f.delay_ms);
		if (n < 4 || line[0] == '#' || strcmp(node, cx.node))
			continue;
		f.step = step;
		f.phase = !strcmp(ph, "ready") ? PH_READY : PH_GO;
		snprintf(f.kind, sizeof(f.kind), "%s", kind);
		cx.faults[cx.nfaults++] = f;
	}
	fclose(fp);
}

/* ---- forwarding -------------------------------------------------------- */

static void agent_line(const char *line, size_t len)
{
	bool ok = decode(line, len);
	if (ok && cx.last.type == PROTO_HELLO) {
		cx.hello = cx.last;
		cx.have_hello = true;
	} else if (ok && cx.last.type == PROTO_DONE) {
		cx.done_step = cx.last.u.done.step;
	}
	if (cx.ff_mid_pending && len > 2) {
		/* half a line, the reset byte, then the line again from its start:
		 * what an agent that restarts its side in mid write sends */
		cx.ff_mid_pending = false;
		log_fault("ff-mid", "0xFF in the middle of a line, then the line again");
		ob_put(&cx.to_host, line, len / 2);
		ob_put(&cx.to_host, "\xff", 1);
	}
	ob_put(&cx.to_host, line, len);
	if (ok && cx.last.type == PROTO_READY)
		arm(PH_READY, cx.last.u.ready.step);
}

/* A planned drop-go for this step: the go is not passed on (once). */
static bool drop_go(uint32_t step)
{
	for (size_t i = 0; i < cx.nfaults; i++) {
		struct fault *f = &cx.faults[i];
		if (!f->fired && f->step == step && !strcmp(f->kind, "drop-go")) {
			f->fired = true;
			log_fault(f->kind, "the host's go not passed on to the agent");
			return true;
		}
	}
	return false;
}

static void host_line(const char *line, size_t len)
{
	bool ok = decode(line, len);
	if (ok && cx.last.type == PROTO_GO) {
		cx.go_step = cx.last.u.go.step;
		if (drop_go(cx.go_step))
			return;
	}
	if (ok && cx.last.type == PROTO_PLAN) {
		/* a long plan comes in parts: the last index seen is the count */
		uint32_t n = cx.last.u.plan.nsteps;
		if (n && cx.last.u.plan.steps[n - 1].index > cx.nsteps)
			cx.nsteps = cx.last.u.plan.steps[n - 1].index;
	} else if (ok && cx.last.type == PROTO_GO) {
		cx.go_step = cx.last.u.go.step;
	} else if (ok && cx.last.type == PROTO_BYE) {
		cx.bye_seen = true;
	}
	/* what the host sends while the agent is away is lost, as on a
	 * virtio-serial port nobody holds open */
	if (cx.cfd >= 0 && !cx.reconnecting)
		ob_put(&cx.to_agent, line, len);
	if (ok && cx.last.type == PROTO_GO)
		arm(PH_GO, cx.last.u.go.step);
}

/* Cuts bytes into lines; 0xFF drops a partial line and passes as it is. */
static void feed(struct lines *l, const char *p, size_t n, void (*on_line)(const char *, size_t),
		 struct obuf *raw, bool raw_ok)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == PROTO_RESET_BYTE) {
			l->len = 0;
			l->overflow = false;
			if (raw_ok)
				ob_put(raw, "\xff", 1);
			continue;
		}
		if (l->overflow) {
			if (raw_ok)
				ob_put(raw, p + i, 1);
			if (c == '\n')
				l->overflow = false;
			continue;
		}
		l->buf[l->len++] = (char)c;
		if (c == '\n') {
			on_line(l->buf, l->len);
			l->len = 0;
		} else if (l->len == LINE_CAP) {
			if (raw_ok)
				ob_put(raw, l->buf, l->len);
			l->len = 0;
			l->overflow = true;
		}
	}
}

/* ---- processes --------------------------------------------------------- */

static pid_t start_agent(const char *path, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		die("out of memory");
	args[0] = (char *)path;
	for (int i = 1; i < argc; i++) {
		args[i] = argv[i];
		if (!strcmp(argv[i], "--channel-fd") && i + 1 < argc) {
			args[i] = "--channel";
			args[++i] = cx.sock;
		}
	}
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* hostd SIGKILLs us when it gives up on the node: the agent goes too */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(path, args);
		fprintf(stderr, "chaos-agent: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	free(args);
	return pid;
}

/* The agent is gone: hand on what it said, then leave as it left, so that
 * hostd names the same exit. */
static void agent_exited(int status)
{
	char buf[65536];
	ssize_t n;
	if (cx.cfd >= 0) {
		while ((n = read(cx.cfd, buf, sizeof(buf))) > 0)
			feed(&cx.from_agent, buf, (size_t)n, agent_line, &cx.to_host, true);
	}
	int fl = fcntl(cx.hfd, F_GETFL);
	fcntl(cx.hfd, F_SETFL, fl & ~O_NONBLOCK);
	while (ob_left(&cx.to_host) && ob_write(&cx.to_host, cx.hfd, SIZE_MAX) == 0)
		;
	unlink(cx.sock);
	close(cx.hfd);
	if (WIFSIGNALED(status)) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, WTERMSIG(status));
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(WTERMSIG(status));
	}
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

static void host_gone(void)
{
	kill(cx.agent, SIGKILL);
	waitpid(cx.agent, NULL, 0);
	unlink(cx.sock);
	exit(0);
}

/* ---- the loop ---------------------------------------------------------- */

static int listen_on(const char *work_dir)
{
	if (snprintf(cx.sock, sizeof(cx.sock), "%s/../chaos.sock", work_dir) >= (int)sizeof(cx.sock))
		snprintf(cx.sock, sizeof(cx.sock), "/tmp/lockstep-chaos-%d.sock", (int)getpid());
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, cx.sock, strlen(cx.sock) + 1);
	unlink(cx.sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
		die(cx.sock);
	return fd;
}

static void setup(int argc, char **argv)
{
	const char *work = ".";
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--channel-fd"))
			cx.hfd = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--node"))
			cx.node = argv[i + 1];
		else if (!strcmp(argv[i], "--work-dir"))
			work = argv[i + 1];
	}
	if (cx.hfd < 0 || !cx.node) {
		fprintf(stderr, "usage: chaos-agent --channel-fd FD --node NODE --work-dir DIR ...\n");
		exit(2);
	}
	const char *e;
	if ((e = getenv("LOCKSTEP_CHAOS_LOG")) && *e) {
		cx.log_fd = open(e, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (cx.log_fd < 0)
			die(e);
	}
	if ((e = getenv("LOCKSTEP_CHAOS_STOP_MS")))
		cx.stop_ms = atoi(e);
	if ((e = getenv("LOCKSTEP_CHAOS_PLAN")) && *e)
		load_plan(e);
	if ((e = getenv("LOCKSTEP_CHAOS_RATE")))
		cx.rate = atof(e);
	uint64_t seed = (e = getenv("LOCKSTEP_CHAOS_SEED")) ? strtoull(e, NULL, 0) : 1;
	cx.rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (const char *c = cx.node; *c; c++)
		cx.rng = (cx.rng ^ (unsigned char)*c) * 1099511628211ULL;
	if (!cx.rng)
		cx.rng = 1;
	cx.from_agent.buf = malloc(LINE_CAP);
	cx.from_host.buf = malloc(LINE_CAP);
	if (!cx.from_agent.buf || !cx.from_host.buf)
		die("out of memory");
	proto_decoder_init(&cx.dec);
	fcntl(cx.hfd, F_SETFD, FD_CLOEXEC);
	fcntl(cx.hfd, F_SETFL, fcntl(cx.hfd, F_GETFL) | O_NONBLOCK);
	cx.lfd = listen_on(work);
}

static char agent_path_buf[PATH_MAX];

static const char *real_agent(void)
{
	const char *e = getenv("LOCKSTEP_CHAOS_AGENT");
	if (e && *e)
		return e;
	ssize_t n = readlink("/proc/self/exe", agent_path_buf, sizeof(agent_path_buf) - 40);
	if (n <= 0)
		return "guestagent";
	agent_path_buf[n] = '\0';
	char *slash = strrchr(agent_path_buf, '/');
	strcpy(slash ? slash + 1 : agent_path_buf, "../guestagent/guestagent");
	return agent_path_buf;
}

static int poll_timeout(void)
{
	int64_t next = fire_due(), now = now_ns();
	if (cx.cont_at && cx.cont_at < next)
		next = cx.cont_at;
	if (now < cx.slow_until && ob_left(&cx.to_host))
		next = cx.last_slow_write + 1000000;
	if (next == INT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now) / 1000000 + 1);
}

static void step_io(struct pollfd *pf, int sfd)
{
	char buf[65536];
	ssize_t n;
	int64_t now = now_ns();

	if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
		n = read(cx.hfd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			host_gone();
		if (n > 0)
			feed(&cx.from_host, buf, (size_t)n, host_line, &cx.to_agent,
			     cx.cfd >= 0 && !cx.reconnecting);
	}
	if (now < cx.slow_until) {
		if (now - cx.last_slow_write >= 1000000) {
			if (ob_write(&cx.to_host, cx.hfd, 1) < 0)
				host_gone();
			cx.last_slow_write = now;
		}
	} else if (ob_write(&cx.to_host, cx.hfd, SIZE_MAX) < 0) {
		host_gone();
	}
	if (cx.cfd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
		n = read(cx.cfd, buf, sizeof(buf));
		if (n > 0) {
			feed(&cx.from_agent, buf, (size_t)n, agent_line, &cx.to_host, true);
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* the agent let go (after a cut, or dying): it says 0xFF
			 * and sync when it is back */
			close(cx.cfd);
			cx.cfd = -1;
			cx.reconnecting = false;
			ob_clear(&cx.to_agent);
			cx.from_agent.len = 0;
			cx.from_agent.overflow = false;
		}
	} else if (cx.cfd < 0 && (pf[1].revents & POLLIN)) {
		cx.cfd = accept4(cx.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	}
	if (cx.cfd >= 0 && ob_write(&cx.to_agent, cx.cfd, SIZE_MAX) < 0)
		ob_clear(&cx.to_agent); /* the read side will see it go */
	if (cx.cont_at && now_ns() >= cx.cont_at) {
		kill(cx.agent, SIGCONT);
		cx.cont_at = 0;
	}
	if (pf[2].revents & POLLIN) {
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		int status;
		if (waitpid(cx.agent, &status, WNOHANG) == cx.agent)
			agent_exited(status);
	}
}

int main(int argc, char **argv)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	if (sfd < 0)
		die("signalfd");
	setup(argc, argv);
	cx.agent = start_agent(real_agent(), argc, argv);

	for (;;) {
		struct pollfd pf[3] = {
			{ .fd = cx.hfd, .events = POLLIN },
			{ .fd = cx.cfd >= 0 ? cx.cfd : cx.lfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		if (ob_left(&cx.to_host) && now_ns() >= cx.slow_until)
			pf[0].events |= POLLOUT;
		if (cx.cfd >= 0 && ob_left(&cx.to_agent))
			pf[1].events |= POLLOUT;
		if (poll(pf, 3, poll_timeout()) < 0 && errno != EINTR)
			die("poll");
		step_io(pf, sfd);
	}
}
