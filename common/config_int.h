/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the config reader: shared by config*.c, not for other modules. */
#ifndef LOCKSTEP_CONFIG_INT_H
#define LOCKSTEP_CONFIG_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define CONFIG_WARNINGS_MAX 256 /* then one "too many warnings" */
#define CONFIG_SHOW_MAX 48	/* characters of a value quoted in a message */
#define CONFIG_SHOW_SIZE (CONFIG_SHOW_MAX * 4 + 8) /* bytes config__show may need */

struct config_var {
	char *name;
	char *value;
	const char *file; /* one of config.files */
	int line, column;
};

/* Variables in first-set order, with an open-addressing index over them. */
struct config_table {
	struct config_var *vars;
	const char **names; /* vars[i].name, for config_names() */
	size_t n, cap;
	uint32_t *slots; /* index into vars + 1; 0 is an empty slot */
	size_t nslots;	 /* a power of two, at least twice n */
};

struct config {
	struct config_table vars, facts;
	char **files;
	size_t nfiles;
	struct config_diag *warnings;
	size_t nwarnings;
};

/* One line being read. */
struct config_lexer {
	struct config *c;
	const char *file;
	int line;
	const char *s; /* the line, without its '\n'; not NUL-terminated */
	size_t len, pos;
	struct config_diag *err;
	char *out; /* the value being built */
	size_t out_len, out_cap;
	int depth; /* of $((...)), parentheses and signs */
};

struct config_var *config__find(const struct config_table *t, const char *name, size_t len);
/* A file variable, else a fact, else NULL. */
const struct config_var *config__lookup(const struct config *c, const char *name, size_t len);
int config__set(struct config_table *t, const char *name, size_t len, const char *value,
		size_t vlen, const char *file, int line, int column);

void config__warn(struct config *c, const char *file, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void config__diag(struct config_diag *d, const char *file, int line, int column,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void config__vdiag(struct config_diag *d, const char *file, int line, int column,
		   const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* The name closest to name (case-insensitive edit distance) among the
 * candidates, if close enough to be worth suggesting; else NULL. */
struct config_suggest {
	const char *name;
	size_t len;
	unsigned best_dist;
	const char *best;
};
void config__suggest_init(struct config_suggest *s, const char *name, size_t len);
void config__suggest_try(struct config_suggest *s, const char *candidate);
void config__suggest_table(struct config_suggest *s, const struct config_table *t);
const char *config__suggest_result(const struct config_suggest *s);
unsigned config__distance(const char *a, size_t la, const char *b, size_t lb, unsigned limit);

/* Decimal digits with an optional sign and surrounding blanks, within int64. */
bool config__parse_int(const char *s, int64_t *out);

/* "\"value\"" shortened to CONFIG_SHOW_MAX characters, for messages. */
void config__show(const char *value, char *buf, size_t size);

/* Parsing (config_parse.c, config_arith.c). */
int config__parse(struct config *c, const char *file, const char *text, size_t len,
		  struct config_diag *err);
int config__error(struct config_lexer *lx, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int config__column(const struct config_lexer *lx, size_t pos);
/* The character at pos for "found ..." ("'x'", "a space", "the end of the line"). */
const char *config__describe(const struct config_lexer *lx, size_t pos, char *buf, size_t size);
/* $NAME or ${NAME} at lx->pos (a '$'): the name's place, lx->pos after it. */
int config__scan_ref(struct config_lexer *lx, size_t *name, size_t *len);
/* "NAME is not set ..." with a suggestion, at the column of the '$'. */
void config__warn_unset(struct config_lexer *lx, size_t dollar, const char *name, size_t len,
			bool in_arith);
/* Called with lx->pos just after "$((": evaluates up to and past "))". */
int config__arith(struct config_lexer *lx, size_t open, int64_t *out);

static inline bool config__is_name_start(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static inline bool config__is_name_char(int c)
{
	return config__is_name_start(c) || (c >= '0' && c <= '9');
}

static inline bool config__is_blank(int c)
{
	return c == ' ' || c == '\t';
}

#endif
