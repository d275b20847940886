// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ustar (POSIX.1-1988) writer.  Only what the harness needs: regular files
 * and directories, owned by root, one mtime for the whole archive.
 * Header layout: POSIX "pax" rationale, ustar Interchange Format.
 */
#include "tar_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_LEN 100
#define PREFIX_LEN 155
/* 11 octal digits in the size field */
#define MAX_SIZE ((UINT64_C(1) << 33) - 1)

struct ustar_header {
	char name[100];
	char mode[8];
	char uid[8];
	char gid[8];
	char size[12];
	char mtime[12];
	char chksum[8];
	char typeflag;
	char linkname[100];
	char magic[6];
	char version[2];
	char uname[32];
	char gname[32];
	char devmajor[8];
	char devminor[8];
	char prefix[155];
	char pad[12];
};

_Static_assert(sizeof(struct ustar_header) == TAR_WRITER_BLOCK, "ustar header is one block");

void tar_writer_init(struct tar_writer *tw, tar_writer_sink_fn sink, void *opaque, time_t mtime)
{
	memset(tw, 0, sizeof(*tw));
	tw->sink = sink;
	tw->opaque = opaque;
	tw->mtime = mtime < 0 ? 0 : mtime;
}

static int emit(struct tar_writer *tw, const void *buf, size_t len)
{
	int r;

	if (tw->error)
		return tw->error;
	r = tw->sink(tw->opaque, buf, len);
	if (r < 0) {
		tw->error = r;
		return r;
	}
	tw->bytes += len;
	return 0;
}

int tar_writer_check_name(const char *name)
{
	const char *p = name, *slash;
	size_t len = strlen(name);

	if (len == 0 || name[0] == '/')
		return -EINVAL;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return -EINVAL;
	for (;;) {
		size_t n;

		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!slash)
			break;
		p = slash + 1;
	}
	/* a directory gets one more byte, its trailing slash */
	return len + 1 > NAME_LEN + 1 + PREFIX_LEN ? -ENAMETOOLONG : 0;
}

/* Puts full (already checked) into name, or prefix + '/' + name. */
static int split_name(struct ustar_header *h, const char *full)
{
	size_t len = strlen(full);

	if (len <= NAME_LEN) {
		memcpy(h->name, full, len);
		return 0;
	}
	for (size_t i = 1; i < len - 1 && i <= PREFIX_LEN; i++) {
		if (full[i] != '/' || len - i - 1 > NAME_LEN)
			continue;
		memcpy(h->prefix, full, i);
		memcpy(h->name, full + i + 1, len - i - 1);
		return 0;
	}
	return -ENAMETOOLONG;
}

static int write_header(struct tar_writer *tw, const char *name, int is_dir, unsigned mode, uint64_t size)
{
	struct ustar_header h;
	char full[NAME_LEN + 1 + PREFIX_LEN + 2];
	const unsigned char *b = (const unsigned char *)&h;
	unsigned sum = 0;
	int r;

	if (tw->error)
		return tw->error;
	r = tar_writer_check_name(name);
	if (r < 0)
		return r;
	if (mode & ~07777u)
		return -EINVAL;
	if (size > MAX_SIZE)
		return -EFBIG;
	snprintf(full, sizeof(full), "%s%s", name, is_dir ? "/" : "");

	memset(&h, 0, sizeof(h));
	r = split_name(&h, full);
	if (r < 0)
		return r;
	snprintf(h.mode, sizeof(h.mode), "%07o", mode);
	snprintf(h.uid, sizeof(h.uid), "%07o", 0);
	snprintf(h.gid, sizeof(h.gid), "%07o", 0);
	snprintf(h.size, sizeof(h.size), "%011llo", (unsigned long long)size);
	snprintf(h.mtime, sizeof(h.mtime), "%011llo", (unsigned long long)tw->mtime & 077777777777ull);
	h.typeflag = is_dir ? '5' : '0';
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	memcpy(h.uname, "root", 4);
	memcpy(h.gname, "root", 4);
	snprintf(h.devmajor, sizeof(h.devmajor), "%07o", 0);
	snprintf(h.devminor, sizeof(h.devminor), "%07o", 0);

	/* the checksum is taken with its own field read as spaces */
	memset(h.chksum, ' ', sizeof(h.chksum));
	for (size_t i = 0; i < sizeof(h); i++)
		sum += b[i];
	snprintf(h.chksum, sizeof(h.chksum), "%06o", sum);
	h.chksum[7] = ' ';
	return emit(tw, &h, sizeof(h));
}

static int pad_block(struct tar_writer *tw, uint64_t size)
{
	static const char zeros[TAR_WRITER_BLOCK];
	size_t rest = size % TAR_WRITER_BLOCK;

	return rest ? emit(tw, zeros, TAR_WRITER_BLOCK - rest) : 0;
}

int tar_writer_add_dir(struct tar_writer *tw, const char *name, unsigned mode)
{
	return write_header(tw, name, 1, mode, 0);
}

int tar_writer_add_data(struct tar_writer *tw, const char *name, unsigned mode, const void *data,
			size_t len)
{
	int r = write_header(tw, name, 0, mode, len);

	if (r == 0 && len)
		r = emit(tw, data, len);
	return r ? r : pad_block(tw, len);
}

static int stream_fd(struct tar_writer *tw, int fd, uint64_t size)
{
	char buf[32768];
	uint64_t left = size;

	while (left) {
		size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		ssize_t n = read(fd, buf, want);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank after the header went out */
		r = emit(tw, buf, (size_t)n);
		if (r < 0)
			return r;
		left -= (uint64_t)n;
	}
	return pad_block(tw, size);
}

int tar_writer_add_file(struct tar_writer *tw, const char *name, unsigned mode, const char *path)
{
	struct stat st;
	uint64_t before = tw->bytes;
	int fd, r;

	if (tw->error)
		return tw->error;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
	} else {
		r = write_header(tw, name, 0, mode, (uint64_t)st.st_size);
		if (r == 0)
			r = stream_fd(tw, fd, (uint64_t)st.st_size);
	}
	close(fd);
	/* a member cut short after its header leaves the stream unusable */
	if (r < 0 && !tw->error && tw->bytes != before)
		tw->error = r;
	return r;
}

int tar_writer_finish(struct tar_writer *tw)
{
	static const char zeros[2 * TAR_WRITER_BLOCK];

	return emit(tw, zeros, sizeof(zeros));
}
