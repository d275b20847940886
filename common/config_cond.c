// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * if [ TEST ]; then ... elif [ TEST ]; then ... else ... fi around
 * assignments: the part of shell that MMTests configs use to clamp a value
 * (if [ $HACKBENCH_MAX_GROUPS -gt 296 ]; then export HACKBENCH_MAX_GROUPS=296;
 * fi).  A test compares integers or strings that the config itself defines;
 * it never runs a command or looks at a file, so a config still means the
 * same wherever it is read.  Everything else a shell would accept here is an
 * error naming its place.  The grammar and every message: docs/config.md.
 *
 * bash's [[ TEST ]] is read too, because MMTests' hackbench configs clamp
 * i386 with if [[ `uname -m` =~ i.86 ]]: the same tests, && || ! inside, a
 * glob pattern after == = != (fnmatch(3)) and an extended regular
 * expression after =~ (regcomp(3), unanchored, as bash).  `uname -m` is
 * read from the fact MACHINE by config_parse.c, never run.
 *
 * A branch that is not taken is read "dry": its syntax is checked like any
 * other line (a config that is wrong is wrong whatever the facts), but
 * nothing in it is assigned, warned about or evaluated.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "xalloc.h"

#define COMPARISONS "-eq -ne -gt -ge -lt -le = == !="
#define NO_COMMANDS "lockstep never runs commands; a test compares numbers and strings only"

static bool is_delim(const struct config_lexer *lx, size_t pos)
{
	return pos >= lx->len || config__is_blank(lx->s[pos]) || lx->s[pos] == ';' ||
	       lx->s[pos] == '&' || lx->s[pos] == '|';
}

/* The unquoted word w, alone, at pos. */
static bool tok_is(const struct config_lexer *lx, size_t pos, const char *w)
{
	size_t n = strlen(w);

	return lx->len - pos >= n && memcmp(lx->s + pos, w, n) == 0 && is_delim(lx, pos + n);
}

static bool word_at(const struct config_lexer *lx, const char *w)
{
	return lx->pos <= lx->len && tok_is(lx, lx->pos, w);
}

/* The word at pos for "found ...": "'then'", "the end of the line". */
static const char *describe_tok(const struct config_lexer *lx, size_t pos, char *buf, size_t size)
{
	size_t n = 0;

	if (pos >= lx->len)
		return "the end of the line";
	while (pos + n < lx->len && !config__is_blank(lx->s[pos + n]) && n < 40 &&
	       (n == 0 || lx->s[pos + n] != ';'))
		n++;
	snprintf(buf, size, "'%.*s'", (int)n, lx->s + pos);
	return buf;
}

static size_t next_tok(const struct config_lexer *lx, size_t pos)
{
	while (pos < lx->len && !config__is_blank(lx->s[pos]))
		pos++;
	while (pos < lx->len && config__is_blank(lx->s[pos]))
		pos++;
	return pos;
}

static const char *const comparisons[] = { "-eq", "-ne", "-gt", "-ge", "-lt", "-le",
					   "=",	  "==",	 "!=",	"=~",  NULL };
#define OP_REGEX 9 /* =~, in [[ ]] only */

/* The word that closes the test being read. */
static const char *closer(const struct config_lexer *lx)
{
	return lx->dbl ? "]]" : "]";
}

/* After a word that stands alone: -a and -o in [ ], && and || in [[ ]]. */
static bool ends_primary(const struct config_lexer *lx)
{
	const char *s = lx->s + lx->pos;

	if (lx->pos == lx->len || word_at(lx, closer(lx)))
		return true;
	if (!lx->dbl)
		return word_at(lx, "-a") || word_at(lx, "-o");
	return lx->len - lx->pos >= 2 && (memcmp(s, "&&", 2) == 0 || memcmp(s, "||", 2) == 0);
}

static int comparison_at(const struct config_lexer *lx, size_t pos)
{
	for (int i = 0; comparisons[i]; i++)
		if (tok_is(lx, pos, comparisons[i]))
			return i;
	return -1;
}

/* One operand, expanded like a value; a copy the caller frees.  Unquoted
 * expansions are never split into several words (as in bash's [[ ]]), so
 * [ $EMPTY = x ] compares "" with "x" instead of failing. */
static int operand(struct config_lexer *lx, const char *after, char **out)
{
	char buf[48];
	int r;

	config__skip_blanks(lx);
	if (lx->pos == lx->len || tok_is(lx, lx->pos, closer(lx)))
		return config__error(lx, lx->pos, "expected a word after %s, found %s", after,
				     describe_tok(lx, lx->pos, buf, sizeof(buf)));
	lx->out_len = 0;
	r = config__parse_word(lx, lx->dbl ? "expected a word or ']]' in the test"
					   : "expected a word or ']' in the test");
	if (r < 0)
		return r;
	*out = xstrndup(lx->out ? lx->out : "", lx->out_len);
	return 0;
}

static int integer(struct config_lexer *lx, size_t pos, const char *v, const char *side,
		   const char *op, int64_t *out)
{
	char shown[CONFIG_SHOW_SIZE];
	const char *d = v + strspn(v, " \t+-");

	config__show(v, shown, sizeof(shown));
	/* bash's [[ ]] reads 010 as 8, [ ] as 10: neither guess is made */
	if (lx->dbl && d[0] == '0' && isdigit((unsigned char)d[1]))
		return config__error(lx, pos,
				     "expected an integer without a leading 0 on the %s of "
				     "%s, found %s: [[ ]] would read it as octal",
				     side, op, shown);
	if (config__parse_int(v, out))
		return 0;
	return config__error(lx, pos, "expected an integer on the %s of %s, found %s", side, op, shown);
}

/* Where the bracket expression starting at p[i] == '[' ends (its ']'). */
static size_t bracket_end(const char *p, size_t i)
{
	size_t j = i + 1;

	j += p[j] == '^';
	j += p[j] == ']';
	while (p[j] && p[j] != ']') {
		const char *close;

		if (p[j] == '[' && p[j + 1] && strchr(":.=", p[j + 1])) {
			char end[3] = { p[j + 1], ']', 0 };

			close = strstr(p + j + 2, end);
			j = close ? (size_t)(close - p) + 2 : strlen(p);
			continue;
		}
		j++;
	}
	return p[j] ? j : strlen(p) - 1;
}

/* Decimal digits at p[j], capped (a bigger count is refused anyway). */
static size_t count_at(const char *p, size_t j, size_t *v)
{
	for (*v = 0; isdigit((unsigned char)p[j]); j++)
		*v = *v < 100000 ? *v * 10 + (size_t)(p[j] - '0') : *v;
	return j;
}

/* {m}, {m,} or {m,n} at p[*i]: how many copies regcomp makes (*i then at
 * the '}'), or 0 when it is no interval. */
static size_t interval(const char *p, size_t *i)
{
	size_t j = *i + 1, lo, hi;

	if (!isdigit((unsigned char)p[j]))
		return 0;
	j = count_at(p, j, &lo);
	hi = lo;
	if (p[j] == ',' && isdigit((unsigned char)p[j + 1]))
		j = count_at(p, j + 1, &hi);
	else if (p[j] == ',')
		hi = lo + 1, j++; /* {m,}: m copies and a star */
	if (p[j] != '}')
		return 0;
	*i = j;
	return hi > lo ? hi : lo > 0 ? lo : 1;
}

/*
 * What regcomp(3) would build from p, bounded.  glibc copies what {m,n}
 * repeats once per repetition, so (a{100}){100} is ten thousand atoms and
 * a line of such groups takes gigabytes; back-references (a glibc
 * extension to ERE) can take exponential time.
 */
static int regex_check(struct config_lexer *lx, size_t pos, const char *p)
{
	size_t group[CONFIG_REGEX_MAX + 2] = { 0 }, depth = 0, last = 0, total = 0, n = strlen(p);
	char shown[CONFIG_SHOW_SIZE];

	if (n > CONFIG_REGEX_MAX)
		return config__error(lx, pos,
				     "expected a regular expression of at most %d bytes "
				     "after =~",
				     CONFIG_REGEX_MAX);
	for (size_t i = 0; i < n; i++) {
		size_t copies = 1, add = 1;

		if (p[i] == '\\' && p[i + 1] >= '1' && p[i + 1] <= '9')
			return config__error(lx, pos,
					     "expected an extended regular expression after "
					     "=~, found the back-reference '\\%c': back-references "
					     "are not supported",
					     p[i + 1]);
		if (p[i] == '\\') {
			i += p[i + 1] != '\0';
		} else if (p[i] == '[') {
			i = bracket_end(p, i);
		} else if (p[i] == '(') {
			group[++depth] = 0; /* depth <= n: the array has room */
			add = last = 0;
		} else if (p[i] == ')' && depth > 0) {
			last = group[depth--];
			group[depth] += last;
			add = 0;
		} else if (p[i] == '|') {
			add = last = 0;
		} else if (p[i] == '*' || p[i] == '?') {
			add = 0;
		} else if (p[i] == '+') {
			copies = 2; /* a+ is built as aa* */
		} else if (p[i] == '{' && last > 0) {
			copies = interval(p, &i);
			add = copies == 0;
		}
		if (copies > 1) {
			if (copies > CONFIG_REGEX_ATOMS_MAX)
				add = CONFIG_REGEX_ATOMS_MAX + 1;
			else
				add = last * (copies - 1);
			last *= copies;
		} else if (add) {
			last = 1;
		}
		group[depth] += add;
		total += add;
		if (total > CONFIG_REGEX_ATOMS_MAX) {
			config__show(p, shown, sizeof(shown));
			return config__error(lx, pos,
					     "expected a smaller regular expression after =~, "
					     "found %s: with what {m,n} repeats counted so often, it "
					     "has more than %d atoms",
					     shown, CONFIG_REGEX_ATOMS_MAX);
		}
	}
	return 0;
}

/* [[ A =~ ERE ]]: unanchored, as bash. */
static int regex_match(struct config_lexer *lx, size_t lpos, const char *a, size_t rpos,
		       const char *ere, bool *res)
{
	char shown[CONFIG_SHOW_SIZE], why[128];
	regex_t re;
	int r;

	if (strlen(a) > CONFIG_MATCH_MAX)
		return config__error(lx, lpos,
				     "expected at most %d bytes on the left of =~, found "
				     "%zu",
				     CONFIG_MATCH_MAX, strlen(a));
	r = regex_check(lx, rpos, ere);
	if (r < 0)
		return r;
	r = regcomp(&re, ere, REG_EXTENDED | REG_NOSUB);
	if (r != 0) {
		regerror(r, &re, why, sizeof(why));
		config__show(ere, shown, sizeof(shown));
		return config__error(lx, rpos,
				     "expected an extended regular expression after =~, "
				     "found %s: %s",
				     shown, why);
	}
	r = regexec(&re, a, 0, NULL, 0);
	regfree(&re);
	if (r != 0 && r != REG_NOMATCH)
		return config__error(lx, rpos,
				     "expected a regular expression that can be matched "
				     "within the memory it may take, after =~");
	*res = r == 0;
	return 0;
}

static int compare(struct config_lexer *lx, size_t lpos, const char *a, int op, size_t rpos,
		   const char *b, bool *res)
{
	const char *name = comparisons[op];
	int64_t x, y;
	int r;

	if (lx->dry) /* not evaluated: "" -gt 1 in a branch not taken is no error */
		return 0;
	if (op == OP_REGEX)
		return regex_match(lx, lpos, a, rpos, b, res);
	if (name[0] != '-') {
		/* in [[ ]] the right side is a pattern, as in bash */
		bool same = lx->dbl ? fnmatch(b, a, 0) == 0 : strcmp(a, b) == 0;

		*res = same == (name[0] != '!');
		return 0;
	}
	r = integer(lx, lpos, a, "left", name, &x);
	if (r == 0)
		r = integer(lx, rpos, b, "right", name, &y);
	if (r < 0)
		return r;
	{
		/* in the order of comparisons[] */
		const bool by_op[] = { x == y, x != y, x > y, x >= y, x < y, x <= y };

		*res = by_op[op];
	}
	return 0;
}

/* A word where a comparison should be. */
static int bad_comparison(struct config_lexer *lx, size_t at)
{
	const char *ops = lx->dbl ? COMPARISONS " =~ or ']]'" : COMPARISONS " or ']'";
	char buf[48];

	if (tok_is(lx, at, "=~"))
		return config__error(lx, at,
				     "expected one of %s, found '=~': a regular expression "
				     "is matched in [[ ]]: if [[ $A =~ ERE ]]",
				     ops);
	if (lx->dbl && (tok_is(lx, at, "-a") || tok_is(lx, at, "-o")))
		return config__error(lx, at,
				     "expected one of %s, found '%.2s': inside [[ ]] write "
				     "%s",
				     ops, lx->s + at, lx->s[at + 1] == 'a' ? "&&" : "||");
	if (lx->s[at] == '<' || lx->s[at] == '>')
		return config__error(lx, at,
				     "expected one of %s, found '%c': strings are not "
				     "ordered%s",
				     ops, lx->s[at], lx->dbl ? "" : ", and in [ ] it would redirect");
	if (tok_is(lx, at, "-nt") || tok_is(lx, at, "-ot") || tok_is(lx, at, "-ef"))
		return config__error(lx, at,
				     "expected one of %s, found '%.3s': lockstep does not "
				     "look at files",
				     ops, lx->s + at);
	if (lx->dbl)
		return config__error(lx, at,
				     "expected one of " COMPARISONS " =~, &&, || or ']]' "
				     "after the word, found %s",
				     describe_tok(lx, at, buf, sizeof(buf)));
	return config__error(lx, at,
			     "expected one of " COMPARISONS ", -a, -o or ']' after the "
			     "word, found %s",
			     describe_tok(lx, at, buf, sizeof(buf)));
}

/* A test operator that looks at something other than the config. */
static int bad_unary(struct config_lexer *lx, size_t at)
{
	char op = lx->s[at + 1];

	if (strchr("bcdefghkLprsSuwxOGN", op))
		return config__error(lx, at,
				     "expected a test of numbers or strings, found the file "
				     "test '-%c': lockstep does not look at files, so that a config "
				     "means the same wherever it is read",
				     op);
	if (op == 'v')
		return config__error(lx, at,
				     "expected a test of numbers or strings, found '-v': "
				     "write [ -n \"$NAME\" ]");
	return config__error(lx, at,
			     "expected a test of numbers or strings, found '-%c': only "
			     "-z, -n and " COMPARISONS " are supported",
			     op);
}

/* WORD, -z WORD, -n WORD or WORD OP WORD. */
static int primary(struct config_lexer *lx, bool *res)
{
	size_t at = lx->pos, rpos;
	char *a = NULL, *b = NULL, buf[48];
	int op, r;

	if (at == lx->len || tok_is(lx, at, closer(lx)))
		return config__error(lx, at, "expected a test, found %s",
				     describe_tok(lx, at, buf, sizeof(buf)));
	if (lx->s[at] == '(' || (lx->s[at] == '\\' && at + 1 < lx->len && lx->s[at + 1] == '('))
		return config__error(lx, at,
				     "expected a test, found '(': parentheses in tests are "
				     "not supported; use several if blocks");
	/* "-f x" is a file test, but in "-f = x" the -f is a string. */
	if (lx->s[at] == '-' && at + 1 < lx->len && isalpha((unsigned char)lx->s[at + 1]) &&
	    is_delim(lx, at + 2) && comparison_at(lx, next_tok(lx, at)) < 0) {
		if (lx->s[at + 1] != 'z' && lx->s[at + 1] != 'n')
			return bad_unary(lx, at);
		lx->pos += 2;
		r = operand(lx, lx->s[at + 1] == 'z' ? "-z" : "-n", &a);
		if (r == 0)
			*res = (a[0] == '\0') == (lx->s[at + 1] == 'z');
		goto out;
	}
	r = operand(lx, lx->dbl ? "'[['" : "'['", &a);
	if (r < 0)
		goto out;
	config__skip_blanks(lx);
	if (ends_primary(lx)) {
		*res = a[0] != '\0';
		r = 0;
		goto out;
	}
	op = comparison_at(lx, lx->pos);
	if (op < 0 || (op == OP_REGEX && !lx->dbl)) {
		r = bad_comparison(lx, lx->pos);
		goto out;
	}
	lx->pos += strlen(comparisons[op]);
	config__skip_blanks(lx);
	rpos = lx->pos;
	if (lx->dbl && op == OP_REGEX)
		lx->word = CONFIG_WORD_REGEX;
	else if (lx->dbl && comparisons[op][0] != '-')
		lx->word = CONFIG_WORD_GLOB;
	r = operand(lx, comparisons[op], &b);
	lx->word = CONFIG_WORD_VALUE;
	if (r == 0)
		r = compare(lx, at, a, op, rpos, b, res);
out:
	free(a);
	free(b);
	return r;
}

/* ! ... (any number of them) before a primary. */
static int negation(struct config_lexer *lx, bool *res)
{
	bool neg = false;
	int r;

	for (config__skip_blanks(lx); word_at(lx, "!"); config__skip_blanks(lx)) {
		neg = !neg;
		lx->pos++;
	}
	r = primary(lx, res);
	*res ^= neg;
	return r;
}

/* The operator op at lx->pos: -a and -o are words, && and || need no blank. */
static size_t op_at(const struct config_lexer *lx, const char *op)
{
	size_t n = op ? strlen(op) : 0;

	if (n == 0 || lx->len - lx->pos < n || memcmp(lx->s + lx->pos, op, n) != 0)
		return 0;
	return op[0] != '-' || is_delim(lx, lx->pos + n) ? n : 0;
}

/*
 * left (op right)*: -a over negations, -o over -a, && and || over [ ].  A
 * right side whose value cannot change the result is read dry, as a shell
 * would not run it: [ -n "$N" ] && [ $N -gt 4 ] is no error when N is empty.
 */
typedef int test_fn(struct config_lexer *lx, bool *res, const char *after);

static int chain(struct config_lexer *lx, bool *res, const char *after, test_fn *side,
		 const char *and_op, const char *or_op)
{
	int r = side(lx, res, after);

	while (r == 0) {
		bool is_and, rhs = false, dry = lx->dry;
		size_t n;

		config__skip_blanks(lx);
		is_and = (n = op_at(lx, and_op)) > 0;
		if (!is_and && (n = op_at(lx, or_op)) == 0)
			break;
		lx->pos += n;
		lx->dry = dry || *res != is_and;
		r = side(lx, &rhs, is_and ? "'&&'" : "'||'");
		lx->dry = dry;
		if (!lx->dry && *res == is_and)
			*res = rhs;
	}
	return r;
}

static int neg_side(struct config_lexer *lx, bool *res, const char *after)
{
	(void)after;
	return negation(lx, res);
}

static int and_side(struct config_lexer *lx, bool *res, const char *after)
{
	return chain(lx, res, after, neg_side, "-a", NULL);
}

static int dbl_and_side(struct config_lexer *lx, bool *res, const char *after)
{
	return chain(lx, res, after, neg_side, "&&", NULL);
}

/* [[ TEST ]]: && over !, || over &&, as in bash. */
static int double_bracket(struct config_lexer *lx, bool *res)
{
	size_t at = lx->pos;
	char buf[48];
	int r;

	lx->pos += 2;
	lx->dbl = true;
	r = chain(lx, res, NULL, dbl_and_side, NULL, "||");
	lx->dbl = false;
	if (r < 0)
		return r;
	config__skip_blanks(lx);
	if (word_at(lx, "-a") || word_at(lx, "-o"))
		return config__error(lx, lx->pos,
				     "expected &&, || or ']]' after the test, found "
				     "'%.2s': inside [[ ]] write %s",
				     lx->s + lx->pos, lx->s[lx->pos + 1] == 'a' ? "&&" : "||");
	if (!word_at(lx, "]]"))
		return config__error(lx, lx->pos,
				     "expected ']]' to close the '[[' at column %d, "
				     "found %s",
				     config__column(lx, at),
				     describe_tok(lx, lx->pos, buf, sizeof(buf)));
	lx->pos += 2;
	return 0;
}

/* [ TEST ] or [[ TEST ]]: the words between brackets. */
int config__bracket(struct config_lexer *lx, bool *res, const char *after)
{
	size_t at;
	char buf[48];
	int r;

	config__skip_blanks(lx);
	at = lx->pos;
	if (word_at(lx, "[["))
		return double_bracket(lx, res);
	if (!word_at(lx, "[")) {
		if (at < lx->len && (lx->s[at] == '`' ||
				     (lx->s[at] == '$' && at + 1 < lx->len && lx->s[at + 1] == '(')))
			return config__error(lx, at,
					     "expected '[' after %s, found command "
					     "substitution '%s': " NO_COMMANDS,
					     after, lx->s[at] == '`' ? "`" : "$(");
		if (at == lx->len || lx->s[at] == '#' || lx->s[at] == ';')
			return config__error(lx, at, "expected '[' after %s, found %s", after,
					     config__describe(lx, at, buf, sizeof(buf)));
		return config__error(lx, at,
				     "expected '[' after %s, found the command %s: " NO_COMMANDS,
				     after, describe_tok(lx, at, buf, sizeof(buf)));
	}
	lx->pos++;
	r = chain(lx, res, NULL, and_side, NULL, "-o");
	if (r < 0)
		return r;
	config__skip_blanks(lx);
	if (!word_at(lx, "]"))
		return config__error(lx, lx->pos,
				     "expected ']' to close the '[' at column %d, "
				     "found %s",
				     config__column(lx, at),
				     describe_tok(lx, lx->pos, buf, sizeof(buf)));
	lx->pos++;
	return 0;
}

/* [ ] && [ ] || [ ] after if or elif. */
static int condition(struct config_lexer *lx, const char *keyword, bool *res)
{
	char after[16];

	snprintf(after, sizeof(after), "'%s'", keyword);
	*res = false;
	return chain(lx, res, after, config__bracket, "&&", "||");
}

/* The branch being read is taken only when every enclosing one is. */
void config__update_dry(struct config_lexer *lx)
{
	lx->dry = lx->nifs > 0 && !lx->ifs[lx->nifs - 1].active;
}

/* After "if TEST" or "elif TEST": "; then" may follow, or the end of the line. */
static int after_test(struct config_lexer *lx, const char *keyword)
{
	char buf[48];

	config__skip_blanks(lx);
	lx->want_then = true;
	if (lx->pos < lx->len && lx->s[lx->pos] == ';') {
		lx->pos++;
		return 0;
	}
	if (lx->pos == lx->len || lx->s[lx->pos] == '#')
		return 0;
	return config__error(lx, lx->pos,
			     "expected ';' or the end of the line after the test of "
			     "'%s', found %s",
			     keyword, describe_tok(lx, lx->pos, buf, sizeof(buf)));
}

static int cond_if(struct config_lexer *lx)
{
	struct config_if *top;
	size_t at = lx->pos;
	bool res = false, outer = !lx->dry;
	int r;

	if (lx->nifs == CONFIG_IF_DEPTH_MAX)
		return config__error(lx, at, "expected at most %d nested 'if' blocks",
				     CONFIG_IF_DEPTH_MAX);
	lx->pos += 2;
	r = condition(lx, "if", &res);
	if (r < 0)
		return r;
	top = &lx->ifs[lx->nifs++];
	top->line = lx->line;
	top->column = config__column(lx, at);
	top->active = outer && res;
	top->taken = !outer || res;
	top->in_else = false;
	top->is_case = false;
	top->word = NULL;
	config__update_dry(lx);
	return after_test(lx, "if");
}

static struct config_if *open_if(struct config_lexer *lx, const char *keyword)
{
	if (lx->nifs > 0 && lx->ifs[lx->nifs - 1].is_case) {
		config__error(lx, lx->pos,
			      "expected ';;' or 'esac', found '%s' inside the 'case' "
			      "of line %d",
			      keyword, lx->ifs[lx->nifs - 1].line);
		return NULL;
	}
	if (lx->nifs > 0)
		return &lx->ifs[lx->nifs - 1];
	config__error(lx, lx->pos, "expected an assignment, found '%s' with no 'if' open", keyword);
	return NULL;
}

static int cond_elif(struct config_lexer *lx)
{
	struct config_if *top = open_if(lx, "elif");
	bool res = false;
	int r;

	if (!top)
		return -EINVAL;
	if (top->in_else)
		return config__error(lx, lx->pos,
				     "expected 'fi', found 'elif' after the 'else' of "
				     "the 'if' at line %d",
				     top->line);
	lx->pos += 4;
	lx->dry = top->taken; /* as a shell, test only while no branch was taken */
	r = condition(lx, "elif", &res);
	if (r < 0)
		return r;
	top->active = !top->taken && res;
	top->taken = top->taken || res;
	config__update_dry(lx);
	return after_test(lx, "elif");
}

static int cond_else(struct config_lexer *lx)
{
	struct config_if *top = open_if(lx, "else");

	if (!top)
		return -EINVAL;
	if (top->in_else)
		return config__error(lx, lx->pos,
				     "expected 'fi', found a second 'else' for the "
				     "'if' at line %d",
				     top->line);
	lx->pos += 4;
	top->active = !top->taken;
	top->taken = true;
	top->in_else = true;
	config__update_dry(lx);
	return 0;
}

/* 1 when the line is done. */
static int cond_fi(struct config_lexer *lx)
{
	char buf[48];

	if (!open_if(lx, "fi"))
		return -EINVAL;
	lx->nifs--;
	config__update_dry(lx);
	lx->pos += 2;
	config__skip_blanks(lx);
	if (lx->pos < lx->len && lx->s[lx->pos] == ';') {
		lx->pos++;
		return 0;
	}
	if (lx->pos == lx->len || lx->s[lx->pos] == '#')
		return 1;
	return config__error(lx, lx->pos,
			     "expected ';' or the end of the line after 'fi', found "
			     "%s",
			     describe_tok(lx, lx->pos, buf, sizeof(buf)));
}

/* One line: assignments and the keywords of if blocks, joined by ';'. */
/* What $? holds after a statement: 0 after an assignment or a command the
 * reader carries out as a setting (every one of them succeeds, or the
 * config is refused), grep -q's own status (set by grep), and nothing after
 * any other statement, whose status would depend on what a shell ran. */
static void status_after(struct config_lexer *lx, const char *what)
{
	lx->status_after = what;
	lx->status_pending = what == NULL;
	if (what == NULL)
		lx->status = 0;
}

int config__statements(struct config_lexer *lx)
{
	for (;;) {
		char buf[48];
		bool more;
		int r;

		config__skip_blanks(lx);
		if (lx->pos == lx->len || lx->s[lx->pos] == '#')
			return 0;
		if (lx->want_then && !word_at(lx, "then"))
			return config__error(lx, lx->pos,
					     "expected 'then' after the test of the 'if' "
					     "at line %d, found %s",
					     lx->ifs[lx->nifs - 1].line,
					     describe_tok(lx, lx->pos, buf, sizeof(buf)));
		if (lx->nifs > 0 && lx->ifs[lx->nifs - 1].is_case && (r = config__case_line(lx)) != 1) {
			if (r < 0)
				return r;
			status_after(lx, "a 'case' line");
			continue;
		}
		bool grep = word_at(lx, "grep");
		if (word_at(lx, "case")) {
			r = config__case(lx);
			status_after(lx, "'case'");
			if (r == 0)
				r = 1;
		} else if (word_at(lx, "[") || word_at(lx, "[[")) {
			r = config__test_statement(lx);
			status_after(lx, "a test ([ ] && ..., [ ] || ...)");
			if (r == 0)
				r = 1;
		} else if ((r = config__function(lx)) != 1) {
			status_after(lx, "a function");
			r = r == 0 ? 1 : r == 2 ? 0 : r;
		} else if ((r = config__command(lx)) != 1) {
			if (!grep)
				status_after(lx, NULL);
			/* 0: the line is read; 2: more follows a ';' */
			r = r == 0 ? 1 : r == 2 ? 0 : r;
		} else if (word_at(lx, "if")) {
			r = cond_if(lx);
			status_after(lx, "'if'");
		} else if (word_at(lx, "elif")) {
			r = cond_elif(lx);
			status_after(lx, "'elif'");
		} else if (word_at(lx, "then")) {
			if (!lx->want_then)
				return config__error(lx, lx->pos,
						     "expected an assignment, found "
						     "'then' with no 'if [ ... ];' before it");
			lx->want_then = false;
			lx->pos += 4;
			status_after(lx, "'then'");
			r = 0;
		} else if (word_at(lx, "else")) {
			r = cond_else(lx);
			status_after(lx, "'else'");
		} else if (word_at(lx, "fi")) {
			r = cond_fi(lx);
			status_after(lx, "'fi'");
		} else {
			r = config__assignment(lx, &more);
			status_after(lx, NULL);
			if (r == 0 && !more)
				r = 1;
		}
		if (r != 0)
			return r < 0 ? r : 0;
	}
}

int config__cond_end(struct config_lexer *lx)
{
	const struct config_if *top;

	if (lx->nifs == 0)
		return 0;
	top = &lx->ifs[lx->nifs - 1];
	config__diag(lx->err, lx->file, top->line, top->column,
		     "expected %s for this '%s', found "
		     "the end of the file",
		     top->is_case    ? "'esac'"
		     : lx->want_then ? "'then'"
				     : "'fi'",
		     top->is_case ? "case" : "if");
	return -EINVAL;
}
