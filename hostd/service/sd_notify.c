// SPDX-License-Identifier: GPL-2.0-or-later
/* sd_notify(3) and sd_listen_fds(3), the parts of them hostd uses. */
#include "sd_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SD_LISTEN_FDS_START 3

int sdnotify_send(const char *text)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t plen;

	if (!path || !*path)
		return 0;
	plen = strlen(path);
	/* "/path" or "@abstract" (a leading NUL on the wire) */
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	ssize_t n = sendto(fd, text, strlen(text), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

int sdnotify_listen_fd(int *fd)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	char *end;

	if (!pid_s || !fds_s)
		return 0;
	long pid = strtol(pid_s, &end, 10);
	if (*end || pid != (long)getpid())
		return 0;
	long n = strtol(fds_s, &end, 10);
	if (*end || n < 0)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (n != 1)
		return -EINVAL;
	int type = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(SD_LISTEN_FDS_START, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
		return -EINVAL;
	int flags = fcntl(SD_LISTEN_FDS_START, F_GETFD);
	if (flags < 0 || fcntl(SD_LISTEN_FDS_START, F_SETFD, flags | FD_CLOEXEC) < 0)
		return -errno;
	/* not for the experiments' children, nor a later exec of ours */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	*fd = SD_LISTEN_FDS_START;
	return 1;
}
