// SPDX-License-Identifier: GPL-2.0-or-later
#include "harness.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "uv_errno.h"
#include "xalloc.h"

/* sshd comes up a little after the guest says ready: a refused connection
 * is retried this often until connect_timeout_ms. */
#define HARNESS_RETRY_NS (200 * 1000 * 1000LL)

static int connect_with_retry(struct harness_job *j, struct ssh_push_session **s)
{
	struct ssh_push_target t = {
		.node = j->node,
		.host = j->host,
		.port = j->port,
		.user = j->user,
		.private_key_path = j->private_key_path,
		.expected_hostkey = j->expected_hostkey,
		.known_hosts_path = j->known_hosts_path,
		.timeout_ms = j->timeout_ms,
	};
	int64_t start = clock_mono_ns();
	int64_t deadline = start + (int64_t)j->connect_timeout_ms * 1000000;
	for (;;) {
		int r = ssh_push_connect(&t, s, &j->hostkey, j->error, sizeof(j->error));
		if (r != -ECONNREFUSED || clock_mono_ns() + HARNESS_RETRY_NS > deadline) {
			j->connect_s = (double)(clock_mono_ns() - start) / 1e9;
			return r;
		}
		struct timespec ts = { 0, HARNESS_RETRY_NS };
		nanosleep(&ts, NULL);
	}
}

static void work_cb(uv_work_t *w)
{
	struct harness_job *j = w->data;
	struct ssh_push_session *s = NULL;

	j->result = connect_with_retry(j, &s);
	if (j->result < 0)
		return;

	/* the agent first: the rest is what its command steps run */
	size_t nextra = j->extra_files ? j->nextra_files : 0;
	size_t n = 1 + nextra + (j->shipped_files ? j->nshipped_files : 0);
	struct ssh_push_file *files = xcalloc(n, sizeof(*files));
	files[0] = (struct ssh_push_file){ .name_in_tar = "guestagent",
					   .mode = 0755,
					   .local_path = j->agent_path };
	for (size_t i = 1; i < n; i++)
		files[i] = i <= nextra ? j->extra_files[i - 1] : j->shipped_files[i - 1 - nextra];
	j->result =
		ssh_push_harness(s, j->remote_dir, files, n, &j->stats, j->error, sizeof(j->error));
	free(files);
	char *dir = ssh_push_quote(j->remote_dir);
	if (j->result == 0) {
		/* An agent left by an earlier run would hold the port open. */
		char *kill_old = xasprintf("cd %s && if [ -f agent.pid ]; then kill $(cat agent.pid) "
					   "2>/dev/null; rm -f agent.pid; fi; true",
					   dir);
		char *out = NULL;
		int status = 0;
		j->result = ssh_push_exec(s, kill_old, &out, &status, j->error, sizeof(j->error));
		free(out);
		free(kill_old);
	}
	if (j->result == 0) {
		char *node = ssh_push_quote(j->node);
		char *cmd = xasprintf("./guestagent --node %s --start-rt-priority %d", node,
				      j->start_rt_priority);
		j->result = ssh_push_start_detached(s, j->remote_dir, cmd, "agent.log",
						    &j->agent_pid, j->error, sizeof(j->error));
		free(cmd);
		free(node);
	}
	if (j->result == 0) {
		char *save = xasprintf("echo %ld > %s/agent.pid", j->agent_pid, dir);
		char *out = NULL;
		int status = 0;
		j->result = ssh_push_exec(s, save, &out, &status, j->error, sizeof(j->error));
		free(out);
		free(save);
	}
	free(dir);
	ssh_push_close(s);
}

static void fetch_cb(uv_work_t *w)
{
	struct harness_job *j = w->data;
	struct ssh_push_session *s = NULL;
	char *out = NULL, *dir = ssh_push_quote(j->remote_dir);
	char *cmd = xasprintf("tail -c %d %s/agent.log", HARNESS_LOG_MAX, dir);
	int status = 0, fd;

	j->result = connect_with_retry(j, &s);
	if (j->result == 0)
		j->result = ssh_push_exec(s, cmd, &out, &status, j->error, sizeof(j->error));
	if (j->result == 0 && status != 0)
		j->result = -ENOENT; /* error says what tail said */
	if (j->result == 0) {
		fd = j->log_local_fd;
		size_t len = strlen(out);
		if (fd < 0 || write(fd, out, len) != (ssize_t)len) {
			j->result = -errno;
			snprintf(j->error, sizeof(j->error),
				 "guest %s: cannot write its agent log to "
				 "%s: %s",
				 j->node, j->log_local_path, strerror(errno));
		} else {
			j->log_bytes = len;
		}
	}
	free(out);
	free(cmd);
	free(dir);
	ssh_push_close(s);
}

static void after_cb(uv_work_t *w, int status)
{
	struct harness_job *j = w->data;
	if (status == UV_ECANCELED) {
		j->result = -ECANCELED;
		snprintf(j->error, sizeof(j->error), "guest %s: the harness push was cancelled",
			 j->node);
	}
	j->done(j);
}

int harness_elf_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf64_Ehdr eh;
	int r = -ENOEXEC;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		goto out;
	r = 1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			r = -ENOEXEC;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			r = 0;
			break;
		}
	}
out:
	close(fd);
	return r;
}

int harness_push_start(uv_loop_t *loop, struct harness_job *j)
{
	j->result = 0;
	j->error[0] = '\0';
	j->agent_pid = 0;
	j->work.data = j;
	return errno_from_uv(uv_queue_work(loop, &j->work, work_cb, after_cb));
}

int harness_fetch_log_start(uv_loop_t *loop, struct harness_job *j)
{
	j->result = 0;
	j->error[0] = '\0';
	j->log_bytes = 0;
	j->connect_timeout_ms = j->timeout_ms; /* up already: a refusal is an answer */
	j->work.data = j;
	return errno_from_uv(uv_queue_work(loop, &j->work, fetch_cb, after_cb));
}
