/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small file helpers.  All return 0 or a negative errno and never log. */
#ifndef LOCKSTEP_FILEIO_H
#define LOCKSTEP_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* write(2) until done, retrying on EINTR */
int fileio_write_all(int fd, const void *buf, size_t len);
/* mkdir -p with mode for every component it creates */
int fileio_mkdir_p(const char *path, mode_t mode);
/* Reads a whole file of at most max bytes into a new NUL-terminated buffer. */
int fileio_read_all(const char *path, size_t max, char **out, size_t *len);
/* Copies src to dst (created 0644, truncated) and fsyncs dst; by path: not
 * for folders another user can write into */
int fileio_copy(const char *src, const char *dst);
/* Writes data to path atomically: path.tmp, fsync, rename, fsync the folder.
 * For private folders (state, queue): a path.tmp left there (a crash) is
 * removed first, never written through. */
int fileio_write_atomic(const char *path, const void *data, size_t len);
/* The same below a folder opened once: name (no '/') is written through
 * name.tmp, created with O_EXCL|O_NOFOLLOW and mode; anything at name.tmp
 * (a planted link) fails it with -EEXIST and is left alone. */
int fileio_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode);
/* Appends one record with a single write(2), then fdatasync, so that a
 * record that was acknowledged survives a crash of the writer. */
int fileio_append_sync(int fd, const void *data, size_t len);
/* rm -r of name below the folder at, never following a link (a link is removed,
 * not what it points to); at most depth folders deep (-ELOOP beyond). */
int fileio_remove_tree_at(int at, const char *name, unsigned depth);

#endif
