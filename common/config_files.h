/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Config files by content.  Under hostd --service the configs of an
 * experiment are what `hostctl submit` read with the submitter's rights and
 * sent: a small map from the name a config used for a file (h.conf, g.conf,
 * GUEST_CONFIG_<NODE>, a file it sources) to its text.  While a map is in
 * use every user config is taken from it, and a name it does not hold is
 * an error: the service never opens a path a user named.  Without one,
 * configs are read from the disk as always (hostd in the foreground).
 */
#ifndef LOCKSTEP_CONFIG_FILES_H
#define LOCKSTEP_CONFIG_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define CONFIG_FILES_MAX 32 /* files in one map */

struct config_files;

struct config_files *config_files_new(void);
void config_files_free(struct config_files *f); /* accepts NULL */
/* Adds (or replaces) name's text; -E2BIG past CONFIG_FILES_MAX. */
int config_files_add(struct config_files *f, const char *name, const char *text);
/* name's text, or NULL. */
const char *config_files_get(const struct config_files *f, const char *name);
size_t config_files_count(const struct config_files *f);
/* The i-th name, in the order added. */
const char *config_files_name(const struct config_files *f, size_t i);

/* The process's map from now on (NULL: the disk); the caller keeps it. */
void config_files_use(const struct config_files *f);
bool config_files_in_use(void);
/* From now on every config read from the disk through config_files_read
 * or config_files_load is also added to into (NULL: stop): how hostctl
 * learns which files an experiment's configs read, to send them. */
void config_files_record(struct config_files *into);
/* Whether path can be read: in the map in use, or on the disk (R_OK). */
bool config_files_exists(const char *path);
/* A user config's text: from the map in use, or read from the disk.
 * -ENOENT when the map does not hold it.  *text to free. */
int config_files_read(const char *path, char **text, size_t *len);
/* config_load_file for a user config, through config_files_read; a name
 * missing from the map is reported as such in err.  The reader's source/.
 * of other files should go through config_files_exists and
 * config_files_read as well, so that they travel with the rest. */
int config_files_load(struct config *c, const char *path, struct config_diag *err);

#endif
