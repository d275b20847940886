// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The floor under hostd's release latency on this machine: one writer
 * writing one go-sized line to each of N unix sockets whose readers are
 * blocked in poll(2), under the same SCHED_FIFO boost hostd uses.  No
 * libuv, no JSON: just the writes and the wake-ups they cause.
 *
 *     wake-limit N [ROUNDS]
 */
#include <poll.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;
	return a < b ? -1 : a > b;
}

static void reader(int fd, int rounds)
{
	char b[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (int r = 0; r < rounds; r++) {
		if (poll(&p, 1, -1) < 0 || read(fd, b, sizeof(b)) <= 0 || write(fd, "r", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	static const char go[] = "{\"v\":1,\"type\":\"go\",\"step\":1}\n";
	if (argc < 2) {
		fprintf(stderr, "usage: wake-limit N [ROUNDS]\n");
		return 1;
	}
	int n = atoi(argv[1]), rounds = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1 || rounds < 1)
		return 1;
	int(*sv)[2] = calloc((size_t)n, sizeof(*sv));
	long long *lat = calloc((size_t)rounds, sizeof(*lat));
	for (int i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) < 0)
			return 1;
		if (fork() == 0)
			reader(sv[i][1], rounds);
	}
	struct sched_param fifo = { .sched_priority = 1 }, other = { .sched_priority = 0 };
	bool boosted = true;
	for (int r = 0; r < rounds; r++) {
		usleep(5000); /* every reader is back in poll() */
		if (sched_setscheduler(0, SCHED_FIFO, &fifo) < 0)
			boosted = false;
		long long a = now_ns();
		for (int i = 0; i < n; i++)
			if (write(sv[i][0], go, sizeof(go) - 1) < 0)
				return 1;
		lat[r] = now_ns() - a;
		sched_setscheduler(0, SCHED_OTHER, &other);
		char c;
		for (int i = 0; i < n; i++)
			if (read(sv[i][0], &c, 1) != 1)
				return 1;
	}
	qsort(lat, (size_t)rounds, sizeof(*lat), cmp_ll);
	printf("N=%d writes to wake all: p50 %.1f us, p99 %.1f us (%.2f us per write)%s\n", n,
	       lat[rounds / 2] / 1e3, lat[rounds * 99 / 100] / 1e3, lat[rounds / 2] / 1e3 / n,
	       boosted ? "" : " [no SCHED_FIFO: not root?]");
	while (wait(NULL) > 0)
		;
	free(lat);
	free(sv);
	return 0;
}
