// SPDX-License-Identifier: GPL-2.0-or-later
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "proto.h"
#include "xalloc.h"

enum item_kind { ITEM_SAMPLE, ITEM_BARRIER, ITEM_OUTPUT, ITEM_MANIFEST, ITEM_MONITOR };

/* Monitor files kept open by the writer; the least recently used is
 * closed past this (a run has a handful of files per node). */
#define RESULTS_MONITOR_FDS 64

struct monitor_fd {
	char *rel; /* nodes/<node>/monitors/<file>; NULL: free slot */
	int fd;
	bool dirty; /* written in this batch: to be synced */
	uint64_t used;
};

struct item {
	struct item *next;
	enum item_kind kind;
	char *rel; /* ITEM_OUTPUT: nodes/<node>/step-<k>.out; ITEM_MONITOR: its file */
	char *data;
	size_t len;
};

struct results {
	char *path;
	/* the folder the run folder is in, opened once; the run folder below
	 * it, and what it was when made: a run folder moved or replaced under
	 * us fails the next write (folder_check) */
	int parentfd;
	char *name;
	dev_t dev;
	ino_t ino;
	gid_t group; /* (gid_t)-1, or the submitter's: the group of our folders */
	int dirfd;
	int samples_fd, barriers_fd;
	/* the last raw output file, kept open: outputs come in bursts */
	int output_fd;
	char *output_rel;
	/* the writer's monitor files */
	struct monitor_fd mfd[RESULTS_MONITOR_FDS];
	uint64_t mfd_clock;
	size_t monitor_queued; /* bytes of ITEM_MONITOR in the queue (under lock) */
	results_tee_fn tee;    /* the loop's: lines also sent elsewhere */
	void *tee_data;

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct item *head, **tail;
	struct item *manifest; /* the manifest waiting in the queue, if any */
	bool busy, stopping;
	int error;
	char error_what[160];
};

/* Opens rel (below dirfd) for appending without following a symlink in any
 * of its components: O_NOFOLLOW alone guards only the last, and a symlink
 * planted at nodes/<node> must not send a guest's output elsewhere. */
static int open_append(int dirfd, const char *rel)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	int dir = dirfd, fd, err;
	char *name = buf, *slash;
	while ((slash = strchr(name, '/'))) {
		*slash = '\0';
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = -errno;
		if (dir != dirfd)
			close(dir);
		if (fd < 0)
			return err;
		dir = fd;
		name = slash + 1;
	}
	/* O_NONBLOCK: a FIFO put in the way must not hang the writer */
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		    0640);
	err = -errno;
	if (dir != dirfd)
		close(dir);
	if (fd < 0)
		return err;
	/* only a file of ours: a hard link someone made in a folder of theirs
	 * (a submitter's monitors/) to another file is not appended to */
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* -ESTALE when the run folder is no longer where it was made: moved, or a
 * folder (or link) of someone else's put in its place. */
static int folder_check(const struct results *r)
{
	struct stat st;
	if (fstatat(r->parentfd, r->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -ESTALE;
	return st.st_dev == r->dev && st.st_ino == r->ino ? 0 : -ESTALE;
}

#define FOLDER_REPLACED "(the run folder was moved or replaced during the run: not written)"

static void item_free(struct item *it)
{
	free(it->rel);
	free(it->data);
	free(it);
}

/* ---- the writer thread ------------------------------------------------ */

static void note_error(struct results *r, int err, const char *what)
{
	pthread_mutex_lock(&r->lock);
	if (!r->error) {
		r->error = err;
		snprintf(r->error_what, sizeof(r->error_what), "%s", what);
	}
	pthread_mutex_unlock(&r->lock);
}

static int output_fd(struct results *r, const char *rel)
{
	if (r->output_fd >= 0 && strcmp(r->output_rel, rel) == 0)
		return r->output_fd;
	if (r->output_fd >= 0) {
		fdatasync(r->output_fd);
		close(r->output_fd);
	}
	free(r->output_rel);
	r->output_rel = xstrdup(rel);
	r->output_fd = open_append(r->dirfd, rel);
	return r->output_fd;
}

static void monitor_fd_close(struct results *r, struct monitor_fd *m)
{
	if (m->dirty && fdatasync(m->fd) < 0)
		note_error(r, -errno, m->rel);
	close(m->fd);
	free(m->rel);
	memset(m, 0, sizeof(*m));
}

/* The open file of rel, opened (and the least recently used one closed)
 * when needed; -errno when it cannot be opened. */
static struct monitor_fd *monitor_fd(struct results *r, const char *rel, int *err)
{
	struct monitor_fd *free_slot = NULL, *lru = NULL;

	for (size_t i = 0; i < RESULTS_MONITOR_FDS; i++) {
		struct monitor_fd *m = &r->mfd[i];
		if (!m->rel) {
			free_slot = free_slot ? free_slot : m;
			continue;
		}
		if (!strcmp(m->rel, rel)) {
			m->used = ++r->mfd_clock;
			return m;
		}
		if (!lru || m->used < lru->used)
			lru = m;
	}
	if (!free_slot) {
		monitor_fd_close(r, lru);
		free_slot = lru;
	}
	int fd = open_append(r->dirfd, rel);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	free_slot->rel = xstrdup(rel);
	free_slot->fd = fd;
	free_slot->used = ++r->mfd_clock;
	return free_slot;
}

static void write_monitor(struct results *r, const struct item *it, size_t *bytes)
{
	int e = 0;
	struct monitor_fd *m = monitor_fd(r, it->rel, &e);

	*bytes += it->len;
	if (!m) {
		note_error(r, e, it->rel);
		return;
	}
	e = fileio_write_all(m->fd, it->data, it->len);
	if (e < 0)
		note_error(r, e, it->rel);
	m->dirty = true;
}

static void sync_monitors(struct results *r)
{
	for (size_t i = 0; i < RESULTS_MONITOR_FDS; i++) {
		struct monitor_fd *m = &r->mfd[i];
		if (!m->rel || !m->dirty)
			continue;
		if (fdatasync(m->fd) < 0)
			note_error(r, -errno, m->rel);
		m->dirty = false;
	}
}

static void write_manifest(struct results *r, const struct item *it)
{
	int e = folder_check(r);
	if (e < 0) {
		note_error(r, e, "manifest.json " FOLDER_REPLACED);
		return;
	}
	e = fileio_write_atomic_at(r->dirfd, "manifest.json", it->data, it->len, 0640);
	if (e == -EEXIST)
		note_error(r, e, "manifest.json.tmp (something was put there: not written through)");
	else if (e < 0)
		note_error(r, e, "manifest.json");
}

/* Writes one batch, then syncs each file it touched once.  Returns the
 * bytes of monitor data it took off the queue. */
static size_t write_batch(struct results *r, struct item *batch)
{
	bool sync_samples = false, sync_barriers = false, sync_output = false;
	struct item *manifest = NULL;
	size_t monitor_bytes = 0;

	for (struct item *it = batch; it; it = it->next) {
		int fd = -1, e;
		switch (it->kind) {
		case ITEM_MONITOR: write_monitor(r, it, &monitor_bytes); continue;
		case ITEM_SAMPLE:
			fd = r->samples_fd;
			sync_samples = true;
			break;
		case ITEM_BARRIER:
			fd = r->barriers_fd;
			sync_barriers = true;
			break;
		case ITEM_OUTPUT:
			fd = output_fd(r, it->rel);
			sync_output = true;
			break;
		case ITEM_MANIFEST:
			manifest = it; /* only the newest counts */
			continue;
		}
		if (fd < 0) {
			note_error(r, fd, it->kind == ITEM_OUTPUT ? it->rel : "an NDJSON file");
			continue;
		}
		e = fileio_write_all(fd, it->data, it->len);
		if (e < 0)
			note_error(r, e,
				   it->kind == ITEM_SAMPLE    ? "samples.ndjson"
				   : it->kind == ITEM_BARRIER ? "barriers.ndjson"
							      : it->rel);
	}
	if (sync_samples && fdatasync(r->samples_fd) < 0)
		note_error(r, -errno, "samples.ndjson");
	if (sync_barriers && fdatasync(r->barriers_fd) < 0)
		note_error(r, -errno, "barriers.ndjson");
	if (sync_output && r->output_fd >= 0 && fdatasync(r->output_fd) < 0)
		note_error(r, -errno, r->output_rel);
	sync_monitors(r);
	/* after the records it describes, so it never claims more than is there */
	if (manifest)
		write_manifest(r, manifest);
	return monitor_bytes;
}

static void *writer_main(void *arg)
{
	struct results *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->head && !r->stopping)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->head && r->stopping)
			break;
		struct item *batch = r->head;
		r->head = NULL;
		r->tail = &r->head;
		r->manifest = NULL;
		r->busy = true;
		pthread_mutex_unlock(&r->lock);

		size_t monitor_bytes = write_batch(r, batch);
		while (batch) {
			struct item *next = batch->next;
			item_free(batch);
			batch = next;
		}

		pthread_mutex_lock(&r->lock);
		r->monitor_queued -= monitor_bytes;
		r->busy = false;
		pthread_cond_broadcast(&r->idle);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void enqueue(struct results *r, enum item_kind kind, char *rel, char *data, size_t len)
{
	struct item *it = xcalloc(1, sizeof(*it));
	it->kind = kind;
	it->rel = rel;
	it->data = data;
	it->len = len;
	pthread_mutex_lock(&r->lock);
	*r->tail = it;
	r->tail = &it->next;
	if (kind == ITEM_MANIFEST)
		r->manifest = it;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

/* ---- the loop's side -------------------------------------------------- */

/* A folder we made below dirfd, of the submitter's group (service mode):
 * they may go through it to their work folders; it stays ours to write. */
static int make_dir(const struct results *r, int dirfd, const char *rel)
{
	if (mkdirat(dirfd, rel, 0750) < 0)
		return -errno;
	if (r->group != (gid_t)-1 && fchownat(dirfd, rel, (uid_t)-1, r->group, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

int results_open(const char *dir, const char *run, struct results **out)
{
	return results_open_as(dir, run, (gid_t)-1, out);
}

int results_open_as(const char *dir, const char *run, gid_t group, struct results **out)
{
	int r;
	struct stat st;

	if (!proto_name_valid(run))
		return -EINVAL;
	/* another user's run: their folder exists (the service checked), and
	 * nothing is made on a path of theirs with our rights */
	r = group == (gid_t)-1 ? fileio_mkdir_p(dir, 0755) : 0;
	if (r < 0)
		return r;

	struct results *res = xcalloc(1, sizeof(*res));
	res->parentfd = res->dirfd = res->samples_fd = res->barriers_fd = res->output_fd = -1;
	res->group = group;
	res->tail = &res->head;
	pthread_mutex_init(&res->lock, NULL);
	pthread_cond_init(&res->wake, NULL);
	pthread_cond_init(&res->idle, NULL);
	res->path = xasprintf("%s/%s", dir, run);
	res->name = xstrdup(run);
	/* the results folder is opened once, by its path; everything below
	 * it goes through that fd, and never through a link */
	res->parentfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (res->parentfd < 0 || (r = make_dir(res, res->parentfd, run)) < 0) {
		r = r < 0 ? r : -errno;
		goto fail;
	}
	res->dirfd = openat(res->parentfd, run, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (res->dirfd < 0 || fstat(res->dirfd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	res->dev = st.st_dev;
	res->ino = st.st_ino;
	if ((r = make_dir(res, res->dirfd, "config")) < 0 ||
	    (r = make_dir(res, res->dirfd, "nodes")) < 0)
		goto fail;
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
	r = -pthread_create(&res->thread, NULL, writer_main, res);
	if (r < 0)
		goto fail;
	res->thread_started = true;
	*out = res;
	return 0;
fail:
	results_close(res);
	return r;
}

void results_flush(struct results *r)
{
	pthread_mutex_lock(&r->lock);
	while (r->head || r->busy)
		pthread_cond_wait(&r->idle, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

int results_close(struct results *r)
{
	if (!r)
		return 0;
	if (r->thread_started) {
		pthread_mutex_lock(&r->lock);
		r->stopping = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
	}
	int err = r->error;
	if (r->samples_fd >= 0)
		close(r->samples_fd);
	if (r->barriers_fd >= 0)
		close(r->barriers_fd);
	if (r->output_fd >= 0)
		close(r->output_fd);
	for (size_t i = 0; i < RESULTS_MONITOR_FDS; i++)
		if (r->mfd[i].rel)
			monitor_fd_close(r, &r->mfd[i]);
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->parentfd >= 0)
		close(r->parentfd);
	free(r->name);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	pthread_cond_destroy(&r->idle);
	free(r->output_rel);
	free(r->path);
	free(r);
	return err;
}

/* Deep enough for nodes/<node>/work/ and what a step makes in it. */
#define RESULTS_DISCARD_DEPTH 32

int results_discard(struct results *r)
{
	if (!r)
		return 0;
	int parent = dup(r->parentfd), e = 0;
	char *name = xstrdup(r->name);
	struct stat st;
	if (parent < 0)
		e = -errno;
	else if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		e = -errno;
	else if (st.st_dev != r->dev || st.st_ino != r->ino)
		e = -ESTALE;
	results_close(r);
	if (e == 0)
		e = fileio_remove_tree_at(parent, name, RESULTS_DISCARD_DEPTH);
	if (parent >= 0)
		close(parent);
	free(name);
	return e;
}

int results_error(struct results *r, const char **what)
{
	pthread_mutex_lock(&r->lock);
	int e = r->error;
	if (what)
		*what = r->error_what;
	pthread_mutex_unlock(&r->lock);
	return e;
}

const char *results_path(const struct results *r)
{
	return r->path;
}

int results_save_config(struct results *r, const char *text, size_t len, const char *as_name)
{
	if (!proto_name_valid(as_name))
		return -EINVAL;
	char *rel = xasprintf("config/%s", as_name);
	int fd = results_open_file(r, rel, O_WRONLY | O_CREAT | O_EXCL, 0640), ret = fd;
	free(rel);
	if (fd < 0)
		return fd;
	ret = fileio_write_all(fd, text, len);
	/* a copy kept as a record of a run must survive a crash like the rest */
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int results_open_file(struct results *r, const char *rel, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	int e = folder_check(r);
	if (e < 0)
		return e;
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	int dir = r->dirfd, fd;
	char *name = buf, *slash;
	while ((slash = strchr(name, '/'))) {
		*slash = '\0';
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = -errno;
		if (dir != r->dirfd)
			close(dir);
		if (fd < 0)
			return e;
		dir = fd;
		name = slash + 1;
	}
	fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	e = -errno;
	if (dir != r->dirfd)
		close(dir);
	return fd < 0 ? e : fd;
}

int results_give_dir(struct results *r, const char *rel, uid_t uid, gid_t gid)
{
	int fd = results_open_file(r, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	int e = fchown(fd, uid, gid) < 0 ? -errno : 0;
	close(fd);
	return e;
}

int results_share_dir(struct results *r, const char *rel, gid_t gid)
{
	int fd = results_open_file(r, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	int e = fchown(fd, (uid_t)-1, gid) < 0 || fchmod(fd, 01770) < 0 ? -errno : 0;
	close(fd);
	return e;
}

int results_work_dir(struct results *r, const char *node, uid_t uid, gid_t gid, char **path_out)
{
	int e = results_node_dir(r, node, NULL);
	if (e < 0)
		return e;
	char *rel = xasprintf("nodes/%s/work", node);
	e = folder_check(r);
	if (e == 0 && mkdirat(r->dirfd, rel, 0750) < 0 && errno != EEXIST)
		e = -errno;
	/* the submitter's: what their agent runs may write there, and
	 * nowhere else in the run folder */
	if (e == 0 && uid != (uid_t)-1)
		e = results_give_dir(r, rel, uid, gid);
	if (e == 0 && path_out)
		*path_out = xasprintf("%s/%s", r->path, rel);
	free(rel);
	return e;
}

int results_node_dir(struct results *r, const char *node, char **path_out)
{
	/* Names come from guests: refuse anything that could leave nodes/. */
	if (!proto_name_valid(node))
		return -EINVAL;
	char *rel = xasprintf("nodes/%s", node);
	int ret = make_dir(r, r->dirfd, rel);
	if (ret == -EEXIST)
		ret = 0;
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
	if (!proto_name_valid(node))
		return -EINVAL;
	char *copy = xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	enqueue(r, ITEM_OUTPUT, xasprintf("nodes/%s/step-%u.out", node, step), copy, len);
	return 0;
}

int results_monitor_dir(struct results *r, const char *node)
{
	int ret = results_node_dir(r, node, NULL);
	if (ret < 0)
		return ret;
	char *rel = xasprintf("nodes/%s/monitors", node);
	struct stat st;
	ret = make_dir(r, r->dirfd, rel);
	if (ret == -EEXIST)
		ret = 0;
	if (ret == 0 && fstatat(r->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	else if (ret == 0 && !S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	free(rel);
	return ret;
}

int results_append_monitor(struct results *r, const char *node, const char *file, const char *data,
			   size_t len)
{
	if (!proto_name_valid(node) || !proto_name_valid(file))
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	bool full = r->monitor_queued + len > RESULTS_MONITOR_QUEUED_MAX;
	if (!full)
		r->monitor_queued += len;
	pthread_mutex_unlock(&r->lock);
	if (full)
		return -ENOBUFS;
	char *copy = xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	enqueue(r, ITEM_MONITOR, xasprintf("nodes/%s/monitors/%s", node, file), copy, len);
	return 0;
}

static char *to_line(json_object *o, int flags, size_t *len)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, flags, &n);
	char *line = xmalloc(n + 1);
	memcpy(line, s, n);
	line[n] = '\n';
	*len = n + 1;
	return line;
}

void results_set_tee(struct results *r, results_tee_fn fn, void *data)
{
	r->tee = fn;
	r->tee_data = data;
}

void results_append_sample(struct results *r, json_object *record)
{
	size_t len;
	char *line = to_line(record, JSON_C_TO_STRING_PLAIN, &len);
	if (r->tee)
		r->tee(r->tee_data, RESULTS_LINE_SAMPLE, line, len);
	enqueue(r, ITEM_SAMPLE, NULL, line, len);
}

void results_append_barrier(struct results *r, json_object *record)
{
	size_t len;
	char *line = to_line(record, JSON_C_TO_STRING_PLAIN, &len);
	if (r->tee)
		r->tee(r->tee_data, RESULTS_LINE_BARRIER, line, len);
	enqueue(r, ITEM_BARRIER, NULL, line, len);
}

void results_write_manifest(struct results *r, json_object *manifest)
{
	size_t len;
	char *text = to_line(manifest, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
	/* A manifest still queued is replaced, not queued behind: at the start
	 * of a large run every hello rewrites it, and a slow disk would
	 * otherwise hold hundreds of copies. */
	pthread_mutex_lock(&r->lock);
	if (r->manifest) {
		free(r->manifest->data);
		r->manifest->data = text;
		r->manifest->len = len;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	pthread_mutex_unlock(&r->lock);
	enqueue(r, ITEM_MANIFEST, NULL, text, len);
}
