// SPDX-License-Identifier: GPL-2.0-or-later
/* The service's settings file: SERVICE_GROUP, QUEUE_MAX, USER_QUEUE_MAX,
 * KEEP_FINISHED, RESULTS_ROOT, IDLE_TIMEOUT, STOP_TIMEOUT, HOSTD_BINARY. */
#include "service_settings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void service_settings_default(struct service_settings *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->group, sizeof(s->group), "lockstep");
	s->queue_max = 100;
	s->keep_finished = 500;
	s->user_queue_max = 20;
	s->idle_timeout_ms = 30 * 1000;
	s->stop_timeout_ms = 60 * 1000;
	s->run_timeout_ms = 86400 * 1000;
	snprintf(s->results_root, sizeof(s->results_root), "/var/lib/lockstep/results");
}

static int get_str(const struct config *c, const char *name, char *dst, size_t size,
		   struct config_diag *err)
{
	const char *v = config_get(c, name);
	if (!v)
		return 0;
	if (strlen(v) >= size) {
		const char *file = "";
		int line = 0;
		config_where(c, name, &file, &line);
		snprintf(err->file, sizeof(err->file), "%s", file);
		err->line = line;
		err->column = 0;
		snprintf(err->text, sizeof(err->text), "%s: longer than %zu bytes", name, size - 1);
		return -EINVAL;
	}
	snprintf(dst, size, "%s", v);
	return 0;
}

static int bad_value(const struct config *c, const char *name, const char *what, struct config_diag *err)
{
	const char *file = "";
	int line = 0;
	config_where(c, name, &file, &line);
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->column = 0;
	snprintf(err->text, sizeof(err->text), "%s=%s: %s", name, config_get(c, name), what);
	return -EINVAL;
}

static int get_u32(const struct config *c, const char *name, int64_t min, int64_t max,
		   uint32_t *dst, struct config_diag *err)
{
	int64_t v = *dst;
	int r = config_get_int(c, name, min, max, &v, err);
	if (r < 0)
		return r;
	*dst = (uint32_t)v;
	return 0;
}

/* 0.1 s to a day: under that a client or a hostd could not keep up */
static int get_ms(const struct config *c, const char *name, uint64_t *dst, struct config_diag *err)
{
	double v = (double)*dst / 1000;
	int r = config_get_seconds(c, name, 0.1, 86400, &v, err);
	if (r < 0)
		return r;
	*dst = (uint64_t)(v * 1000 + 0.5);
	return 0;
}

int service_settings_load(const char *path, struct service_settings *out, struct config_diag *err)
{
	static const char *const known[] = { "SERVICE_GROUP",
					     "QUEUE_MAX",
					     "USER_QUEUE_MAX",
					     "KEEP_FINISHED",
					     "RESULTS_ROOT",
					     "IDLE_TIMEOUT",
					     "STOP_TIMEOUT",
					     "HOSTD_BINARY",
					     "SERVICE_HOST_STEPS",
					     "RUN_TIMEOUT",
					     NULL };
	struct service_settings s;
	struct stat st;
	int r;

	service_settings_default(&s);
	memset(err, 0, sizeof(*err));
	if (stat(path, &st) < 0 && errno == ENOENT) {
		*out = s;
		return 1;
	}
	struct config *c = config_new();
	r = config_load_file(c, path, err);
	if (r < 0)
		goto out;
	config_check_known(c, known, NULL);
	if ((r = get_str(c, "SERVICE_GROUP", s.group, sizeof(s.group), err)) < 0 ||
	    (r = get_str(c, "RESULTS_ROOT", s.results_root, sizeof(s.results_root), err)) < 0 ||
	    (r = get_str(c, "HOSTD_BINARY", s.hostd_binary, sizeof(s.hostd_binary), err)) < 0 ||
	    (r = get_str(c, "SERVICE_HOST_STEPS", s.host_steps, sizeof(s.host_steps), err)) < 0)
		goto out;
	if (s.results_root[0] != '/') {
		r = bad_value(c, "RESULTS_ROOT", "not an absolute path", err);
		goto out;
	}
	if (s.hostd_binary[0] && s.hostd_binary[0] != '/') {
		r = bad_value(c, "HOSTD_BINARY", "not an absolute path", err);
		goto out;
	}
	if ((r = get_u32(c, "QUEUE_MAX", 1, 100000, &s.queue_max, err)) < 0 ||
	    (r = get_u32(c, "USER_QUEUE_MAX", 1, 100000, &s.user_queue_max, err)) < 0 ||
	    (r = get_u32(c, "KEEP_FINISHED", 0, 1000000, &s.keep_finished, err)) < 0 ||
	    (r = get_ms(c, "IDLE_TIMEOUT", &s.idle_timeout_ms, err)) < 0 ||
	    (r = get_ms(c, "STOP_TIMEOUT", &s.stop_timeout_ms, err)) < 0 ||
	    (r = get_ms(c, "RUN_TIMEOUT", &s.run_timeout_ms, err)) < 0)
		goto out;
	*out = s;
	r = 0;
out:
	if (r == 0) {
		/* unknown names are warnings: said through err's file, nothing else */
		const struct config_diag *d;
		if (config_warnings(c, &d) > 0)
			*err = d[0];
	}
	config_free(c);
	return r;
}
