/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "proto.h"
#include "xalloc.h"

struct results {
	char *path;
	int dirfd;
	int samples_fd, barriers_fd;
	/* the last node output file, kept open: outputs arrive in bursts */
	int output_fd;
	char output_node[PROTO_NAME_MAX];
	uint32_t output_step;
};

static int open_append(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	return fd < 0 ? -errno : fd;
}

int results_open(const char *dir, const char *run, struct results **out)
{
	int r;

	if (!proto_name_valid(run))
		return -EINVAL;
	r = fileio_mkdir_p(dir, 0755);
	if (r < 0)
		return r;

	struct results *res = xcalloc(1, sizeof(*res));
	res->dirfd = res->samples_fd = res->barriers_fd = res->output_fd = -1;
	res->path = xasprintf("%s/%s", dir, run);
	if (mkdir(res->path, 0755) < 0) {
		r = -errno;
		goto fail;
	}
	res->dirfd = open(res->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (res->dirfd < 0 || mkdirat(res->dirfd, "config", 0755) < 0 ||
	    mkdirat(res->dirfd, "nodes", 0755) < 0) {
		r = -errno;
		goto fail;
	}
	res->samples_fd = open_append(res->dirfd, "samples.ndjson");
	if (res->samples_fd < 0) {
		r = res->samples_fd;
		goto fail;
	}
	res->barriers_fd = open_append(res->dirfd, "barriers.ndjson");
	if (res->barriers_fd < 0) {
		r = res->barriers_fd;
		goto fail;
	}
	*out = res;
	return 0;
fail:
	results_close(res);
	return r;
}

void results_close(struct results *r)
{
	if (!r)
		return;
	if (r->samples_fd >= 0)
		close(r->samples_fd);
	if (r->barriers_fd >= 0)
		close(r->barriers_fd);
	if (r->output_fd >= 0)
		close(r->output_fd);
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->path);
	free(r);
}

const char *results_path(const struct results *r)
{
	return r->path;
}

int results_save_config(struct results *r, const char *src_path, const char *as_name)
{
	if (!proto_name_valid(as_name))
		return -EINVAL;
	char *dst = xasprintf("%s/config/%s", r->path, as_name);
	int ret = fileio_copy(src_path, dst);
	free(dst);
	return ret;
}

int results_node_dir(struct results *r, const char *node, char **path_out)
{
	/* Names come from guests: refuse anything that could leave nodes/. */
	if (!proto_name_valid(node))
		return -EINVAL;
	char *rel = xasprintf("nodes/%s", node);
	int ret = 0;
	if (mkdirat(r->dirfd, rel, 0755) < 0 && errno != EEXIST)
		ret = -errno;
	if (ret == 0) {
		struct stat st;
		/* an existing entry must be a real folder, never a symlink */
		if (fstatat(r->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			ret = -errno;
		else if (!S_ISDIR(st.st_mode))
			ret = -ENOTDIR;
	}
	free(rel);
	if (ret == 0 && path_out)
		*path_out = xasprintf("%s/nodes/%s", r->path, node);
	return ret;
}

int results_append_output(struct results *r, const char *node, uint32_t step, const char *data,
			  size_t len)
{
	if (r->output_fd < 0 || strcmp(r->output_node, node) != 0 || r->output_step != step) {
		int ret = results_node_dir(r, node, NULL);
		if (ret < 0)
			return ret;
		if (r->output_fd >= 0)
			close(r->output_fd);
		char *rel = xasprintf("nodes/%s/step-%u.out", node, step);
		r->output_fd = open_append(r->dirfd, rel);
		free(rel);
		if (r->output_fd < 0) {
			ret = r->output_fd;
			r->output_fd = -1;
			return ret;
		}
		snprintf(r->output_node, sizeof(r->output_node), "%s", node);
		r->output_step = step;
	}
	return fileio_append_sync(r->output_fd, data, len);
}

static int append_record(int fd, json_object *record)
{
	size_t len;
	const char *s = json_object_to_json_string_length(record, JSON_C_TO_STRING_PLAIN, &len);
	char *line = xmalloc(len + 1);
	memcpy(line, s, len);
	line[len] = '\n';
	int ret = fileio_append_sync(fd, line, len + 1);
	free(line);
	return ret;
}

int results_append_sample(struct results *r, json_object *record)
{
	return append_record(r->samples_fd, record);
}

int results_append_barrier(struct results *r, json_object *record)
{
	return append_record(r->barriers_fd, record);
}

int results_write_manifest(struct results *r, json_object *manifest)
{
	size_t len;
	const char *s = json_object_to_json_string_length(
		manifest, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
	char *path = xasprintf("%s/manifest.json", r->path);
	char *text = xasprintf("%s\n", s);
	int ret = fileio_write_atomic(path, text, len + 1);
	free(text);
	free(path);
	return ret;
}
