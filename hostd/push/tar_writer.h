/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal ustar writer that streams into a callback: regular files and
 * directories, nothing else.  It exists so that the harness goes into a
 * guest as one tar stream over one SSH exec channel (busybox tar on the
 * other side), without a temporary archive on the host.
 *
 * All functions return 0 or a negative errno.  After the first error the
 * writer stays failed and every later call returns that error.
 */
#ifndef LOCKSTEP_TAR_WRITER_H
#define LOCKSTEP_TAR_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TAR_WRITER_BLOCK 512

/* Receives the archive bytes in order; returns 0 or a negative errno. */
typedef int (*tar_writer_sink_fn)(void *opaque, const void *buf, size_t len);

struct tar_writer {
	tar_writer_sink_fn sink;
	void *opaque;
	time_t mtime;	/* stamped on every member */
	uint64_t bytes; /* archive bytes handed to the sink */
	int error;	/* first error, sticky */
};

void tar_writer_init(struct tar_writer *tw, tar_writer_sink_fn sink, void *opaque, time_t mtime);

/*
 * Checks a member name: relative, no "." or ".." component, no empty
 * component, and splittable into ustar's 155-byte prefix and 100-byte
 * name.  Returns 0, -EINVAL or -ENAMETOOLONG.
 */
int tar_writer_check_name(const char *name);

int tar_writer_add_dir(struct tar_writer *tw, const char *name, unsigned mode);
/* A regular file whose content is in memory. */
int tar_writer_add_data(struct tar_writer *tw, const char *name, unsigned mode, const void *data,
			size_t len);
/*
 * A regular file read from path.  The size is taken when the file is
 * opened; a file that shrinks while it is read fails with -EIO rather
 * than sending a member that lies about its size.
 */
int tar_writer_add_file(struct tar_writer *tw, const char *name, unsigned mode, const char *path);
/* The two zero blocks that end an archive. */
int tar_writer_finish(struct tar_writer *tw);

#endif
