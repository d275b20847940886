/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the config reader: shared by config*.c, not for other modules. */
#ifndef LOCKSTEP_CONFIG_INT_H
#define LOCKSTEP_CONFIG_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define CONFIG_WARNINGS_MAX 256			   /* then one "too many warnings" */
#define CONFIG_SHOW_MAX 48			   /* characters of a value quoted in a message */
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
	struct config_shipped *shipped; /* strings owned (path, name, text) */
	size_t nshipped;
	char *root;	   /* where cat of /proc/sys and /sys reads; NULL: "/" */
	bool elsewhere;	   /* of a node not this machine (config_set_node_elsewhere) */
	int include_depth; /* of source/. and function calls being read */
	struct config_func *funcs;
	size_t nfuncs;
	int first_line; /* the next config__parse's line 1 is this + 1 (a body) */
};

/* name() { ... } of a config (config_func.c). */
struct config_func {
	char *name, *body;
	size_t len;
	const char *file; /* one of config.files */
	int line;	  /* of the name() { line: the body starts after it */
	bool called, warned;
};

#define CONFIG_INCLUDE_DEPTH_MAX 8 /* source/. of a config in a config ... */
#define CONFIG_HEREDOC_DELIM_MAX 64

/* cat >FILE <<END or NAME=$(cat <<END read on a line: the lines up to END
 * are its body (config_parse.c reads them, config_cmd.c acts). */
struct config_heredoc {
	bool pending;
	bool to_var;	 /* NAME=$(cat <<END ... END\n): else cat >FILE */
	bool to_func;	 /* name() { ... }: the delimiter is '}' alone, blanks around */
	bool quoted;	 /* <<'END': the body is taken as it is */
	bool strip_tabs; /* <<-END */
	bool dry;	 /* read in a branch not taken: nothing is kept */
	char delim[CONFIG_HEREDOC_DELIM_MAX];
	char *target; /* FILE (expanded) or NAME */
	int line;     /* of the cat */
};

#define CONFIG_IF_DEPTH_MAX 8 /* nesting of if ... fi */

/* An open if ... fi (config_cond.c). */
struct config_if {
	int line, column; /* of the 'if', for "expected 'fi'" at the end of the file */
	bool is_case;	  /* a case ... esac: patterns instead of elif/else */
	char *word;	  /* the case's word, matched against each pattern */
	bool taken;	  /* a branch was taken, or the enclosing branch is not: no more */
	bool active;	  /* the branch being read is the one taken */
	bool in_else;
};

/* What the word being read is for: a value, or the right side of ==, = or
 * != (a glob pattern) or of =~ (an extended regular expression) inside
 * [[ ]], where a quoted character matches only itself, as in bash. */
enum config_word {
	CONFIG_WORD_VALUE,
	CONFIG_WORD_GLOB,
	CONFIG_WORD_REGEX,
};

/* One line being read; the if ... fi state lives across lines of one file. */
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
	/* Reading a branch that is not taken, or a test that is short-circuited:
	 * the syntax is checked, nothing is assigned, expanded or warned about,
	 * and arithmetic cannot fail on values (1/0 stays unevaluated in shell). */
	bool dry;
	struct config_if ifs[CONFIG_IF_DEPTH_MAX];
	int nifs;
	bool want_then; /* after "if TEST" or "elif TEST" at the end of a line */
	bool dbl;	/* reading a [[ ]] test, not a [ ] one */
	enum config_word word;
	bool in_command; /* a ';' ends a word: the arguments of a command */
	struct config_heredoc heredoc;
	char *last_echo; /* the text of the last echo, what an exit after it says */
	/* $?: the status of the last statement of the statement line before
	 * (grep -q's, or 0 after an assignment or a command read as a
	 * setting); after any other statement it has none, and status_after
	 * says which one that was */
	int status;
	bool status_pending;	  /* this line's last statement left a status */
	bool status_ready;	  /* the line before this one did */
	const char *status_after; /* "'fi'", "a test", ...: what left none */
};

struct config_var *config__find(const struct config_table *t, const char *name, size_t len);
/* A file variable, else a fact, else NULL. */
const struct config_var *config__lookup(const struct config *c, const char *name, size_t len);
int config__set(struct config_table *t, const char *name, size_t len, const char *value,
		size_t vlen, const char *file, int line, int column);
/* unset NAME: gone, as if never set (nothing when it is not set). */
void config__unset(struct config_table *t, const char *name, size_t len);

void config__warn(struct config *c, const char *file, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void config__diag(struct config_diag *d, const char *file, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void config__vdiag(struct config_diag *d, const char *file, int line, int column, const char *fmt,
		   va_list ap) __attribute__((format(printf, 5, 0)));

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
/* Blanks at lx->pos; a name at lx->pos (its length, 0 if none). */
void config__skip_blanks(struct config_lexer *lx);
size_t config__scan_name(struct config_lexer *lx);
/* One word at lx->pos (quotes and expansions) appended to lx->out; it ends
 * at a blank or the end of the line.  An unquoted shell operator is an
 * error "<expected>, found ';'". */
int config__parse_word(struct config_lexer *lx, const char *expected);
/* An assignment at lx->pos ("export" allowed), made unless lx->dry.  *more
 * is set when a ';' followed by fi, else or elif ends it (inside an if). */
int config__assignment(struct config_lexer *lx, bool *more);
/* A line that starts with a word that is neither a name nor a keyword. */
int config__not_assignment(struct config_lexer *lx, size_t name, size_t len);
int config__not_a_name(struct config_lexer *lx);

/* The fact that `uname -m` and $(uname -m) stand for: set by config_new()
 * from uname(2), so that they are read rather than run. */
#define CONFIG_MACHINE_FACT "MACHINE"
/* The fact $$ reads: hostd's pid, the same in every file of the run. */
#define CONFIG_PID_FACT "$"

/* The command substitutions a config may hold, for "it answers only ...". */
#define CONFIG_ANSWERS                                                      \
	"uname -m|-r|-s, whoami, id -u, nproc, getconf PAGESIZE, cat of a " \
	"file under /proc/sys or /sys, nas-class.sh and echo ... | sed s/A/B/"

/* Facts of this process: MACHINE, KERNEL_RELEASE, KERNEL_NAME, USER, UID,
 * $$, PAGESIZE, WORDSIZE, DOUBLESIZE (config_facts.c). */
void config__process_facts(struct config *c);
/* The answer to the command substitution cmd[0..n) (blanks collapsed), at
 * pos at for errors: a new string in *out, or -EINVAL naming it. */
int config__answer(struct config_lexer *lx, size_t at, const char *cmd, size_t n, char **out);
/* $(echo WORDS | sed 's/A/B/') or $(echo WORDS) in lx->s[p..end), the
 * substitution opened at at (config_sed.c): 0 with the answer in *out, 1
 * when the command is no echo, -EINVAL. */
int config__echo_sed(struct config_lexer *lx, size_t at, size_t p, size_t end, char **out);
/* grep -q TEXT FILE (config_facts.c): 0 with *found, for FILE
 * /proc/cpuinfo or a file under /proc/sys or /sys: the node's, from its
 * facts (config_set_node_elsewhere) or read on hostd's machine, *guessed
 * saying when that machine's file stands in for another's; -EINVAL naming
 * it at pos. */
int config__grep_file(struct config_lexer *lx, size_t pos, const char *path, const char *text,
		      bool *found, bool *guessed);
/* 0 when path is a regular file everybody may read; -EINVAL when it is
 * no regular file, -EACCES when not readable by all, -errno (config_facts.c). */
int config__readable_by_all(const char *path);
/* Its error, or a read's, in words for a message. */
const char *config__read_why(int r);
/* The file name kept for diagnostics (config.c). */
char *config__intern_file(struct config *c, const char *file);

/* A line that starts with a command MMTests' configs use (config_cmd.c):
 * 0 when read (the line is done), 1 when the word is no such command,
 * -EINVAL with lx->err set. */
int config__command(struct config_lexer *lx);
/* NAME=$(cat <<END at lx->pos (after '='): 1 when it is one (the heredoc
 * is pending), 0 when not, -EINVAL. */
int config__heredoc_value(struct config_lexer *lx, size_t name, size_t len);
/* The lines after the one that ended at *start, up to a pending heredoc's
 * delimiter (and the ')' of NAME=$(cat <<END): its body, acted on; *start
 * after them. */
int config__read_heredoc(struct config_lexer *lx, const char *text, size_t len, size_t *start);
/* At the end of the outermost file: values naming a shipped file's path
 * name its copy in the work folder, ./NAME. */
void config__ship_paths(struct config *c);
/* Expands text as a shell expands a heredoc's body or a double-quoted
 * string: $NAME, ${NAME}, $((...)), `...`, \$ \` \\; into lx->out. */
int config__expand(struct config_lexer *lx, const char *text, size_t len, int first_line);

/* name() {, function name {, or a call of a defined function at lx->pos:
 * 0 when read, 2 when more follows a ';', 1 when the line is none of
 * these, -EINVAL. */
int config__function(struct config_lexer *lx);
int config__define(struct config_lexer *lx, const char *body, size_t len);
int config__call(struct config_lexer *lx, struct config_func *f, size_t at);
/* At the end of the outermost file: a warning per function never called. */
void config__warn_uncalled(struct config *c);

/* [ TEST ] && STATEMENT, [ TEST ] || STATEMENT, case ... esac
 * (config_flow.c). */
int config__test_statement(struct config_lexer *lx);
int config__case(struct config_lexer *lx);
/* Inside an open case: a pattern line "PAT|PAT)" or ";;"; 1 when the line
 * is no such thing. */
int config__case_line(struct config_lexer *lx);
/* [ TEST ] or [[ TEST ]] at lx->pos (config_cond.c). */
int config__bracket(struct config_lexer *lx, bool *res, const char *after);
void config__update_dry(struct config_lexer *lx);

/* if/elif/else/fi and [ tests (config_cond.c). */
int config__statements(struct config_lexer *lx);
/* At the end of a file: an if that is still open is an error. */
int config__cond_end(struct config_lexer *lx);

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
