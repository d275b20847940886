// SPDX-License-Identifier: GPL-2.0-or-later
#include "config_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

struct config_files {
	char *name[CONFIG_FILES_MAX];
	char *text[CONFIG_FILES_MAX];
	size_t n;
};

static const struct config_files *in_use;
static struct config_files *recording;

struct config_files *config_files_new(void)
{
	return xcalloc(1, sizeof(struct config_files));
}

void config_files_free(struct config_files *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		free(f->name[i]);
		free(f->text[i]);
	}
	free(f);
}

int config_files_add(struct config_files *f, const char *name, const char *text)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], name)) {
			free(f->text[i]);
			f->text[i] = xstrdup(text);
			return 0;
		}
	if (f->n == CONFIG_FILES_MAX)
		return -E2BIG;
	f->name[f->n] = xstrdup(name);
	f->text[f->n++] = xstrdup(text);
	return 0;
}

const char *config_files_get(const struct config_files *f, const char *name)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (!strcmp(f->name[i], name))
			return f->text[i];
	return NULL;
}

size_t config_files_count(const struct config_files *f)
{
	return f ? f->n : 0;
}

const char *config_files_name(const struct config_files *f, size_t i)
{
	return i < f->n ? f->name[i] : NULL;
}

void config_files_use(const struct config_files *f)
{
	in_use = f;
}

bool config_files_in_use(void)
{
	return in_use != NULL;
}

void config_files_record(struct config_files *into)
{
	recording = into;
}

bool config_files_exists(const char *path)
{
	return in_use ? config_files_get(in_use, path) != NULL : access(path, R_OK) == 0;
}

int config_files_read(const char *path, char **text, size_t *len)
{
	if (!in_use) {
		int r = fileio_read_all(path, CONFIG_FILE_MAX, text, len);
		if (r == 0 && recording && config_files_add(recording, path, *text) < 0) {
			free(*text);
			r = -E2BIG;
		}
		return r;
	}
	const char *t = config_files_get(in_use, path);
	if (!t)
		return -ENOENT;
	*text = xstrdup(t);
	if (len)
		*len = strlen(t);
	return 0;
}

int config_files_load(struct config *c, const char *path, struct config_diag *err)
{
	if (!in_use && !recording)
		return config_load_file(c, path, err);
	if (!in_use) {
		char *text;
		int r = config_files_read(path, &text, NULL);
		if (r < 0) {
			config_diag_at(err, NULL, NULL, path, "cannot read: %s",
				       r == -E2BIG ? "more config files than can be sent"
						   : strerror(-r));
			return r;
		}
		r = config_load_string(c, path, text, err);
		free(text);
		return r;
	}
	const char *t = config_files_get(in_use, path);
	if (!t) {
		config_diag_at(err, NULL, NULL, path,
			       "not among the files hostctl submit sent: "
			       "the service reads no file by its path; name it in h.conf "
			       "(GUEST_CONFIG_<NODE>) so that hostctl sends it");
		return -ENOENT;
	}
	return config_load_string(c, path, t, err);
}
