// SPDX-License-Identifier: GPL-2.0-or-later
/* The service's experiments on disk (see queue.h for the layout). */
#include "queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

#define QUEUE_JSON_MAX (64 * 1024)
#define QUEUE_ID_MAX 999999999999ULL

static const char *const state_names[] = {
	[QUEUE_QUEUED] = "queued",
	[QUEUE_RUNNING] = "running",
	[QUEUE_DONE] = "done",
	[QUEUE_FAILED] = "failed",
	[QUEUE_INTERRUPTED] = "interrupted",
	[QUEUE_CANCELLED] = "cancelled",
};

const char *queue_state_name(enum queue_state s)
{
	return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

static int state_parse(const char *s, enum queue_state *out)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (!strcmp(s, state_names[i])) {
			*out = (enum queue_state)i;
			return 0;
		}
	return -EBADMSG;
}

void queue_path(const char *root, uint64_t id, const char *file, char *buf, size_t size)
{
	snprintf(buf, size, "%s/exp/%" PRIu64 "%s%s", root, id, file ? "/" : "", file ? file : "");
}

json_object *queue_exp_json(const struct queue_exp *e)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_int64((int64_t)e->id));
	json_object_object_add(o, "user", json_object_new_string(e->user));
	json_object_object_add(o, "uid", json_object_new_int64(e->uid));
	json_object_object_add(o, "gid", json_object_new_int64(e->gid));
	json_object_object_add(o, "run_name", json_object_new_string(e->run_name));
	json_object_object_add(o, "results", json_object_new_string(e->results));
	json_object_object_add(o, "lenient", json_object_new_boolean(e->lenient));
	json_object_object_add(o, "state", json_object_new_string(queue_state_name(e->state)));
	json_object_object_add(o, "exit_code", json_object_new_int(e->exit_code));
	json_object_object_add(o, "submitted", json_object_new_int64(e->submitted));
	json_object_object_add(o, "started", json_object_new_int64(e->started));
	json_object_object_add(o, "ended", json_object_new_int64(e->ended));
	json_object_object_add(o, "pid", json_object_new_int(e->pid));
	json_object_object_add(o, "pid_start", json_object_new_int64((int64_t)e->pid_start));
	json_object_object_add(o, "reason", json_object_new_string(e->reason));
	return o;
}

static int get_int(json_object *o, const char *key, int64_t min, int64_t max, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -EBADMSG;
	int64_t x = json_object_get_int64(v);
	if (x < min || x > max)
		return -EBADMSG;
	*out = x;
	return 0;
}

static int get_str(json_object *o, const char *key, char *dst, size_t size)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= size)
		return -EBADMSG;
	memcpy(dst, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
	return 0;
}

int queue_load_one(const char *path, struct queue_exp *e)
{
	char *text;
	size_t len;
	int r = fileio_read_all(path, QUEUE_JSON_MAX, &text, &len);
	if (r < 0)
		return r;
	json_object *o = json_tokener_parse(text);
	free(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EBADMSG;
	}
	int64_t id, uid, gid, code, sub, st, end, pid, pstart;
	char state[32];
	memset(e, 0, sizeof(*e));
	r = get_int(o, "id", 1, (int64_t)QUEUE_ID_MAX, &id);
	if (!r)
		r = get_int(o, "uid", 0, UINT32_MAX, &uid);
	if (!r)
		r = get_int(o, "gid", 0, UINT32_MAX, &gid);
	if (!r)
		r = get_int(o, "exit_code", -1, 255, &code);
	if (!r)
		r = get_int(o, "submitted", 0, INT64_MAX, &sub);
	if (!r)
		r = get_int(o, "started", 0, INT64_MAX, &st);
	if (!r)
		r = get_int(o, "ended", 0, INT64_MAX, &end);
	if (!r)
		r = get_int(o, "pid", 0, INT32_MAX, &pid);
	if (!r)
		r = get_int(o, "pid_start", 0, INT64_MAX, &pstart);
	if (!r)
		r = get_str(o, "user", e->user, sizeof(e->user));
	if (!r)
		r = get_str(o, "run_name", e->run_name, sizeof(e->run_name));
	if (!r)
		r = get_str(o, "results", e->results, sizeof(e->results));
	if (!r)
		r = get_str(o, "reason", e->reason, sizeof(e->reason));
	if (!r)
		r = get_str(o, "state", state, sizeof(state));
	/* absent in a queue written before it existed: not lenient */
	json_object *lenient = NULL;
	if (!r && json_object_object_get_ex(o, "lenient", &lenient))
		r = json_object_is_type(lenient, json_type_boolean) ? 0 : -EBADMSG;
	if (!r && lenient)
		e->lenient = json_object_get_boolean(lenient);
	if (!r)
		r = state_parse(state, &e->state);
	json_object_put(o);
	if (r < 0 || !proto_name_valid(e->run_name) || e->results[0] != '/')
		return -EBADMSG;
	e->id = (uint64_t)id;
	e->uid = (uint32_t)uid;
	e->gid = (uint32_t)gid;
	e->exit_code = (int)code;
	e->submitted = sub;
	e->started = st;
	e->ended = end;
	e->pid = (int32_t)pid;
	e->pid_start = (uint64_t)pstart;
	return 0;
}

int queue_save(const char *root, const struct queue_exp *e)
{
	char path[PATH_MAX];
	queue_path(root, e->id, "experiment.json", path, sizeof(path));
	json_object *o = queue_exp_json(e);
	size_t len;
	const char *s = json_object_to_json_string_length(o,
							  JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_NOSLASHESCAPE,
							  &len);
	char *text = xasprintf("%s\n", s);
	int r = fileio_write_atomic(path, text, len + 1);
	free(text);
	json_object_put(o);
	return r;
}

static int next_id(const char *root, uint64_t *id)
{
	char path[PATH_MAX], *text = NULL, buf[32];
	size_t len;
	uint64_t next = 1;

	snprintf(path, sizeof(path), "%s/next-id", root);
	int r = fileio_read_all(path, 64, &text, &len);
	if (r == 0) {
		char *end;
		unsigned long long v = strtoull(text, &end, 10);
		if (end != text && v >= 1 && v < QUEUE_ID_MAX)
			next = v;
		free(text);
	} else if (r != -ENOENT) {
		return r;
	}
	/* never an id whose folder exists (a next-id lost with a disk) */
	for (;; next++) {
		struct stat st;
		char dir[PATH_MAX];
		queue_path(root, next, NULL, dir, sizeof(dir));
		if (stat(dir, &st) < 0)
			break;
	}
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", next + 1);
	r = fileio_write_atomic(path, buf, (size_t)n);
	if (r < 0)
		return r;
	*id = next;
	return 0;
}

static int write_new(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	int r = fileio_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int queue_create(const char *root, struct queue_exp *e, const char *hconf, const char *gconf,
		 const struct config_files *files, const char *hname, const char *gname)
{
	char dir[PATH_MAX], path[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/exp", root);
	int r = fileio_mkdir_p(dir, 0750);
	if (r < 0)
		return r;
	if ((r = next_id(root, &e->id)) < 0)
		return r;
	if (!e->run_name[0]) {
		/* a timestamp sorts, and the id keeps two from one second apart */
		time_t now = time(NULL);
		struct tm tm;
		char stamp[32];
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		snprintf(e->run_name, sizeof(e->run_name), "%s-%" PRIu64, stamp, e->id);
	}
	queue_path(root, e->id, NULL, dir, sizeof(dir));
	if (mkdir(dir, 0750) < 0)
		return -errno;
	queue_path(root, e->id, "h.conf", path, sizeof(path));
	if ((r = write_new(path, hconf)) < 0)
		goto fail;
	queue_path(root, e->id, "g.conf", path, sizeof(path));
	if ((r = write_new(path, gconf)) < 0)
		goto fail;
	queue_path(root, e->id, "files.json", path, sizeof(path));
	json_object *o = json_object_new_object(), *fo = json_object_new_object();
	json_object_object_add(o, "host", json_object_new_string(hname));
	json_object_object_add(o, "guest", json_object_new_string(gname));
	for (size_t i = 0; i < config_files_count(files); i++) {
		const char *name = config_files_name(files, i);
		json_object_object_add(fo, name, json_object_new_string(config_files_get(files, name)));
	}
	json_object_object_add(o, "files", fo);
	r = write_new(path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (r < 0)
		goto fail;
	queue_path(root, e->id, "hostd.log", path, sizeof(path));
	if ((r = write_new(path, "")) < 0)
		goto fail;
	if ((r = queue_save(root, e)) < 0)
		goto fail;
	return 0;
fail:
	queue_remove(root, e->id);
	return r;
}

int queue_remove(const char *root, uint64_t id)
{
	static const char *const files[] = { "experiment.json",
					     "h.conf",
					     "g.conf",
					     "files.json",
					     "hostd.log",
					     "status.json",
					     "status.json.tmp",
					     "experiment.json.tmp",
					     NULL };
	char path[PATH_MAX];
	/* experiment.json first: from then on it is gone for a load */
	for (size_t i = 0; files[i]; i++) {
		queue_path(root, id, files[i], path, sizeof(path));
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	}
	queue_path(root, id, NULL, path, sizeof(path));
	return rmdir(path) < 0 ? -errno : 0;
}

int queue_files_load(const char *path, struct config_files **out, char **hname, char **gname)
{
	char *text;
	size_t len;
	/* what a submit may carry, with room for the JSON around it */
	int r = fileio_read_all(path, 2 * CTL_LINE_MAX, &text, &len);
	if (r < 0)
		return r;
	json_object *o = json_tokener_parse(text), *fo, *h, *g;
	struct config_files *f = NULL;
	free(text);
	r = -EBADMSG;
	if (!o || !json_object_object_get_ex(o, "files", &fo) ||
	    !json_object_is_type(fo, json_type_object) ||
	    !json_object_object_get_ex(o, "host", &h) || !json_object_is_type(h, json_type_string) ||
	    !json_object_object_get_ex(o, "guest", &g) || !json_object_is_type(g, json_type_string))
		goto out;
	f = config_files_new();
	json_object_object_foreach(fo, name, v)
	{
		if (!json_object_is_type(v, json_type_string) ||
		    config_files_add(f, name, json_object_get_string(v)) < 0)
			goto out;
	}
	*hname = xstrdup(json_object_get_string(h));
	*gname = xstrdup(json_object_get_string(g));
	*out = f;
	f = NULL;
	r = 0;
out:
	config_files_free(f);
	json_object_put(o);
	return r;
}

static int cmp_id(const void *a, const void *b)
{
	const struct queue_exp *x = *(struct queue_exp *const *)a, *y = *(struct queue_exp *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

int queue_load_all(const char *root, struct queue_exp ***out, size_t *n,
		   void (*bad)(void *ctx, const char *path, int err), void *ctx)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/exp", root);
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[PATH_MAX + 300];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s/experiment.json", dir, de->d_name);
		if (stat(path, &st) < 0 && errno == ENOENT)
			continue; /* a submission that did not finish being made */
		struct queue_exp *e = xmalloc(sizeof(*e));
		int r = queue_load_one(path, e);
		char idname[32];
		snprintf(idname, sizeof(idname), "%" PRIu64, e->id);
		if (r == 0 && strcmp(idname, de->d_name))
			r = -EBADMSG; /* the folder's name is its id */
		if (r < 0) {
			bad(ctx, path, r);
			free(e);
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = e;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_id);
	return 0;
}
