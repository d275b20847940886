// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The line reader: one assignment per line, with shell quoting and
 * expansion, and an error naming the place for everything a shell would
 * execute.  Nothing here ever runs anything.  The if/elif/else/fi around
 * assignments are read by config_cond.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "xalloc.h"

/* Columns count characters, not bytes, so that they match an editor's. */
int config__column(const struct config_lexer *lx, size_t pos)
{
	int col = 1;

	for (size_t i = 0; i < pos && i < lx->len; i++)
		col += ((unsigned char)lx->s[i] & 0xc0) != 0x80;
	return col;
}

int config__error(struct config_lexer *lx, size_t pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config__vdiag(lx->err, lx->file, lx->line, config__column(lx, pos), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The character at pos, for "found ..." in messages. */
const char *config__describe(const struct config_lexer *lx, size_t pos, char *buf, size_t size)
{
	unsigned char ch;
	size_t n = 1;

	if (pos >= lx->len)
		return "the end of the line";
	ch = (unsigned char)lx->s[pos];
	if (ch == ' ')
		return "a space";
	if (ch == '\t')
		return "a tab";
	if (ch < 0x80) {
		snprintf(buf, size, "'%c'", ch);
		return buf;
	}
	while (n < 4 && pos + n < lx->len && ((unsigned char)lx->s[pos + n] & 0xc0) == 0x80)
		n++;
	snprintf(buf, size, "'%.*s'", (int)n, lx->s + pos);
	return buf;
}

void config__skip_blanks(struct config_lexer *lx)
{
	while (lx->pos < lx->len && config__is_blank(lx->s[lx->pos]))
		lx->pos++;
}

size_t config__scan_name(struct config_lexer *lx)
{
	size_t start = lx->pos;

	if (lx->pos < lx->len && config__is_name_start(lx->s[lx->pos]))
		while (lx->pos < lx->len && config__is_name_char(lx->s[lx->pos]))
			lx->pos++;
	return lx->pos - start;
}

static int out_put(struct config_lexer *lx, size_t pos, const char *p, size_t n)
{
	if (n == 0 || lx->dry) /* lx->out may still be NULL; a dry value is never used */
		return 0;
	if (n > CONFIG_VALUE_MAX - lx->out_len)
		return config__error(lx, pos, "expected a value of at most %d bytes (after expansion)",
				     CONFIG_VALUE_MAX);
	if (lx->out_len + n > lx->out_cap) {
		size_t cap = lx->out_cap ? lx->out_cap * 2 : 256;

		while (cap < lx->out_len + n)
			cap *= 2;
		lx->out_cap = cap < CONFIG_VALUE_MAX ? cap : CONFIG_VALUE_MAX;
		lx->out = xrealloc(lx->out, lx->out_cap);
	}
	memcpy(lx->out + lx->out_len, p, n);
	lx->out_len += n;
	return 0;
}

/* Characters that a glob pattern or an extended regular expression would
 * read as operators. */
static const char *special_chars(enum config_word word)
{
	if (word == CONFIG_WORD_GLOB)
		return "*?[]\\";
	return word == CONFIG_WORD_REGEX ? "^$.[]()|*+?{}\\" : "";
}

/* Quoted text: in a pattern it matches itself, so its operators are escaped. */
static int out_lit(struct config_lexer *lx, size_t pos, const char *p, size_t n)
{
	const char *special = special_chars(lx->word);
	int r = 0;

	if (!special[0])
		return out_put(lx, pos, p, n);
	for (size_t i = 0; i < n && r == 0; i++) {
		if (p[i] && strchr(special, p[i]))
			r = out_put(lx, pos, "\\", 1);
		if (r == 0)
			r = out_put(lx, pos, p + i, 1);
	}
	return r;
}

static bool is_operator(char ch)
{
	return ch && strchr(";&|<>()`", ch);
}

/* An operator that a shell would act on: ';', '&&', '>>', ... and why not. */
static int operator_error(struct config_lexer *lx, size_t pos, const char *expected, bool in_value)
{
	char ch = lx->s[pos], op[3] = { ch, 0, 0 };
	const char *why = "lockstep never runs commands";

	if (pos + 1 < lx->len && lx->s[pos + 1] == ch && strchr(";&|<>", ch))
		op[1] = ch;
	if (ch == ';')
		why = "a config holds one assignment per line and lockstep never runs commands";
	else if (ch == '|')
		why = "lockstep never runs commands or pipes";
	else if (ch == '<' || ch == '>')
		why = "lockstep never runs commands or redirects";
	else if (ch == '(' || ch == ')')
		why = "configs have no subshells or functions; lockstep never runs commands";
	else if (ch == '`')
		return config__error(lx, pos,
				     "%s, found command substitution '`': lockstep never runs "
				     "commands; write the value itself",
				     expected);
	return config__error(lx, pos, "%s, found '%s': %s%s", expected, op, why,
			     in_value ? " (quote it if it belongs to the value)" : "");
}

void config__warn_unset(struct config_lexer *lx, size_t dollar, const char *name, size_t len,
			bool in_arith)
{
	struct config *c = lx->c;
	const char *best = NULL;
	struct config_suggest s;

	/* Once warnings are dropped, spend nothing on them: a line full of $X
	 * must stay linear.  A branch not taken warns about nothing. */
	if (c->nwarnings > CONFIG_WARNINGS_MAX || lx->dry)
		return;
	if (c->nwarnings < CONFIG_WARNINGS_MAX) {
		config__suggest_init(&s, name, len);
		config__suggest_table(&s, &c->vars);
		config__suggest_table(&s, &c->facts);
		best = config__suggest_result(&s);
	}
	config__warn(c, lx->file, lx->line, config__column(lx, dollar), "%.*s is not set, %s%s%s%s",
		     (int)len, name, in_arith ? "using 0" : "expanding to \"\"",
		     best ? "; did you mean " : "", best ? best : "", best ? "?" : "");
}

/* $NAME or ${NAME} at lx->pos; leaves lx->pos after it. */
int config__scan_ref(struct config_lexer *lx, size_t *name, size_t *len)
{
	size_t at = lx->pos;
	bool braced = at + 1 < lx->len && lx->s[at + 1] == '{';
	char buf[8];

	lx->pos = at + 1 + braced;
	*name = lx->pos;
	*len = config__scan_name(lx);
	if (*len == 0)
		return config__error(lx, lx->pos, "expected a name after '%s', found %s",
				     braced ? "${" : "$",
				     config__describe(lx, lx->pos, buf, sizeof(buf)));
	if (*len > CONFIG_NAME_MAX)
		return config__error(lx, *name + CONFIG_NAME_MAX,
				     "expected a name of at most %d characters", CONFIG_NAME_MAX);
	if (!braced)
		return 0;
	/* ${NAME[N]}: an element of an array include-sizes.sh defines, a fact
	 * of that very name (config_set_include_sizes) */
	if (lx->pos + 2 < lx->len && lx->s[lx->pos] == '[') {
		size_t d = lx->pos + 1;

		while (d < lx->len && lx->s[d] >= '0' && lx->s[d] <= '9')
			d++;
		if (d > lx->pos + 1 && d < lx->len && lx->s[d] == ']') {
			lx->pos = d + 1;
			*len = lx->pos - *name;
		}
	}
	if (lx->pos < lx->len && lx->s[lx->pos] == '}') {
		lx->pos++;
		return 0;
	}
	if (lx->pos < lx->len && strchr(":-=+?#%/^,@[", lx->s[lx->pos]))
		return config__error(lx, lx->pos,
				     "expected '}' after ${%.*s, found '%c': only ${NAME} "
				     "is supported, not shell's ${NAME%c...} forms",
				     (int)*len, lx->s + *name, lx->s[lx->pos], lx->s[lx->pos]);
	return config__error(lx, lx->pos, "expected '}' after ${%.*s, found %s", (int)*len,
			     lx->s + *name, config__describe(lx, lx->pos, buf, sizeof(buf)));
}

/* An expansion inside double quotes is literal text in a pattern; outside,
 * its value is the pattern, as in bash. */
static int expand_text(struct config_lexer *lx, size_t dollar, size_t name, size_t len, bool quoted)
{
	const struct config_var *v = config__lookup(lx->c, lx->s + name, len);

	if (!v) {
		config__warn_unset(lx, dollar, lx->s + name, len, false);
		return 0;
	}
	return (quoted ? out_lit : out_put)(lx, dollar, v->value, strlen(v->value));
}

/*
 * A command substitution at lx->pos ('`' or "$("): never run, but answered
 * from facts when it is one of the few side-effect-free forms MMTests'
 * configs use (config__answer), an error naming it otherwise.
 */
static int substitution(struct config_lexer *lx, bool quoted)
{
	size_t at = lx->pos, p = at + (lx->s[at] == '`' ? 1 : 2), end, n = 0;
	char close = lx->s[at] == '`' ? '`' : ')', cmd[256], *answer = NULL, q = 0;
	int r;

	/* the close outside quotes: $(echo $X | sed 's/(a)//') */
	for (end = p; end < lx->len && (q || lx->s[end] != close); end++) {
		if (lx->s[end] == '\\' && q != '\'' && end + 1 < lx->len)
			end++;
		else if (q ? lx->s[end] == q : lx->s[end] == '\'' || lx->s[end] == '"')
			q = q ? 0 : lx->s[end];
	}
	if (end == lx->len)
		return config__error(lx, at,
				     "expected a closing '%c' for the command substitution "
				     "opened here",
				     close);
	/* blanks collapsed, so that `uname  -m` is `uname -m` */
	for (size_t i = p; i < end && n < sizeof(cmd) - 1; i++)
		if (!config__is_blank(lx->s[i]) || (n > 0 && cmd[n - 1] != ' '))
			cmd[n++] = config__is_blank(lx->s[i]) ? ' ' : lx->s[i];
	while (n > 0 && cmd[n - 1] == ' ')
		n--;
	r = config__echo_sed(lx, at, p, end, &answer);
	if (r == 1)
		r = config__answer(lx, at, cmd, n, &answer);
	if (r < 0)
		return r;
	lx->pos = end + 1;
	r = (quoted ? out_lit : out_put)(lx, at, answer, strlen(answer));
	free(answer);
	return r;
}

/* '$' at lx->pos, in a double-quoted string or not. */
static int parse_dollar(struct config_lexer *lx, bool quoted)
{
	size_t at = lx->pos, name, len;
	int next = at + 1 < lx->len ? (unsigned char)lx->s[at + 1] : -1;
	char num[24];
	int64_t v;
	int r;

	if (next == '(' && at + 2 < lx->len && lx->s[at + 2] == '(') {
		lx->pos = at + 3;
		r = config__arith(lx, at, &v);
		if (r < 0)
			return r;
		snprintf(num, sizeof(num), "%lld", (long long)v);
		return out_put(lx, at, num, strlen(num));
	}
	if (next == '(')
		return substitution(lx, quoted);
	if (next == '{' || config__is_name_start(next)) {
		r = config__scan_ref(lx, &name, &len);
		return r < 0 ? r : expand_text(lx, at, name, len, quoted);
	}
	if (next == '$') {
		const struct config_var *v = config__lookup(lx->c, CONFIG_PID_FACT, 1);

		lx->pos += 2;
		return v ? (quoted ? out_lit : out_put)(lx, at, v->value, strlen(v->value)) : 0;
	}
	if (next == '?' && (lx->status_ready || lx->dry)) { /* dry: nothing is expanded */
		char st[4];

		snprintf(st, sizeof(st), "%d", lx->status);
		lx->pos += 2;
		return out_put(lx, at, st, strlen(st));
	}
	if (next == '?')
		return config__error(lx, at,
				     "expected a variable name after '$', found '$?' after "
				     "%s: a config has a status only on the statement line after "
				     "grep -q TEXT FILE (0 when found, else 1), an assignment or a "
				     "command read as a setting (0)",
				     lx->status_after ? lx->status_after : "no statement");
	if ((next >= '0' && next <= '9') || (next > 0 && strchr("@*#-!", next)))
		return config__error(lx, at,
				     "expected a variable name after '$', found the shell "
				     "parameter '$%c': configs have no positional or special "
				     "parameters",
				     next);
	if (!quoted && (next == '\'' || next == '"'))
		return config__error(lx, at,
				     "expected a variable name after '$': shell's $'...' and "
				     "$\"...\" quoting is not supported");
	/* A '$' that starts nothing stays a '$', as in shell. */
	lx->pos++;
	return (quoted ? out_lit : out_put)(lx, at, "$", 1);
}

static int parse_single(struct config_lexer *lx)
{
	size_t open = lx->pos;
	const char *close = memchr(lx->s + open + 1, '\'', lx->len - open - 1);

	if (!close)
		return config__error(lx, open,
				     "expected a closing ' for the quote opened here, "
				     "found the end of the file");
	lx->pos = (size_t)(close - lx->s) + 1;
	return out_lit(lx, open, lx->s + open + 1, (size_t)(close - lx->s) - open - 1);
}

static int parse_double(struct config_lexer *lx)
{
	size_t open = lx->pos++;
	int r;

	for (;;) {
		size_t at = lx->pos;
		char ch = at < lx->len ? lx->s[at] : '\0';

		if (at == lx->len)
			return config__error(lx, open,
					     "expected a closing \" for the quote opened "
					     "here, found the end of the file");
		if (ch == '"') {
			lx->pos++;
			return 0;
		}
		if (ch == '$') {
			r = parse_dollar(lx, true);
		} else if (ch == '`') {
			r = substitution(lx, true);
		} else if (ch == '\\' && at + 1 < lx->len && strchr("\"\\$`", lx->s[at + 1])) {
			/* Inside double quotes only these four are escaped, as in shell. */
			r = out_lit(lx, at, lx->s + at + 1, 1);
			lx->pos += 2;
		} else {
			r = out_lit(lx, at, &ch, 1);
			lx->pos++;
		}
		if (r < 0)
			return r;
	}
}

/* After an assignment inside an if: "; fi", "; else" or "; elif" go on. */
static bool closes_branch(const struct config_lexer *lx, size_t pos)
{
	static const char *const words[] = { "fi", "else", "elif" };

	/* the second ';' of a case branch's ";;" */
	if (pos < lx->len && lx->s[pos] == ';')
		return true;
	while (pos < lx->len && config__is_blank(lx->s[pos]))
		pos++;
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);

		if (lx->len - pos >= n && memcmp(lx->s + pos, words[i], n) == 0 &&
		    (pos + n == lx->len || strchr(" \t;#", lx->s[pos + n])))
			return true;
	}
	return false;
}

/* The pieces of one word: 'literal', "quoted", unquoted, concatenated. */
int config__parse_word(struct config_lexer *lx, const char *expected)
{
	bool tilde_expands = true; /* at the start, or after an unquoted ':' */

	while (lx->pos < lx->len && !config__is_blank(lx->s[lx->pos])) {
		size_t at = lx->pos;
		char ch = lx->s[at];
		bool colon = false;
		int r;

		if (ch == '\'') {
			r = parse_single(lx);
		} else if (ch == '"') {
			r = parse_double(lx);
		} else if (ch == '$') {
			r = parse_dollar(lx, false);
		} else if (ch == '\\') {
			if (at + 1 == lx->len)
				return config__error(lx, at,
						     "expected a character after '\\' (a value "
						     "ends with its line)");
			r = out_lit(lx, at, lx->s + at + 1, 1);
			lx->pos += 2;
		} else if (ch == '`') {
			r = substitution(lx, false);
		} else if (ch == ';' &&
			   (lx->in_command || (lx->nifs > 0 && closes_branch(lx, at + 1)))) {
			break; /* "then A=1; fi" */
		} else if (lx->word == CONFIG_WORD_REGEX && strchr("()|", ch)) {
			/* bash reads [[ $A =~ ^(a|b)$ ]] so: these are the regex's */
			r = out_put(lx, at, &ch, 1);
			lx->pos++;
		} else if (is_operator(ch)) {
			return operator_error(lx, at, expected, true);
		} else if (ch == '~' && tilde_expands) {
			return config__error(lx, at,
					     "expected a path without a leading '~': lockstep "
					     "does not read the environment, so write the full path");
		} else {
			r = out_put(lx, at, &ch, 1);
			lx->pos++;
			colon = ch == ':';
		}
		if (r < 0)
			return r;
		tilde_expands = colon;
	}
	return 0;
}

/* After the value: blanks, then the end of the line or a comment. */
static int check_line_end(struct config_lexer *lx, size_t name, size_t len)
{
	size_t word, wlen;

	config__skip_blanks(lx);
	if (lx->pos == lx->len || lx->s[lx->pos] == '#')
		return 0;
	if (is_operator(lx->s[lx->pos]))
		return operator_error(lx, lx->pos, "expected end of line", true);
	word = lx->pos;
	wlen = config__scan_name(lx);
	if (wlen > 0 && lx->pos < lx->len && lx->s[lx->pos] == '=')
		return config__error(lx, word,
				     "expected end of line after the value of %.*s, found "
				     "another assignment '%.*s=': one assignment per line",
				     (int)len, lx->s + name, (int)(wlen < 64 ? wlen : 64),
				     lx->s + word);
	for (wlen = 0; word + wlen < lx->len && !config__is_blank(lx->s[word + wlen]); wlen++)
		;
	return config__error(lx, word,
			     "expected end of line after the value of %.*s, found '%.*s': "
			     "a shell would run it as a command, and lockstep never runs commands "
			     "(quote the value if the space belongs to it)",
			     (int)len, lx->s + name, (int)(wlen < 64 ? wlen : 64), lx->s + word);
}

static bool word_is(const struct config_lexer *lx, size_t pos, size_t len, const char *list)
{
	/* list is "|word|word|" */
	for (const char *p = list; (p = strchr(p, '|')) && p[1]; p++)
		if (strncmp(p + 1, lx->s + pos, len) == 0 && p[1 + len] == '|')
			return true;
	return false;
}

#define SHELL_FLOW "|if|then|else|elif|fi|for|while|until|do|done|case|esac|function|select|in|"
#define ASSIGN_ONLY \
	"lockstep configs are assignments only (NAME=value) and nothing in them is executed"

/* A line that starts with something other than a name. */
int config__not_a_name(struct config_lexer *lx)
{
	size_t at = lx->pos;
	char ch = lx->s[at], buf[8];

	if (strchr("[{}()!", ch))
		return config__error(lx, at,
				     "expected an assignment, found shell control flow '%c': %s",
				     ch, ASSIGN_ONLY);
	if (ch == '.' && (at + 1 == lx->len || config__is_blank(lx->s[at + 1])))
		return config__error(lx, at,
				     "expected an assignment, found '.': configs cannot include "
				     "other files; %s",
				     ASSIGN_ONLY);
	if (ch >= '0' && ch <= '9')
		return config__error(lx, at,
				     "expected an assignment NAME=value, found '%c': a name "
				     "starts with a letter or '_'",
				     ch);
	return config__error(lx, at, "expected an assignment NAME=value, found %s",
			     config__describe(lx, at, buf, sizeof(buf)));
}

/* A name that is not followed by '='. */
int config__not_assignment(struct config_lexer *lx, size_t name, size_t len)
{
	size_t at = lx->pos;
	char buf[8];

	if ((at == lx->len || config__is_blank(lx->s[at]) || lx->s[at] == ';') &&
	    word_is(lx, name, len, SHELL_FLOW))
		return config__error(lx, name,
				     "expected an assignment, found shell control flow "
				     "'%.*s': %s",
				     (int)len, lx->s + name, ASSIGN_ONLY);
	if (word_is(lx, name, len, "|source|"))
		return config__error(lx, name,
				     "expected an assignment, found 'source': configs cannot "
				     "include other files; %s",
				     ASSIGN_ONLY);
	if (at == lx->len)
		return config__error(lx, at, "expected '=' and a value after %.*s", (int)len,
				     lx->s + name);
	if (config__is_blank(lx->s[at])) {
		config__skip_blanks(lx);
		if (lx->pos < lx->len && lx->s[lx->pos] == '=')
			return config__error(lx, at,
					     "expected '=' right after %.*s: no spaces around "
					     "'=' in an assignment",
					     (int)len, lx->s + name);
		return config__error(lx, name, "expected an assignment, found the command '%.*s': %s",
				     (int)len, lx->s + name, ASSIGN_ONLY);
	}
	if (lx->s[at] == '+' && at + 1 < lx->len && lx->s[at + 1] == '=')
		return config__error(lx, at,
				     "expected '=' after %.*s, found '+=': appending is not "
				     "supported; write %.*s=\"${%.*s}more\"",
				     (int)len, lx->s + name, (int)len, lx->s + name, (int)len,
				     lx->s + name);
	if (lx->s[at] == '[')
		return config__error(lx, at,
				     "expected '=' after %.*s, found '[': arrays are not "
				     "supported",
				     (int)len, lx->s + name);
	if (is_operator(lx->s[at])) {
		char expected[CONFIG_NAME_MAX + 32];

		snprintf(expected, sizeof(expected), "expected '=' after %.*s", (int)len, lx->s + name);
		return operator_error(lx, at, expected, false);
	}
	return config__error(lx, at, "expected '=' after %.*s, found %s", (int)len, lx->s + name,
			     config__describe(lx, at, buf, sizeof(buf)));
}

static int check_bytes(struct config_lexer *lx)
{
	for (size_t i = 0; i < lx->len; i++) {
		unsigned char ch = (unsigned char)lx->s[i];

		/* a newline is inside a quote that spans lines (statement_end) */
		if ((ch >= 0x20 && ch != 0x7f) || ch == '\t' || ch == '\n')
			continue;
		if (ch == '\r')
			return config__error(lx, i,
					     "expected text, found a carriage return (DOS line "
					     "endings? convert the file with dos2unix)");
		if (ch == '\0')
			return config__error(lx, i,
					     "expected text, found a NUL byte (is this a binary "
					     "file?)");
		return config__error(lx, i, "expected text, found the control character 0x%02x", ch);
	}
	return 0;
}

int config__assignment(struct config_lexer *lx, bool *more)
{
	size_t name, len;
	bool exported = false;
	int r;

	*more = false;
	name = lx->pos;
	len = config__scan_name(lx);
	if (len == 6 && memcmp(lx->s + name, "export", 6) == 0 && lx->pos < lx->len &&
	    config__is_blank(lx->s[lx->pos])) {
		exported = true;
		config__skip_blanks(lx);
		if (lx->pos == lx->len || lx->s[lx->pos] == '#')
			return config__error(lx, lx->pos, "expected NAME=value after 'export'");
		name = lx->pos;
		len = config__scan_name(lx);
	}
	if (len == 0)
		return config__not_a_name(lx);
	if (exported) {
		/* "export NAME" alone: exported, as it was; configs have no
		 * environment, so nothing changes */
		size_t p = lx->pos;

		while (p < lx->len && config__is_blank(lx->s[p]))
			p++;
		if (p == lx->len || lx->s[p] == '#') {
			lx->pos = p;
			return 0;
		}
	}
	if (len > CONFIG_NAME_MAX)
		return config__error(lx, name + CONFIG_NAME_MAX,
				     "expected a name of at most %d characters", CONFIG_NAME_MAX);
	/* NAME+=more appends, as MMTests' NAS_MPI_OPTS+=" --allow-run-as-root" */
	bool append = lx->len - lx->pos >= 2 && lx->s[lx->pos] == '+' && lx->s[lx->pos + 1] == '=';
	lx->pos += append;
	if (lx->pos == lx->len || lx->s[lx->pos] != '=')
		return config__not_assignment(lx, name, len);
	lx->pos++;
	lx->out_len = 0;
	if (append && !lx->dry) {
		const struct config_var *old = config__lookup(lx->c, lx->s + name, len);

		if (old && (r = out_put(lx, name, old->value, strlen(old->value))) < 0)
			return r;
	}
	r = config__heredoc_value(lx, name, len);
	if (r != 0)
		return r < 0 ? r : 0;
	r = config__parse_word(lx, "expected end of line");
	if (r < 0)
		return r;
	config__skip_blanks(lx);
	if (lx->nifs > 0 && lx->pos < lx->len && lx->s[lx->pos] == ';' &&
	    closes_branch(lx, lx->pos + 1)) {
		/* ";;" is left whole for the case */
		lx->pos += lx->pos + 1 >= lx->len || lx->s[lx->pos + 1] != ';';
		*more = true;
	} else if ((r = check_line_end(lx, name, len)) < 0) {
		return r;
	}
	if (lx->dry)
		return 0;
	r = config__set(&lx->c->vars, lx->s + name, len, lx->out ? lx->out : "", lx->out_len,
			lx->file, lx->line, config__column(lx, name));
	if (r == -ENOSPC)
		return config__error(lx, name,
				     "expected at most %d distinct names; %.*s would be "
				     "one more",
				     CONFIG_NAMES_MAX, (int)len, lx->s + name);
	return r;
}

int config__expand(struct config_lexer *lx, const char *text, size_t len, int first_line)
{
	const char *save_s = lx->s;
	size_t save_len = lx->len, save_pos = lx->pos, start = 0;
	int save_line = lx->line, r = 0;

	lx->out_len = 0;
	lx->line = first_line;
	while (start < len && r == 0) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;

		lx->s = text + start;
		lx->len = end - start;
		lx->pos = 0;
		while (lx->pos < lx->len && r == 0) {
			size_t at = lx->pos;
			char ch = lx->s[at];

			if (ch == '$') {
				r = parse_dollar(lx, true);
			} else if (ch == '`') {
				r = substitution(lx, true);
			} else if (ch == '\\' && at + 1 < lx->len && strchr("\\$`", lx->s[at + 1])) {
				r = out_put(lx, at, lx->s + at + 1, 1);
				lx->pos += 2;
			} else {
				r = out_put(lx, at, &ch, 1);
				lx->pos++;
			}
		}
		if (r == 0 && nl)
			r = out_put(lx, lx->len, "\n", 1);
		start = end + 1;
		lx->line++;
	}
	lx->s = save_s;
	lx->len = save_len;
	lx->pos = save_pos;
	lx->line = save_line;
	return r;
}

/*
 * Where a quote opened in s[0..len) is still open at its end: 0 when none.
 * MMTests' configs spread MONITOR_FTRACE_EVENTS="..." over lines; a shell
 * reads on to the closing quote, and so does the reader.  A '#' starting a
 * word begins a comment, whose quotes are no quotes.
 */
static char open_quote(const char *s, size_t len, char open)
{
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (open == '\'') {
			if (ch == '\'')
				open = 0;
		} else if (ch == '\\') {
			i++;
		} else if (open == '"') {
			if (ch == '"')
				open = 0;
		} else if (ch == '"' || ch == '\'') {
			open = ch;
		} else if (ch == '#' && (i == 0 || config__is_blank(s[i - 1]))) {
			return 0;
		}
	}
	return open;
}

/* The end of the statement starting at start: its line, or the line where
 * a quote opened in it closes (the end of the text when it never does:
 * the lexer then says which quote is open). */
static size_t statement_end(const char *text, size_t len, size_t start, int *lines)
{
	char open = 0;

	*lines = 1;
	for (;;) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;

		open = open_quote(text + start, end - start, open);
		if (!open || !nl)
			return end;
		/* the newline belongs to the quoted text */
		start = end + 1;
		++*lines;
	}
}

static bool blank_or_comment(const struct config_lexer *lx)
{
	size_t i = 0;

	while (i < lx->len && (config__is_blank(lx->s[i]) || lx->s[i] == '\r'))
		i++;
	return i == lx->len || lx->s[i] == '#';
}

int config__parse(struct config *c, const char *file, const char *text, size_t len,
		  struct config_diag *err)
{
	struct config_lexer lx = { .c = c, .file = file, .err = err, .line = c->first_line };
	size_t start = 0;
	int r = 0;

	c->first_line = 0;

	while (start < len && r == 0) {
		int lines;
		size_t end = statement_end(text, len, start, &lines);

		lx.s = text + start;
		lx.len = end - start;
		lx.pos = 0;
		lx.depth = 0;
		if (lx.line > INT_MAX - lines) {
			r = config__error(&lx, 0, "expected at most %d lines", INT_MAX - 1);
			break;
		}
		lx.line++;
		if (lx.len > CONFIG_LINE_MAX) {
			r = config__error(&lx, CONFIG_LINE_MAX,
					  "expected a line of at most %d bytes", CONFIG_LINE_MAX);
		} else if ((r = check_bytes(&lx)) == 0) {
			/* $? is grep's on the next line that holds a statement */
			if (!blank_or_comment(&lx)) {
				lx.status_ready = lx.status_pending;
				lx.status_pending = false;
			}
			r = config__statements(&lx);
		}
		lx.line += lines - 1;
		start = end + 1;
		if (r == 0 && lx.heredoc.pending)
			r = config__read_heredoc(&lx, text, len, &start);
		lx.heredoc.pending = false;
		free(lx.heredoc.target);
		lx.heredoc.target = NULL;
	}
	if (r == 0)
		r = config__cond_end(&lx);
	if (r == 0 && c->include_depth == 0) {
		config__ship_paths(c);
		config__warn_uncalled(c);
	}
	for (int i = 0; i < lx.nifs; i++)
		free(lx.ifs[i].word);
	free(lx.out);
	free(lx.last_echo);
	return r;
}
