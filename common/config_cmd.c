// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commands MMTests' own configs contain, each given a meaning that runs
 * nothing (docs/config.md, "MMTests' commands"):
 *
 *   . $SHELLPACK_INCLUDE/include-sizes.sh   its values are facts already
 *   source FILE, . FILE                     FILE is read as part of the config
 *   getpagesize, getmemtotals, get_numa_details, ...   include-sizes.sh's
 *                                           functions: their values are facts
 *   cat >FILE <<END ... END                 FILE is shipped with the steps
 *   cpupower frequency-set -g G             CPUFREQ_GOVERNOR=G
 *   disable_transhuge, enable_transhuge     TRANSPARENT_HUGEPAGES=never|always
 *   echo V > /sys/kernel/mm/transparent_hugepage/enabled|defrag
 *                                           TRANSPARENT_HUGEPAGES[_DEFRAG]=V
 *   echo ...                                ignored, with a warning
 *   limit_memory BYTES                      MEMTOTAL_BYTES is at most BYTES for
 *                                           the rest of the config, with a warning
 *   grep -q TEXT /proc/cpuinfo              $? on the next line: 0 when found
 *                                           (and 0 after the commands above)
 *   die MSG, exit N                         the config is refused (when read)
 *
 * Anything else stays an error naming its place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_files.h"
#include "config_int.h"
#include "fileio.h"
#include "xalloc.h"

#define ARGS_MAX 16

/* The functions include-sizes.sh defines; their values are facts. */
static const char *const size_functions[] = {
	"getpagesize", "gethugepagesize", "getmemtotals",     "get_numa_details",
	"getwordsize", "getdoublesize",	  "gethugetlb_order", "get_dirtiable_fraction",
	NULL,
};

struct args {
	char *v[ARGS_MAX];
	size_t pos[ARGS_MAX];
	size_t n;
	char *target;	 /* echo ... > TARGET: expanded */
	size_t redirect; /* the '>' */
	size_t target_pos;
};

static void args_free(struct args *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
	free(a->target);
	a->target = NULL;
}

/* echo's "> FILE" at lx->pos (a '>'): the file, expanded, into a->target. */
static int redirect(struct config_lexer *lx, struct args *a)
{
	int r;

	if (a->target)
		return config__error(lx, lx->pos, "expected one '>' after echo, found another");
	a->redirect = lx->pos++;
	if (lx->pos < lx->len && lx->s[lx->pos] == '>')
		lx->pos++; /* >>: the same to a sysfs file */
	config__skip_blanks(lx);
	lx->out_len = 0;
	a->target_pos = lx->pos;
	lx->in_command = true;
	r = config__parse_word(lx, "expected a file name after '>'");
	lx->in_command = false;
	if (r == 0)
		a->target = xstrndup(lx->out ? lx->out : "", lx->out_len);
	return r;
}

/* The words up to the end of the line, a comment, or a ';' (then *more). */
static int read_args(struct config_lexer *lx, struct args *a, const char *cmd, bool *more)
{
	*more = false;
	a->n = 0;
	for (;;) {
		int r;

		config__skip_blanks(lx);
		if (lx->pos == lx->len || lx->s[lx->pos] == '#')
			return 0;
		if (lx->s[lx->pos] == '>' && !strcmp(cmd, "echo")) {
			int r = redirect(lx, a);

			if (r < 0) {
				args_free(a);
				return r;
			}
			continue;
		}
		if (lx->s[lx->pos] == ';') {
			/* ";;" ends a case branch: left for the caller */
			if (lx->pos + 1 >= lx->len || lx->s[lx->pos + 1] != ';')
				lx->pos++;
			*more = true;
			return 0;
		}
		if (a->n == ARGS_MAX) {
			args_free(a);
			return config__error(lx, lx->pos, "expected at most %d words after %s",
					     ARGS_MAX, cmd);
		}
		lx->out_len = 0;
		a->pos[a->n] = lx->pos;
		lx->in_command = true;
		r = config__parse_word(lx, "expected a word or the end of the line");
		lx->in_command = false;
		if (r < 0) {
			args_free(a);
			return r;
		}
		a->v[a->n++] = xstrndup(lx->out ? lx->out : "", lx->out_len);
	}
}

static int set_var(struct config_lexer *lx, const char *name, const char *value, size_t at)
{
	if (lx->dry)
		return 0;
	if (config__set(&lx->c->vars, name, strlen(name), value, strlen(value), lx->file, lx->line,
			config__column(lx, at)) < 0)
		return config__error(lx, at, "expected at most %d distinct names", CONFIG_NAMES_MAX);
	return 0;
}

/* The words joined by blanks, as echo and die print them. */
static char *joined(const struct args *a, size_t from)
{
	size_t len = 1;
	char *s;

	for (size_t i = from; i < a->n; i++)
		len += strlen(a->v[i]) + 1;
	s = xcalloc(1, len);
	for (size_t i = from; i < a->n; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, a->v[i]);
	}
	return s;
}

/* FILE of source/.: as written, relative to the including file's folder,
 * to its parent (MMTests sources configs/x from its top folder), or to the
 * MMTESTS_CONFIGS folder the config or a fact names. */
static char *resolve(struct config_lexer *lx, const char *path)
{
	const char *slash = strrchr(lx->file, '/');
	const struct config_var *cfgs = config__lookup(lx->c, "MMTESTS_CONFIGS", 15);
	const char *base = strrchr(path, '/');
	char *dir = slash ? xstrndup(lx->file, (size_t)(slash - lx->file)) : xstrdup(".");
	char *cand[4] = { NULL };
	char *found = NULL;

	if (path[0] == '/') {
		cand[0] = xstrdup(path);
	} else {
		cand[0] = xasprintf("%s/%s", dir, path);
		cand[1] = xasprintf("%s/../%s", dir, path);
		if (cfgs && cfgs->value[0])
			cand[2] = xasprintf("%s/%s", cfgs->value, base ? base + 1 : path);
	}
	for (size_t i = 0; i < 4; i++) {
		if (!found && cand[i] && config_files_exists(cand[i]))
			found = cand[i];
		else
			free(cand[i]);
	}
	free(dir);
	return found;
}

static int include(struct config_lexer *lx, size_t at, const struct args *a)
{
	struct config *c = lx->c;
	char *path, *text = NULL;
	size_t len = 0;
	int r;

	if (a->n != 1)
		return config__error(lx, at, "expected one file after '%.*s', found %zu words",
				     lx->s[at] == '.' ? 1 : 6, lx->s + at, a->n);
	if (lx->dry)
		return 0;
	if (c->include_depth >= CONFIG_INCLUDE_DEPTH_MAX)
		return config__error(lx, at,
				     "expected at most %d nested source/. of configs; does "
				     "%s include itself?",
				     CONFIG_INCLUDE_DEPTH_MAX, a->v[0]);
	path = resolve(lx, a->v[0]);
	if (!path)
		return config__error(lx, a->pos[0],
				     "expected a config file to read, found \"%s\": "
				     "no such file beside this one, in its parent folder or in "
				     "MMTESTS_CONFIGS",
				     a->v[0]);
	/* under the service, what hostctl submit sent (read with the
	 * submitter's rights); in the foreground, the disk */
	r = config_files_in_use() ? 0 : config__readable_by_all(path);
	if (r == 0)
		r = config_files_read(path, &text, &len);
	if (r < 0) {
		r = config__error(lx, a->pos[0], "expected a config file to read, found \"%s\": %s",
				  path, config__read_why(r));
		free(path);
		return r;
	}
	c->include_depth++;
	r = config__parse(c, config__intern_file(c, path), text, len, lx->err);
	c->include_depth--;
	free(text);
	free(path);
	return r;
}

/* include-sizes.sh, by whatever path: what it defines is a fact. */
static bool is_include_sizes(const struct config_lexer *lx, size_t pos)
{
	static const char tail[] = "include-sizes.sh";
	size_t end = pos, n = sizeof(tail) - 1;

	while (end < lx->len && !config__is_blank(lx->s[end]) && lx->s[end] != ';')
		end++;
	while (end > pos && (lx->s[end - 1] == '"' || lx->s[end - 1] == '\''))
		end--;
	return end - pos >= n && memcmp(lx->s + end - n, tail, n) == 0 &&
	       (end - pos == n || strchr("/\"'}", lx->s[end - n - 1]));
}

static int unset(struct config_lexer *lx, const struct args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		const char *p = a->v[i];
		bool ok = config__is_name_start(*p);

		while (ok && *++p)
			ok = config__is_name_char(*p);
		if (!ok)
			return config__error(lx, a->pos[i],
					     "expected a name after unset, found \"%s\"", a->v[i]);
		if (!lx->dry)
			config__unset(&lx->c->vars, a->v[i], strlen(a->v[i]));
	}
	return 0;
}

static int cpupower(struct config_lexer *lx, size_t at, const struct args *a)
{
	if (a->n == 3 && !strcmp(a->v[0], "frequency-set") &&
	    (!strcmp(a->v[1], "-g") || !strcmp(a->v[1], "--governor")))
		return set_var(lx, "CPUFREQ_GOVERNOR", a->v[2], at);
	return config__error(lx, at,
			     "expected 'cpupower frequency-set -g GOVERNOR' (read as "
			     "CPUFREQ_GOVERNOR=GOVERNOR): lockstep runs no other cpupower command");
}

/* exit and die where the config is read: it refuses to run. */
static int refuse(struct config_lexer *lx, size_t at, const char *cmd, const struct args *a)
{
	char *msg;
	int r;

	if (lx->dry)
		return 0;
	msg = joined(a, 0);
	if (cmd[0] == 'e' && lx->last_echo)
		r = config__error(lx, at, "the config refuses to run: %s (exit %s)", lx->last_echo,
				  msg[0] ? msg : "0");
	else if (cmd[0] == 'e')
		r = config__error(lx, at, "the config refuses to run: it exits here (exit %s)",
				  msg[0] ? msg : "0");
	else
		r = config__error(lx, at, "the config refuses to run: %s",
				  msg[0] ? msg : "die without a message");
	free(msg);
	return r;
}

/* The sysfs files an echo in MMTests' configs writes that lockstep knows
 * as host state it saves, sets for the run and puts back (hoststate.c). */
static const struct sysfs_knob {
	const char *path, *setting, *values[6];
} sysfs_knobs[] = {
	{ "/sys/kernel/mm/transparent_hugepage/enabled",
	  "TRANSPARENT_HUGEPAGES",
	  { "always", "madvise", "never" } },
	{ "/sys/kernel/mm/transparent_hugepage/defrag",
	  "TRANSPARENT_HUGEPAGES_DEFRAG",
	  { "always", "defer", "defer+madvise", "madvise", "never" } },
};

/* echo VALUE > FILE: a setting when FILE is a knob above, else an error. */
static int echo_to(struct config_lexer *lx, size_t at, const struct args *a)
{
	const struct sysfs_knob *k = NULL;
	char shown[CONFIG_SHOW_SIZE], values[96] = "";

	for (size_t i = 0; i < sizeof(sysfs_knobs) / sizeof(sysfs_knobs[0]) && !k; i++)
		if (!strcmp(a->target, sysfs_knobs[i].path))
			k = &sysfs_knobs[i];
	if (!k && lx->dry)
		return 0; /* the target may be made of values a dry read leaves empty */
	if (!k) {
		config__show(a->target, shown, sizeof(shown));
		return config__error(lx, a->target_pos,
				     "expected echo VALUE > "
				     "/sys/kernel/mm/transparent_hugepage/enabled or .../defrag, "
				     "found a write to %s: writing a file would change the node; "
				     "lockstep sets only CPUFREQ_* and TRANSPARENT_HUGEPAGES*",
				     shown);
	}
	if (a->n != 1)
		return config__error(lx, at, "expected one value to write to %s, found %zu words",
				     k->path, a->n);
	for (size_t i = 0; k->values[i]; i++) {
		if (!lx->dry && !strcmp(a->v[0], k->values[i]))
			return set_var(lx, k->setting, a->v[0], at);
		snprintf(values + strlen(values), sizeof(values) - strlen(values), "%s%s",
			 i ? " " : "", k->values[i]);
	}
	if (lx->dry)
		return 0;
	config__show(a->v[0], shown, sizeof(shown));
	return config__error(lx, a->pos[0], "expected one of %s to write to %s, found %s", values,
			     k->path, shown);
}

/* grep -q TEXT FILE: the status $? holds on the next line (0: found). */
static int grep(struct config_lexer *lx, size_t at, const struct args *a)
{
	bool found, guessed;
	int r;

	if (a->n != 3 || (!lx->dry && strcmp(a->v[0], "-q")))
		return config__error(lx, at,
				     "expected grep -q TEXT FILE (read as a status for $? "
				     "on the next line): lockstep runs no other grep");
	if (lx->dry) /* a dry read builds no words to check */
		return 0;
	for (const char *p = a->v[1]; *p; p++)
		if (strchr(".[]*^$\\", *p))
			return config__error(lx, a->pos[1],
					     "expected plain text after grep -q, found "
					     "'%c': lockstep's grep reads no regular expression",
					     *p);
	r = config__grep_file(lx, a->pos[2], a->v[2], a->v[1], &found, &guessed);
	if (r < 0)
		return r;
	lx->status = found ? 0 : 1;
	lx->status_pending = true;
	lx->status_after = NULL;
	/* the host's and local guests' file is hostd's machine's: no guess */
	if (guessed)
		config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
			     "grep -q \"%.40s\" "
			     "%s: %s in hostd's machine's file, so $? is %d: this node is a libvirt "
			     "guest, whose own file is not known before it runs",
			     a->v[1], a->v[2], found ? "found" : "not found", lx->status);
	return 0;
}

static int echo(struct config_lexer *lx, size_t at, const struct args *a)
{
	char *text, shown[CONFIG_SHOW_SIZE];

	if (a->target)
		return echo_to(lx, at, a);
	if (lx->dry)
		return 0;
	text = joined(a, 0);
	config__show(text, shown, sizeof(shown));
	config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
		     "echo %s ignored: a config prints nothing in lockstep", shown);
	free(lx->last_echo);
	lx->last_echo = text;
	return 0;
}

/*
 * limit_memory BYTES: MMTests offlines memory until the node has BYTES and
 * reads MEMTOTAL_BYTES again.  lockstep changes no node's memory: the
 * config's later sizes are computed from the smaller of the two, as
 * MMTests' would be, and a warning says the node itself keeps its memory.
 */
static int limit_memory(struct config_lexer *lx, size_t at, const struct args *a)
{
	const struct config_var *mem;
	char shown[CONFIG_SHOW_SIZE], buf[24];
	int64_t limit, total = 0;

	if (a->n != 1)
		return config__error(lx, a->n ? a->pos[1] : lx->pos,
				     "expected one number of "
				     "bytes after limit_memory, found %zu words",
				     a->n);
	if (lx->dry)
		return 0;
	if (!config__parse_int(a->v[0], &limit) || limit <= 0) {
		config__show(a->v[0], shown, sizeof(shown));
		return config__error(lx, a->pos[0],
				     "expected a number of bytes above 0 after "
				     "limit_memory, found %s",
				     shown);
	}
	mem = config__lookup(lx->c, "MEMTOTAL_BYTES", 14);
	if (mem && config__parse_int(mem->value, &total) && total > 0 && total <= limit) {
		config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
			     "limit_memory %" PRId64 " ignored: MEMTOTAL_BYTES is %" PRId64
			     ", no more than that already",
			     limit, total);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%" PRId64, limit);
	/* a value the config set itself is replaced where it is, else the fact */
	if (config__find(&lx->c->vars, "MEMTOTAL_BYTES", 14)) {
		int r = set_var(lx, "MEMTOTAL_BYTES", buf, at);

		if (r < 0)
			return r;
	} else {
		config_set_fact(lx->c, "MEMTOTAL_BYTES", buf);
	}
	config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
		     "limit_memory %" PRId64 ": MEMTOTAL_BYTES is %" PRId64 " for the rest of the "
		     "config; lockstep offlines no memory, so the node keeps all of its own: give "
		     "the guest that much in its template for the benchmark to see only that",
		     limit, limit);
	return 0;
}

/* A here-document's delimiter at lx->pos: WORD, 'WORD' or "WORD". */
static int delimiter(struct config_lexer *lx, struct config_heredoc *h)
{
	size_t at = lx->pos, n = 0;
	char q = lx->s[at] == '\'' || lx->s[at] == '"' ? lx->s[at] : 0;
	size_t p = at + (q != 0);

	while (p + n < lx->len && (q ? lx->s[p + n] != q : config__is_name_char(lx->s[p + n])))
		n++;
	if (n == 0 || n >= CONFIG_HEREDOC_DELIM_MAX || (q && p + n == lx->len))
		return config__error(lx, at,
				     "expected a delimiter word after '<<' (END, 'END' or "
				     "\"END\" of at most %d characters)",
				     CONFIG_HEREDOC_DELIM_MAX - 1);
	memcpy(h->delim, lx->s + p, n);
	h->delim[n] = '\0';
	h->quoted = q != 0;
	lx->pos = p + n + (q != 0);
	return 0;
}

static int heredoc_op(struct config_lexer *lx, struct config_heredoc *h)
{
	lx->pos += 2;
	if (lx->pos < lx->len && lx->s[lx->pos] == '-') {
		h->strip_tabs = true;
		lx->pos++;
	}
	config__skip_blanks(lx);
	return delimiter(lx, h);
}

/* cat >FILE <<END, cat <<END >FILE, with << 'END' and <<- too. */
static int cat(struct config_lexer *lx, size_t at)
{
	struct config_heredoc h = { .pending = true, .dry = lx->dry, .line = lx->line };
	int r = 0;

	while (r == 0) {
		config__skip_blanks(lx);
		if (lx->pos == lx->len || lx->s[lx->pos] == '#')
			break;
		if (lx->len - lx->pos >= 2 && !memcmp(lx->s + lx->pos, "<<", 2) && !h.delim[0]) {
			r = heredoc_op(lx, &h);
		} else if (lx->s[lx->pos] == '>' && !h.target) {
			if (lx->pos + 1 < lx->len && lx->s[lx->pos + 1] == '>')
				return config__error(lx, lx->pos,
						     "expected cat >FILE <<END, found "
						     "'>>': a shipped file is written whole");
			lx->pos++;
			config__skip_blanks(lx);
			lx->out_len = 0;
			r = config__parse_word(lx, "expected a file name after '>'");
			if (r == 0)
				h.target = xstrndup(lx->out ? lx->out : "", lx->out_len);
		} else {
			r = -1;
		}
	}
	if (r == 0 && h.target && h.delim[0] && (h.target[0] || lx->dry)) {
		free(lx->heredoc.target);
		lx->heredoc = h;
		return 0;
	}
	free(h.target);
	if (r < -1)
		return r;
	return config__error(lx, at,
			     "expected cat >FILE <<END (a file shipped with the steps), "
			     "found another use of cat: lockstep never runs commands");
}

int config__heredoc_value(struct config_lexer *lx, size_t name, size_t len)
{
	struct config_heredoc h = { .pending = true, .to_var = true, .dry = lx->dry, .line = lx->line };
	size_t p = lx->pos;
	int r;

	if (lx->len - p < 5 || memcmp(lx->s + p, "$(cat", 5) != 0)
		return 0;
	lx->pos = p + 5;
	config__skip_blanks(lx);
	if (lx->len - lx->pos < 2 || memcmp(lx->s + lx->pos, "<<", 2) != 0) {
		lx->pos = p;
		return 0;
	}
	r = heredoc_op(lx, &h);
	if (r < 0)
		return r;
	config__skip_blanks(lx);
	if (lx->pos < lx->len && lx->s[lx->pos] != '#')
		return config__error(lx, lx->pos,
				     "expected the end of the line after $(cat <<%s: "
				     "the text follows on the next lines, then %s and ')'",
				     h.delim, h.delim);
	h.target = xstrndup(lx->s + name, len);
	free(lx->heredoc.target);
	lx->heredoc = h;
	return 1;
}

static int ship(struct config_lexer *lx, const char *text, size_t len)
{
	struct config *c = lx->c;
	const struct config_heredoc *h = &lx->heredoc;
	const char *base = strrchr(h->target, '/');
	const char *name = base ? base + 1 : h->target;
	struct config_shipped *f = NULL;

	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) {
		config__diag(lx->err, lx->file, h->line, 1,
			     "expected cat >FILE to name a file, "
			     "found \"%s\"",
			     h->target);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->nshipped && !f; i++)
		if (!strcmp(c->shipped[i].name, name))
			f = &c->shipped[i];
	if (f) {
		free((char *)f->path);
		free((char *)f->name);
		free((char *)f->text);
	} else {
		c->shipped = xrealloc(c->shipped, (c->nshipped + 1) * sizeof(*c->shipped));
		f = &c->shipped[c->nshipped++];
	}
	*f = (struct config_shipped){ .path = xstrdup(h->target),
				      .name = xstrdup(name),
				      .text = xstrndup(text, len),
				      .len = len,
				      .file = lx->file,
				      .line = h->line };
	return 0;
}

static int heredoc_done(struct config_lexer *lx, const char *body, size_t len, int end_line)
{
	const struct config_heredoc *h = &lx->heredoc;

	(void)end_line;
	if (h->dry)
		return 0;
	if (!h->to_var)
		return ship(lx, body, len);
	/* $( ) drops the trailing newlines, as the shell does */
	while (len > 0 && body[len - 1] == '\n')
		len--;
	if (len > CONFIG_VALUE_MAX) {
		config__diag(lx->err, lx->file, h->line, 1, "expected a value of at most %d bytes",
			     CONFIG_VALUE_MAX);
		return -EINVAL;
	}
	if (config__set(&lx->c->vars, h->target, strlen(h->target), body, len, lx->file, h->line, 1) <
	    0) {
		config__diag(lx->err, lx->file, h->line, 1, "expected at most %d distinct names",
			     CONFIG_NAMES_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The body of the heredoc pending on the line that ended at *start: its
 * lines up to the delimiter, then (for NAME=$(cat <<END) the ')' line. */
int config__read_heredoc(struct config_lexer *lx, const char *text, size_t len, size_t *start)
{
	struct config_heredoc *h = &lx->heredoc;
	size_t body = *start, pos = *start, body_end = 0;
	bool found = false;
	int first = lx->line + 1, r;

	while (pos < len && !found) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, b = pos;

		size_t e = end;

		if (h->strip_tabs || h->to_func)
			while (b < end && (text[b] == '\t' || (h->to_func && text[b] == ' ')))
				b++;
		while (h->to_func && e > b && config__is_blank(text[e - 1]))
			e--;
		lx->line++;
		if (e - b == strlen(h->delim) && memcmp(text + b, h->delim, e - b) == 0) {
			found = true;
			body_end = pos;
		}
		pos = end + 1;
	}
	if (!found) {
		/* column 1: the line of the cat (or function) is the place; an
		 * error always names a line and a column */
		config__diag(lx->err, lx->file, h->line, 1,
			     "expected a line '%s' to end the %s "
			     "opened here, found the end of the file",
			     h->delim, h->to_func ? "function" : "here-document");
		return -EINVAL;
	}
	*start = pos;
	if (h->to_func)
		return h->dry ? 0 : config__define(lx, text + body, body_end - body);
	if (h->to_var) {
		/* the ')' that closes $( */
		const char *nl = pos < len ? memchr(text + pos, '\n', len - pos) : NULL;
		size_t end = nl ? (size_t)(nl - text) : len, p = pos;

		lx->line++;
		while (p < end && config__is_blank(text[p]))
			p++;
		/* p is past the text when END was its last line, without a '\n' */
		if (p >= end || text[p] != ')') {
			config__diag(lx->err, lx->file, lx->line, 1,
				     "expected ')' to close the $(cat "
				     "<<%s opened at line %d",
				     h->delim, h->line);
			return -EINVAL;
		}
		for (p++; p < end && config__is_blank(text[p]); p++)
			;
		if (p < end && text[p] != '#') {
			config__diag(lx->err, lx->file, lx->line, 1,
				     "expected the end of the line "
				     "after ')', found '%.*s'",
				     (int)(end - p < 40 ? end - p : 40), text + p);
			return -EINVAL;
		}
		*start = end + 1;
	}
	if (h->strip_tabs || !h->quoted) {
		/* <<-: leading tabs go; unquoted: expanded as the shell would */
		char *copy = xmalloc(body_end - body + 1);
		size_t n = 0;

		for (size_t i = body; i < body_end; i++) {
			if (h->strip_tabs && text[i] == '\t' && (i == body || text[i - 1] == '\n'))
				continue;
			copy[n++] = text[i];
		}
		if (!h->quoted && !h->dry) {
			r = config__expand(lx, copy, n, first);
			free(copy);
			if (r == 0)
				r = heredoc_done(lx, lx->out ? lx->out : "", lx->out_len, lx->line);
			return r;
		}
		r = heredoc_done(lx, copy, n, lx->line);
		free(copy);
		return r;
	}
	return heredoc_done(lx, text + body, body_end - body, lx->line);
}

/* Every value naming a shipped file's path names the copy in the work
 * folder instead, where steps run: ./NAME. */
void config__ship_paths(struct config *c)
{
	for (size_t f = 0; f < c->nshipped; f++) {
		const char *path = c->shipped[f].path;
		char *rel = xasprintf("./%s", c->shipped[f].name);
		size_t plen = strlen(path), rlen = strlen(rel);

		for (size_t i = 0; i < c->vars.n && plen > 0 && strcmp(path, rel); i++) {
			struct config_var *v = &c->vars.vars[i];
			char *hit = strstr(v->value, path), *out;
			size_t n = 0;

			if (!hit)
				continue;
			out = xmalloc(strlen(v->value) / plen * rlen + strlen(v->value) + 1);
			for (const char *p = v->value; *p;) {
				/* the path, not the start of a longer name: /tmp/x is not /tmp/xy */
				if (!strncmp(p, path, plen) && !config__is_name_char(p[plen]) &&
				    p[plen] != '-') {
					memcpy(out + n, rel, rlen);
					n += rlen;
					p += plen;
				} else {
					out[n++] = *p++;
				}
			}
			out[n] = '\0';
			free(v->value);
			v->value = out;
		}
		free(rel);
	}
}

static bool listed(const char *w, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, w, n))
			return true;
	return false;
}

int config__command(struct config_lexer *lx)
{
	static const char *const commands[] = { ".",
						"source",
						"echo",
						"cpupower",
						"disable_transhuge",
						"enable_transhuge",
						"die",
						"exit",
						"true",
						":",
						"unset",
						"limit_memory",
						"grep",
						NULL };
	size_t at = lx->pos, n = 0;
	const char *w = lx->s + at;
	struct args a = { 0 };
	bool more = false;
	int r;

	while (at + n < lx->len && !config__is_blank(w[n]) && w[n] != ';')
		n++;
	if (n == 3 && !memcmp(w, "cat", 3)) {
		lx->pos += 3;
		return cat(lx, at);
	}
	if (!listed(w, n, commands) && !listed(w, n, size_functions))
		return 1;
	lx->pos += n;
	config__skip_blanks(lx);
	if ((n == 1 || n == 6) && lx->pos < lx->len && is_include_sizes(lx, lx->pos)) {
		while (lx->pos < lx->len && !config__is_blank(lx->s[lx->pos]) && lx->s[lx->pos] != ';')
			lx->pos++;
		r = read_args(lx, &a, "include-sizes.sh", &more);
		if (r == 0 && a.n > 0)
			r = config__error(lx, a.pos[0],
					  "expected the end of the line after "
					  "include-sizes.sh");
		args_free(&a);
		return r < 0 ? r : more ? 2 : 0;
	}
	char cmd[24];
	snprintf(cmd, sizeof(cmd), "%.*s", (int)n, w);
	r = read_args(lx, &a, cmd, &more);
	if (r < 0)
		return r;
	if (n == 1 && w[0] == '.')
		r = include(lx, at, &a);
	else if (!strcmp(cmd, "source"))
		r = include(lx, at, &a);
	else if (!strcmp(cmd, "echo"))
		r = echo(lx, at, &a);
	else if (!strcmp(cmd, "cpupower"))
		r = cpupower(lx, at, &a);
	else if (!strcmp(cmd, "disable_transhuge") || !strcmp(cmd, "enable_transhuge"))
		r = a.n ? config__error(lx, a.pos[0], "expected nothing after %s", cmd)
			: set_var(lx, "TRANSPARENT_HUGEPAGES", cmd[0] == 'd' ? "never" : "always", at);
	else if (!strcmp(cmd, "die") || !strcmp(cmd, "exit"))
		r = refuse(lx, at, cmd, &a);
	else if (!strcmp(cmd, "unset"))
		r = unset(lx, &a);
	else if (!strcmp(cmd, "limit_memory"))
		r = limit_memory(lx, at, &a);
	else if (!strcmp(cmd, "grep"))
		r = grep(lx, at, &a);
	else if (a.n > 0 && listed(w, n, size_functions))
		r = config__error(lx, a.pos[0], "expected nothing after %s", cmd);
	args_free(&a);
	return r < 0 ? r : more ? 2 : 0;
}
