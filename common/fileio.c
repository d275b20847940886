// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

int fileio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) /* a regular file or pipe never does this; do not spin */
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	/* EEXIST also covers a file in the way; say so instead of failing later. */
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int fileio_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	int r;

	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		r = mkdir_one(buf, mode);
		*p = '/';
		if (r < 0)
			return r;
	}
	return mkdir_one(buf, mode);
}

int fileio_read_all(const char *path, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *buf;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (max > SIZE_MAX / 4) /* so that max + 1 and doubling never wrap */
		max = SIZE_MAX / 4;
	if (cap > max + 1)
		cap = max + 1;
	buf = xmalloc(cap + 1);
	/* Read until EOF rather than trusting st_size: /proc and /sys files say 0. */
	for (;;) {
		ssize_t n;

		if (used == cap) {
			if (cap > max) {
				r = -EFBIG;
				break;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	if (r == 0 && used > max)
		r = -EFBIG;
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[used] = '\0';
	*out = buf;
	if (len)
		*len = used;
	return 0;
}

int fileio_copy(const char *src, const char *dst)
{
	char buf[65536];
	int in, out, r = 0;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		r = fileio_write_all(out, buf, (size_t)n);
		if (r < 0)
			break;
	}
	/* A copy kept as a record of a run must survive a crash like the rest. */
	if (r == 0 && fsync(out) < 0)
		r = -errno;
	if (close(out) < 0 && r == 0)
		r = -errno;
	close(in);
	return r;
}

int fileio_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	int fd, r;

	if (strchr(name, '/'))
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* O_EXCL|O_NOFOLLOW: a file or link planted at the temporary name is
	 * never written through; the write fails instead */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = fileio_write_all(fd, data, len);
	/* The data must be on disk before the rename makes it the file. */
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	/* ... and the rename itself must be on disk before we say it is done. */
	return fsync(dirfd) < 0 ? -errno : 0;
}

int fileio_write_atomic(const char *path, const void *data, size_t len)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 8];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int dfd, r;

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		if ((size_t)(slash - path) >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	if (!*name || strlen(name) > NAME_MAX - 4)
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* A temporary file a crash left behind (these are private folders:
	 * state, queue) goes; unlinking a link never touches its target. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	unlinkat(dfd, tmp, 0);
	r = fileio_write_atomic_at(dfd, name, data, len, 0644);
	close(dfd);
	return r;
}

int fileio_append_sync(int fd, const void *data, size_t len)
{
	ssize_t n;
	int r = 0;

	/* One write(2), so that concurrent appenders never interleave records. */
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* A short write (disk full) would leave half a record: try to finish it. */
	if ((size_t)n < len)
		r = fileio_write_all(fd, (const char *)data + n, len - (size_t)n);
	if (r == 0 && fdatasync(fd) < 0)
		r = -errno;
	return r;
}

int fileio_remove_tree_at(int at, const char *name, unsigned depth)
{
	if (unlinkat(at, name, 0) == 0)
		return 0;
	if (errno != EISDIR && errno != EPERM) /* Linux says EISDIR, POSIX EPERM */
		return errno == ENOENT ? 0 : -errno;
	if (depth == 0)
		return -ELOOP;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = -errno;
		close(fd);
		return e;
	}
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = fileio_remove_tree_at(dirfd(d), de->d_name, depth - 1);
	closedir(d);
	if (r == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}
