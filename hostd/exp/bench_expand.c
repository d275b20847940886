// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A spec's steps for one g.conf: parameters resolved (the user's value, else
 * the spec's default), ${NAME} templates filled, the sweep walked.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_spec.h"
#include "xalloc.h"

struct expand_ctx {
	const struct bench_spec *s;
	const struct config *gconf;
	uint32_t sweep_value; /* valid when has_sweep */
	bool has_sweep;
	const char *list_value[BENCH_SWEEP_LISTS_MAX]; /* this series' value of each list */
	struct config_diag *d;
};

/* The values of one BENCH_SWEEP_LISTS parameter: its value split at blanks
 * and commas (MMTests writes both). */
struct list_values {
	char *copy; /* owns the values */
	const char *v[BENCH_SWEEP_POINTS_MAX];
	size_t n;
};

static void fail(struct expand_ctx *x, const struct config *c, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(struct expand_ctx *x, const struct config *c, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	config_diag_vat(x->d, c, name, x->s->path, fmt, ap);
	va_end(ap);
}

static bool is_param(const struct bench_spec *s, const char *name)
{
	for (size_t i = 0; i < s->nparams; i++)
		if (strcmp(s->params[i], name) == 0)
			return true;
	return false;
}

/* A value that goes into a shell command line must not be able to change
 * what the line does: no blanks, quotes, $, ;, |, &, redirections. */
static bool value_is_plain(const char *v)
{
	if (!*v)
		return false;
	for (; *v; v++)
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      (*v >= '0' && *v <= '9') || strchr("._,:=/+-%@", *v)))
			return false;
	return true;
}

static bool is_words(const struct bench_spec *s, const char *name)
{
	for (size_t i = 0; i < s->nwords; i++)
		if (strcmp(s->words[i], name) == 0)
			return true;
	return false;
}

/* A BENCH_WORDS value: empty, or blank-separated words each plain (so the
 * shell splits it into exactly these words and nothing else); joined by
 * single spaces.  NULL when a word is not plain. */
static char *plain_words(const char *v)
{
	char *copy = xstrdup(v), *out = xmalloc(strlen(v) + 1), *save;
	size_t len = 0;
	out[0] = '\0';
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!value_is_plain(w)) {
			free(copy);
			free(out);
			return NULL;
		}
		len += (size_t)sprintf(out + len, "%s%s", len ? " " : "", w);
	}
	free(copy);
	return out;
}

/* The value of a parameter, and the config that set it (for messages). */
static const char *param_value(struct expand_ctx *x, const char *name, const struct config **from)
{
	const char *v = config_get(x->gconf, name);
	*from = x->gconf;
	if (!v || !*v) {
		v = config_get(x->s->cfg, name);
		*from = x->s->cfg;
	}
	return v;
}

/* Fills ${NAME} in tmpl; what is to be filled is a parameter of the spec or
 * its sweep variable.  Returns the new string or NULL with x->d set. */
static char *fill(struct expand_ctx *x, const char *what, const char *tmpl)
{
	size_t cap = strlen(tmpl) + 1, len = 0;
	char *out = xmalloc(cap);

	for (const char *p = tmpl; *p;) {
		const char *val = NULL;
		char *owned = NULL; /* a value built here (BENCH_WORDS) */
		char num[16];
		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p + 2, '}');
			char name[CONFIG_NAME_MAX];
			if (!end || (size_t)(end - p - 2) >= sizeof(name)) {
				fail(x, x->s->cfg, what, "%s: a '${' without its '}'", what);
				goto err;
			}
			snprintf(name, sizeof(name), "%.*s", (int)(end - p - 2), p + 2);
			const char *listed = NULL;
			for (size_t i = 0; i < x->s->nsweep_lists && !listed; i++)
				if (strcmp(name, x->s->sweep_lists[i].param) == 0)
					listed = x->list_value[i];
			if (listed) {
				val = listed; /* checked plain when the list was split */
			} else if (x->has_sweep && strcmp(name, x->s->sweep_var) == 0) {
				snprintf(num, sizeof(num), "%" PRIu32, x->sweep_value);
				val = num;
			} else if (is_param(x->s, name) && is_words(x->s, name)) {
				const struct config *from;
				val = param_value(x, name, &from);
				owned = val ? plain_words(val) : NULL;
				if (!owned) {
					fail(x, from, name,
					     "%s=\"%.48s\" cannot go into the command of %s: use words of "
					     "letters, digits and . _ , : = / + - %% @ only, separated by blanks",
					     name, val ? val : "", x->s->name);
					goto err;
				}
				val = owned;
			} else if (is_param(x->s, name)) {
				const struct config *from;
				val = param_value(x, name, &from);
				if (!val || !value_is_plain(val)) {
					fail(x, from, name,
					     "%s=\"%.48s\" cannot go into the command of %s: use letters, "
					     "digits and . _ , : = / + - %% @ only",
					     name, val ? val : "", x->s->name);
					goto err;
				}
			} else {
				fail(x, x->s->cfg, what,
				     "%s uses ${%s}, which is neither a parameter of %s (BENCH_PARAMS) "
				     "nor its sweep variable",
				     what, name, x->s->name);
				goto err;
			}
			p = end + 1;
		} else {
			num[0] = *p++;
			num[1] = '\0';
			val = num;
		}
		size_t vl = strlen(val);
		if (len + vl + 1 > cap) {
			cap = (len + vl + 1) * 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + len, val, vl);
		len += vl;
		free(owned);
	}
	out[len] = '\0';
	return out;
err:
	free(out);
	return NULL;
}

/* When tmpl is exactly "${P}" for a parameter P: P, and the config that set
 * its value (for messages); else NULL. */
static const char *template_param(struct expand_ctx *x, const char *tmpl, char *buf, size_t len,
				  const struct config **from)
{
	size_t n = strlen(tmpl);
	if (n < 4 || strncmp(tmpl, "${", 2) != 0 || tmpl[n - 1] != '}' || n - 3 >= len)
		return NULL;
	snprintf(buf, len, "%.*s", (int)(n - 3), tmpl + 2);
	if (!is_param(x->s, buf))
		return NULL;
	param_value(x, buf, from);
	return buf;
}

static int fill_int(struct expand_ctx *x, const char *what, const char *tmpl, int64_t min,
		    int64_t max, int64_t *out)
{
	char *v = fill(x, what, tmpl), *end;
	if (!v)
		return -EINVAL;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max) {
		/* name the parameter the template came from, where it was set */
		const struct config *from = x->s->cfg;
		char pname[CONFIG_NAME_MAX];
		const char *name = template_param(x, tmpl, pname, sizeof(pname), &from);
		fail(x, from, name ? name : what,
		     "%s of %s is \"%.48s\", not an integer between %" PRId64 " and %" PRId64,
		     name ? name : what, x->s->name, v, min, max);
		free(v);
		return -EINVAL;
	}
	free(v);
	*out = n;
	return 0;
}

/*
 * A step with a server (BENCH_SERVER): the step's shell picks a port for it
 * from its own PID, so that nodes sharing the host's network (local guests,
 * the host) do not collide at the same instant, below the node's ephemeral
 * range (ip_local_port_range), where any client socket of the machine may
 * hold the port and make the bind fail; and tries another port, up to
 * BENCH_SERVER_PORT_TRIES in all, when the server exits before it is ready
 * (a port taken all the same: a listener of something else).  Or it
 * exports the server's fixed port, first making sure nothing listens there
 * (a server that fails to bind must not be mistaken for ready by another's
 * socket).  It starts the server in the background with its output in a
 * file of the work folder and waits until it is ready: the port listens
 * (BENCH_SERVER_PORT: /proc/net/tcp or tcp6 lists it in state 0A, LISTEN)
 * and/or its output holds the ready text.  There is no event to wait on, so
 * the wait polls, bounded.  Then it runs the command in a subshell (its
 * exit ends only itself), stops the server and exits with the command's
 * status; a failed command is followed by the server's output.  A server
 * that exits first on every port tried, or is not ready in time, fails the
 * step with its output as the reason.
 */
static char *with_server(const struct bench_spec *s, const char *server, const char *cmd)
{
	char port[256], *ready, *waiting_for;
	if (s->server_port_fixed)
		snprintf(port, sizeof(port), "LOCKSTEP_PORT=%u; ", (unsigned)s->server_port_fixed);
	else
		/* 12000 ports below the ephemeral range (32768 by default:
		 * 20768 to 32767); a node whose range starts too low gets
		 * 21024 to 33023 and relies on the retries */
		snprintf(port, sizeof(port),
			 "lockstep_lo=32768; read lockstep_lo lockstep_hi "
			 "</proc/sys/net/ipv4/ip_local_port_range 2>/dev/null; "
			 "[ \"$lockstep_lo\" -gt 13024 ] 2>/dev/null || lockstep_lo=33024; "
			 "LOCKSTEP_PORT=$((lockstep_lo - 12000 + ($$ + lockstep_try * 4001) %% 12000)); ");
	if (s->server_port_wait && s->server_ready) {
		ready = xasprintf("lockstep_listening && grep -q '%s' $lockstep_log", s->server_ready);
		waiting_for = xasprintf("listen on port $LOCKSTEP_PORT and print \\\"%s\\\"",
					s->server_ready);
	} else if (s->server_port_wait) {
		ready = xstrdup("lockstep_listening");
		waiting_for = xstrdup("listen on port $LOCKSTEP_PORT");
	} else {
		ready = xasprintf("grep -q '%s' $lockstep_log", s->server_ready);
		waiting_for = xasprintf("print \\\"%s\\\"", s->server_ready);
	}
	char *out =
		xasprintf("lockstep_listening() { grep -q \" [0-9A-F]*:$(printf %%04X $LOCKSTEP_PORT) "
			  "[0-9A-F]*:0000 0A \" /proc/net/tcp /proc/net/tcp6 2>/dev/null; }; "
			  /* the log exists before the first grep, however late the
		 * background shell opens it */
			  "lockstep_log=lockstep-server-$$.log; lockstep_try=0; "
			  "while :; do %sexport LOCKSTEP_PORT; "
			  "%s"
			  ": >$lockstep_log; "
			  "%s >>$lockstep_log 2>&1 </dev/null & lockstep_srv=$!; lockstep_n=0; "
			  "until %s; do "
			  "kill -0 $lockstep_srv 2>/dev/null || break; "
			  "lockstep_n=$((lockstep_n + 1)); if [ $lockstep_n -gt %d ]; then "
			  "echo \"lockstep: the server did not %s in %d s:\"; cat $lockstep_log; "
			  "kill $lockstep_srv; rm -f $lockstep_log; exit 124; fi; sleep 0.1; done; "
			  "kill -0 $lockstep_srv 2>/dev/null && break; "
			  "lockstep_try=$((lockstep_try + 1)); "
			  "if [ $lockstep_try -ge %d ]; then "
			  "echo 'lockstep: the server exited before it was ready:'; cat $lockstep_log; "
			  "rm -f $lockstep_log; exit 125; fi; done; "
			  "(%s); lockstep_rc=$?; "
			  /* a failed command's reason may be the server's: say whether it
		 * is still there and what it printed */
			  "if [ $lockstep_rc -ne 0 ]; then if kill -0 $lockstep_srv 2>/dev/null; then "
			  "echo \"lockstep: the command failed (status $lockstep_rc); the server's output:\"; "
			  "else echo \"lockstep: the server exited during the command; its output:\"; fi; "
			  "tail -n 40 $lockstep_log; fi; "
			  "kill $lockstep_srv 2>/dev/null; wait $lockstep_srv 2>/dev/null; "
			  "rm -f $lockstep_log; exit $lockstep_rc",
			  port,
			  s->server_port_fixed
				  ? "if lockstep_listening; then echo \"lockstep: port "
				    "$LOCKSTEP_PORT already listens on this node (another server, or another node "
				    "on this network), before the server started\"; exit 125; fi; "
				  : "",
			  server, ready, BENCH_SERVER_READY_TENTHS, waiting_for,
			  BENCH_SERVER_READY_TENTHS / 10,
			  /* a fixed port is the server's own: no other to try */
			  s->server_port_fixed ? 1 : BENCH_SERVER_PORT_TRIES, cmd);
	free(ready);
	free(waiting_for);
	return out;
}

static size_t sweep_points(const struct bench_spec *s, int64_t min, int64_t max, uint32_t *pts)
{
	size_t n = 0;
	if (s->sweep_scale == BENCH_SWEEP_LINEAR) {
		for (int64_t v = min; v <= max && n < BENCH_SWEEP_POINTS_MAX; v++)
			pts[n++] = (uint32_t)v;
		return n;
	}
	for (int64_t v = min; v < max && n < BENCH_SWEEP_POINTS_MAX - 1; v *= 2)
		pts[n++] = (uint32_t)v;
	pts[n++] = (uint32_t)max;
	return n;
}

/* The command of the series x points at, with its server around it; NULL
 * with x->d set. */
static char *step_command(struct expand_ctx *x)
{
	const struct bench_spec *s = x->s;
	char *cmd = fill(x, "BENCH_COMMAND", s->command);
	if (cmd && s->server) {
		char *server = fill(x, "BENCH_SERVER", s->server);
		char *wrapped = server ? with_server(s, server, cmd) : NULL;
		free(server);
		free(cmd);
		cmd = wrapped;
	}
	if (cmd && strlen(cmd) >= PROTO_COMMAND_MAX) {
		fail(x, s->cfg, "BENCH_COMMAND", "the command of %s is %zu bytes; at most %d",
		     s->name, strlen(cmd), PROTO_COMMAND_MAX - 1);
		free(cmd);
		cmd = NULL;
	}
	return cmd;
}

/* Splits each list parameter's value; every value must be plain.  0, or
 * -EINVAL with x->d naming the parameter, where it was set, and the value. */
static int split_lists(struct expand_ctx *x, struct list_values *lv, size_t *combos)
{
	*combos = 1;
	for (size_t i = 0; i < x->s->nsweep_lists; i++) {
		const char *name = x->s->sweep_lists[i].param, *bad = NULL;
		const struct config *from;
		const char *v = param_value(x, name, &from);
		char *save;
		lv[i].copy = xstrdup(v ? v : "");
		for (char *w = strtok_r(lv[i].copy, " \t,", &save); w && !bad;
		     w = strtok_r(NULL, " \t,", &save)) {
			if (!value_is_plain(w) || lv[i].n == BENCH_SWEEP_POINTS_MAX)
				bad = w;
			else
				lv[i].v[lv[i].n++] = w;
		}
		if (bad || lv[i].n == 0) {
			fail(x, from, name,
			     "%s=\"%.48s\" is not a list of at most %d values of "
			     "letters, digits and . _ : = / + - %% @, separated by blanks or commas%s%.32s",
			     name, v ? v : "", BENCH_SWEEP_POINTS_MAX, bad ? ": " : "",
			     bad ? bad : "");
			return -EINVAL;
		}
		*combos *= lv[i].n;
		if (*combos > PROTO_STEPS_MAX) {
			fail(x, from, name, "%s sweeps more than %d combinations of its lists",
			     x->s->name, PROTO_STEPS_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

/* Appends "name=value" (with a comma when not first) to variant, the name
 * in lower case; false when it does not fit. */
static bool variant_add(char *variant, size_t *len, const char *name, const char *value)
{
	int n = snprintf(variant + *len, BENCH_VARIANT_MAX - *len, "%s%s=%s", *len ? "," : "", name,
			 value);
	if (n < 0 || (size_t)n >= BENCH_VARIANT_MAX - *len)
		return false;
	for (char *v = variant + *len; *v && *v != '='; v++)
		*v = (char)tolower((unsigned char)*v);
	*len += (size_t)n;
	return true;
}

/* Picks combination c of the lists (the first outermost) into x, and
 * names the series: "size=200,bitrate=0" and the sweep point. */
static int pick_series(struct expand_ctx *x, const struct list_values *lv, size_t c, char *variant)
{
	size_t len = 0;
	bool fits = true;
	char num[16];
	for (size_t i = x->s->nsweep_lists; i-- > 0;) {
		x->list_value[i] = lv[i].v[c % lv[i].n];
		c /= lv[i].n;
	}
	size_t longest = 0;
	variant[0] = '\0';
	for (size_t i = 0; i < x->s->nsweep_lists && fits; i++)
		fits = variant_add(variant, &len, x->s->sweep_lists[i].label, x->list_value[i]);
	snprintf(num, sizeof(num), "%" PRIu32, x->sweep_value);
	if (fits && x->has_sweep)
		fits = variant_add(variant, &len, x->s->sweep_var, num);
	if (!fits) {
		/* the list with the longest value is the one to shorten */
		for (size_t i = 1; i < x->s->nsweep_lists; i++)
			if (strlen(x->list_value[i]) > strlen(x->list_value[longest]))
				longest = i;
		const char *name = x->s->sweep_lists[longest].param;
		const struct config *from;
		param_value(x, name, &from);
		fail(x, from, name,
		     "%s: the series name \"%.48s...\" is longer than %d: "
		     "shorten the values of %s",
		     x->s->name, variant, BENCH_VARIANT_MAX - 1, name);
		return -EINVAL;
	}
	return 0;
}

int bench_spec_expand(const struct bench_spec *s, const struct config *gconf,
		      struct proto_step **steps_out, struct bench_step **info_out, size_t *n_out,
		      struct config_diag *d)
{
	struct expand_ctx x = { .s = s, .gconf = gconf, .d = d };
	uint32_t pts[BENCH_SWEEP_POINTS_MAX] = { 0 };
	size_t npts = 1;
	int64_t iters, warm;

	/* MMTests sweeps some comma-separated lists (IPERF3_BUFFER_SIZES) in
	 * one benchmark; a spec sweeps one variable, so such a list is refused
	 * here, where the config is, rather than failing every step. */
	for (size_t i = 0; i < s->none_value; i++) {
		const struct config *from;
		const char *v = param_value(&x, s->one_value[i], &from);
		if (v && strchr(v, ',')) {
			fail(&x, from, s->one_value[i],
			     "%s=\"%.48s\" lists several values; %s runs "
			     "one (MMTests sweeps the list): set one, e.g. with --set",
			     s->one_value[i], v, s->name);
			return -EINVAL;
		}
	}
	if (fill_int(&x, "BENCH_ITERATIONS", s->iterations, 1, BENCH_ITERATIONS_MAX, &iters) < 0 ||
	    fill_int(&x, "BENCH_WARMUP", s->warmup, 0, BENCH_WARMUP_MAX, &warm) < 0)
		return -EINVAL;
	if (s->sweep_var) {
		int64_t min, max;
		if (fill_int(&x, "BENCH_SWEEP_MIN", s->sweep_min, 1, UINT32_MAX / 2, &min) < 0 ||
		    fill_int(&x, "BENCH_SWEEP_MAX", s->sweep_max, 1, UINT32_MAX / 2, &max) < 0)
			return -EINVAL;
		if (max < min) {
			const struct config *from = s->cfg;
			char pname[CONFIG_NAME_MAX];
			const char *name =
				template_param(&x, s->sweep_max, pname, sizeof(pname), &from);
			fail(&x, from, name,
			     "%s sweeps %s from %" PRId64 " to %" PRId64
			     ", which is empty: the maximum%s%s is below the minimum",
			     s->name, s->sweep_var, min, max, name ? " " : "", name ? name : "");
			return -EINVAL;
		}
		if (s->sweep_scale == BENCH_SWEEP_LINEAR && max - min >= BENCH_SWEEP_POINTS_MAX) {
			fail(&x, gconf, NULL, "%s sweeps %s over %" PRId64 " points; at most %d",
			     s->name, s->sweep_var, max - min + 1, BENCH_SWEEP_POINTS_MAX);
			return -EINVAL;
		}
		npts = sweep_points(s, min, max, pts);
		x.has_sweep = true;
	}

	struct list_values lv[BENCH_SWEEP_LISTS_MAX] = { 0 };
	size_t combos;
	int r = split_lists(&x, lv, &combos);
	size_t per = (size_t)(iters + warm), n = combos * npts * per, k = 0;
	if (r == 0 && n > PROTO_STEPS_MAX) {
		fail(&x, gconf, NULL, "%s would be %zu steps; a plan has at most %d", s->name, n,
		     PROTO_STEPS_MAX);
		r = -EINVAL;
	}
	struct proto_step *steps = r == 0 ? xcalloc(n, sizeof(*steps)) : NULL;
	struct bench_step *info = r == 0 ? xcalloc(n, sizeof(*info)) : NULL;
	/* the lists outermost, the sweep inside them, as MMTests nests them */
	for (size_t c = 0; r == 0 && c < combos; c++) {
		for (size_t p = 0; r == 0 && p < npts; p++) {
			char variant[BENCH_VARIANT_MAX];
			x.sweep_value = pts[p];
			r = pick_series(&x, lv, c, variant);
			char *cmd = r == 0 ? step_command(&x) : NULL;
			if (!cmd) {
				r = -EINVAL;
				break;
			}
			for (size_t i = 0; i < per; i++, k++) {
				snprintf(steps[k].benchmark, sizeof(steps[k].benchmark), "%s", s->name);
				steps[k].kind = PROTO_STEP_COMMAND;
				/* the length is checked by step_command */
				(void)proto_step_set_command(&steps[k], cmd);
				info[k].sweep_value = x.has_sweep ? pts[p] : 0;
				info[k].warmup = i < (size_t)warm;
				memcpy(info[k].variant, variant, sizeof(variant));
			}
			free(cmd);
		}
	}
	for (size_t i = 0; i < s->nsweep_lists; i++)
		free(lv[i].copy);
	if (r < 0) {
		proto_steps_free(steps, k);
		free(info);
		return r;
	}
	*steps_out = steps;
	*info_out = info;
	*n_out = n;
	return 0;
}
