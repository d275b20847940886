// SPDX-License-Identifier: GPL-2.0-or-later
#include "local_guest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uv_errno.h"

static void exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
	struct local_guest *g = p->data;
	g->running = false;
	g->exit_status = term_signal ? 128 + term_signal : (int)status;
	uv_close((uv_handle_t *)p, NULL);
	if (g->exited)
		g->exited(g);
}

int local_guest_spawn(uv_loop_t *loop, struct local_guest *g, const char *agent_path,
		      const char *node, const char *work_dir, const char *const *extra, int log_fd,
		      const struct runas *ra, int *host_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;

	char *args[16] = { (char *)agent_path, "--channel-fd",	"3", "--node", (char *)node,
			   "--work-dir",       (char *)work_dir };
	size_t nargs = 7;
	for (size_t i = 0; extra && extra[i] && nargs < 15; i++)
		args[nargs++] = (char *)extra[i];
	args[nargs] = NULL;
	uv_stdio_container_t stdio[4] = {
		{ .flags = UV_IGNORE },
		{ .flags = UV_INHERIT_FD, .data.fd = log_fd },
		{ .flags = UV_INHERIT_FD, .data.fd = log_fd },
		{ .flags = UV_INHERIT_FD, .data.fd = sv[1] },
	};
	uv_process_options_t o = {
		.exit_cb = exit_cb,
		.file = agent_path,
		.args = args,
		.stdio = stdio,
		.stdio_count = 4,
	};
	char **shim;
	runas_wrap(ra, &o, work_dir, &shim);
	g->proc.data = g;
	int r = errno_from_uv(uv_spawn(loop, &g->proc, &o));
	runas_free_args(shim);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		/* libuv wants the handle closed even when uv_spawn failed */
		uv_close((uv_handle_t *)&g->proc, NULL);
		return r;
	}
	g->running = true;
	*host_fd = sv[0];
	return 0;
}

void local_guest_kill(struct local_guest *g, int sig)
{
	if (g->running)
		uv_process_kill(&g->proc, sig);
}
