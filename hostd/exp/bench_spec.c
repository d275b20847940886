// SPDX-License-Identifier: GPL-2.0-or-later
#include "bench_spec.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_parse.h"
#include "plan.h"
#include "xalloc.h"

const char *const bench_spec_keys[] = {
	"BENCH_NAME",	      "BENCH_SUMMARY",
	"BENCH_ALIASES",      "BENCH_BINARIES",
	"BENCH_PARAMS",	      "BENCH_COMMAND",
	"BENCH_SWEEP",	      "BENCH_SWEEP_MIN",
	"BENCH_SWEEP_MAX",    "BENCH_SWEEP_SCALE",
	"BENCH_ITERATIONS",   "BENCH_WARMUP",
	"BENCH_PARSER",	      "BENCH_PARSER_ARG",
	"BENCH_METRICS",      "BENCH_SERVER",
	"BENCH_SERVER_READY", "BENCH_SERVER_PORT",
	"BENCH_ONE_VALUE",    "BENCH_WORDS",
	"BENCH_SWEEP_LISTS",  NULL,
};

/* Splits a blank-separated value into at most max words. */
static int split(const char *value, size_t max, char ***out, size_t *n)
{
	char *copy = xstrdup(value ? value : ""), *save;
	*out = NULL;
	*n = 0;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (*n == max) {
			free(copy);
			return -E2BIG;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = xstrdup(w);
	}
	free(copy);
	return 0;
}

static void free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static char *get_dup(const struct config *c, const char *name, const char *fallback)
{
	const char *v = config_get(c, name);
	return v && *v ? xstrdup(v) : fallback ? xstrdup(fallback) : NULL;
}

static bool param_name_valid(const char *s)
{
	if (!*s || strlen(s) >= CONFIG_NAME_MAX || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "name:unit:higher|lower" */
static int parse_metric(const char *w, struct bench_metric_decl *m)
{
	const char *c1 = strchr(w, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || (size_t)(c1 - w) >= sizeof(m->name) ||
	    (size_t)(c2 - c1 - 1) >= sizeof(m->unit) || c2 == c1 + 1)
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "%.*s", (int)(c1 - w), w);
	snprintf(m->unit, sizeof(m->unit), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	if (!proto_name_valid(m->name))
		return -EINVAL;
	const char *c3 = strchr(c2 + 1, ':');
	size_t dl = c3 ? (size_t)(c3 - c2 - 1) : strlen(c2 + 1);
	if (dl == 6 && strncmp(c2 + 1, "higher", 6) == 0)
		m->higher_is_better = true;
	else if (dl == 5 && strncmp(c2 + 1, "lower", 5) == 0)
		m->higher_is_better = false;
	else
		return -EINVAL;
	m->optional = c3 != NULL;
	if (c3 && strcmp(c3 + 1, "optional") != 0)
		return -EINVAL;
	return 0;
}

/* Every name of a list such as BENCH_ONE_VALUE is one of BENCH_PARAMS. */
static int check_in_params(const struct bench_spec *s, const char *key, char **names, size_t n,
			   struct config_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < s->nparams && strcmp(s->params[k], names[i]) != 0)
			k++;
		if (k == s->nparams) {
			config_diag_at(d, s->cfg, key, s->path,
				       "%s names \"%s\", which is not in BENCH_PARAMS", key, names[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static bool label_valid(const char *s, size_t n)
{
	if (n == 0 || n >= BENCH_LABEL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* BENCH_SWEEP_LISTS="size:IPERF3_BUFFER_SIZES bitrate:IPERF3_BITRATES":
 * parameters whose value is a list, each a label and one of BENCH_PARAMS,
 * outermost first (MMTests' loops nest so, its sweep innermost). */
static int load_sweep_lists(struct bench_spec *s, struct config_diag *d)
{
	char **words;
	size_t n;
	if (split(config_get(s->cfg, "BENCH_SWEEP_LISTS"), BENCH_SWEEP_LISTS_MAX, &words, &n) < 0) {
		config_diag_at(d, s->cfg, "BENCH_SWEEP_LISTS", s->path,
			       "BENCH_SWEEP_LISTS has more than %d words", BENCH_SWEEP_LISTS_MAX);
		return -EINVAL;
	}
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *colon = strchr(words[i], ':');
		if (!colon || !label_valid(words[i], (size_t)(colon - words[i]))) {
			config_diag_at(d, s->cfg, "BENCH_SWEEP_LISTS", s->path,
				       "BENCH_SWEEP_LISTS: \"%s\" is not label:PARAMETER (a label of "
				       "1 to %d of a-z 0-9 _)",
				       words[i], BENCH_LABEL_MAX - 1);
			r = -EINVAL;
			break;
		}
		struct bench_sweep_list *l = &s->sweep_lists[i];
		snprintf(l->label, sizeof(l->label), "%.*s", (int)(colon - words[i]), words[i]);
		l->param = xstrdup(colon + 1);
		s->nsweep_lists = i + 1;
		char *one[] = { l->param };
		r = check_in_params(s, "BENCH_SWEEP_LISTS", one, 1, d);
	}
	free_words(words, n);
	return r;
}

static int load_lists(struct bench_spec *s, struct config_diag *d)
{
	static const struct {
		const char *key;
		size_t max;
	} lists[] = { { "BENCH_ALIASES", BENCH_SPEC_LIST_MAX },
		      { "BENCH_BINARIES", BENCH_SPEC_LIST_MAX },
		      { "BENCH_PARAMS", BENCH_SPEC_PARAMS_MAX },
		      { "BENCH_ONE_VALUE", BENCH_SPEC_PARAMS_MAX },
		      { "BENCH_WORDS", BENCH_SPEC_PARAMS_MAX } };
	char **words[] = { NULL, NULL, NULL, NULL, NULL };
	size_t counts[5] = { 0 };

	for (size_t i = 0; i < 5; i++) {
		if (split(config_get(s->cfg, lists[i].key), lists[i].max, &words[i], &counts[i]) < 0) {
			config_diag_at(d, s->cfg, lists[i].key, s->path,
				       "%s has more than %zu words", lists[i].key, lists[i].max);
			for (size_t j = 0; j <= i; j++)
				free_words(words[j], counts[j]);
			return -EINVAL;
		}
	}
	s->aliases = words[0], s->naliases = counts[0];
	s->binaries = words[1], s->nbinaries = counts[1];
	s->params = words[2], s->nparams = counts[2];
	s->one_value = words[3], s->none_value = counts[3];
	s->words = words[4], s->nwords = counts[4];
	for (size_t i = 0; i < s->naliases; i++)
		if (!proto_name_valid(s->aliases[i])) {
			config_diag_at(d, s->cfg, "BENCH_ALIASES", s->path,
				       "BENCH_ALIASES: \"%s\" is not a benchmark name", s->aliases[i]);
			return -EINVAL;
		}
	for (size_t i = 0; i < s->nparams; i++)
		if (!param_name_valid(s->params[i]) || !config_get(s->cfg, s->params[i])) {
			config_diag_at(d, s->cfg, "BENCH_PARAMS", s->path,
				       "BENCH_PARAMS names \"%s\", which is not a name this spec gives a default",
				       s->params[i]);
			return -EINVAL;
		}
	if (check_in_params(s, "BENCH_ONE_VALUE", s->one_value, s->none_value, d) < 0 ||
	    check_in_params(s, "BENCH_WORDS", s->words, s->nwords, d) < 0)
		return -EINVAL;
	return load_sweep_lists(s, d);
}

/* BENCH_SERVER_PORT: "pick", or the fixed port of a server that cannot be
 * told one (tbench_srv's 7003). */
static int load_server_port(struct bench_spec *s, struct config_diag *d)
{
	const char *v = config_get(s->cfg, "BENCH_SERVER_PORT");
	char *end;
	if (!v || !*v)
		return 0;
	s->server_port_wait = true;
	if (strcmp(v, "pick") == 0)
		return 0;
	errno = 0;
	long port = strtol(v, &end, 10);
	if (errno || end == v || *end || port < 1 || port > 65535) {
		config_diag_at(d, s->cfg, "BENCH_SERVER_PORT", s->path,
			       "BENCH_SERVER_PORT=\"%s\" is neither \"pick\" nor a port 1 to 65535",
			       v);
		return -EINVAL;
	}
	s->server_port_fixed = (uint16_t)port;
	return 0;
}

static int load_fields(struct bench_spec *s, struct config_diag *d)
{
	const char *name = config_get(s->cfg, "BENCH_NAME");
	if (!name || !proto_name_valid(name)) {
		config_diag_at(d, s->cfg, "BENCH_NAME", s->path,
			       "BENCH_NAME=\"%s\" is not a benchmark name (1 to %d of A-Z a-z 0-9 . _ -)",
			       name ? name : "", PROTO_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->summary = get_dup(s->cfg, "BENCH_SUMMARY", "");
	s->command = get_dup(s->cfg, "BENCH_COMMAND", NULL);
	s->iterations = get_dup(s->cfg, "BENCH_ITERATIONS", "1");
	s->warmup = get_dup(s->cfg, "BENCH_WARMUP", "0");
	s->parser = get_dup(s->cfg, "BENCH_PARSER", NULL);
	s->parser_arg = get_dup(s->cfg, "BENCH_PARSER_ARG", NULL);
	s->sweep_var = get_dup(s->cfg, "BENCH_SWEEP", NULL);
	s->server = get_dup(s->cfg, "BENCH_SERVER", NULL);
	s->server_ready = get_dup(s->cfg, "BENCH_SERVER_READY", NULL);
	if (!s->command || !s->parser) {
		config_diag_at(d, s->cfg, NULL, s->path, "a spec needs BENCH_COMMAND and BENCH_PARSER");
		return -EINVAL;
	}
	if (load_server_port(s, d) < 0)
		return -EINVAL;
	if (s->server && !s->server_ready && !s->server_port_wait) {
		config_diag_at(d, s->cfg, "BENCH_SERVER", s->path,
			       "BENCH_SERVER needs BENCH_SERVER_PORT (the port it listens on, or "
			       "\"pick\") or BENCH_SERVER_READY (the text it prints when it accepts "
			       "clients): a step waits for one of them");
		return -EINVAL;
	}
	if (!s->server && (s->server_ready || s->server_port_wait)) {
		config_diag_at(d, s->cfg, s->server_ready ? "BENCH_SERVER_READY" : "BENCH_SERVER_PORT",
			       s->path, "%s without BENCH_SERVER: there is no server to wait for",
			       s->server_ready ? "BENCH_SERVER_READY" : "BENCH_SERVER_PORT");
		return -EINVAL;
	}
	/* the text goes between single quotes into a grep of the step's shell,
	 * and between double quotes into its message */
	for (const char *c = s->server_ready; c && *c; c++)
		if (*c < ' ' || *c > '~' || strchr("'\\\"$`", *c)) {
			config_diag_at(d, s->cfg, "BENCH_SERVER_READY", s->path,
				       "BENCH_SERVER_READY holds printable ASCII without quotes or "
				       "backslashes, $ or ` only");
			return -EINVAL;
		}
	const struct bench_parser *parser = bench_parser_find(s->parser);
	char why[256];
	if (!parser) {
		config_diag_at(d, s->cfg, "BENCH_PARSER", s->path,
			       "BENCH_PARSER=\"%s\" is not a parser of "
			       "benchmarks/parsers (see its README.md)",
			       s->parser);
		return -EINVAL;
	}
	if (bench_parser_check_arg(parser, s->parser_arg, why, sizeof(why)) < 0) {
		config_diag_at(d, s->cfg, s->parser_arg ? "BENCH_PARSER_ARG" : "BENCH_PARSER",
			       s->path, "BENCH_PARSER_ARG=\"%s\" does not suit the %s parser: %s",
			       s->parser_arg ? s->parser_arg : "", s->parser, why);
		return -EINVAL;
	}
	if (s->sweep_var) {
		static const char *const scales[] = { "double", "linear", NULL };
		int scale = BENCH_SWEEP_DOUBLE;
		s->sweep_min = get_dup(s->cfg, "BENCH_SWEEP_MIN", NULL);
		s->sweep_max = get_dup(s->cfg, "BENCH_SWEEP_MAX", NULL);
		if (!param_name_valid(s->sweep_var) || !s->sweep_min || !s->sweep_max) {
			config_diag_at(d, s->cfg, "BENCH_SWEEP", s->path,
				       "BENCH_SWEEP=\"%s\" needs a variable name and BENCH_SWEEP_MIN and BENCH_SWEEP_MAX",
				       s->sweep_var);
			return -EINVAL;
		}
		if (config_get_choice(s->cfg, "BENCH_SWEEP_SCALE", scales, &scale, d) < 0)
			return -EINVAL;
		s->sweep_scale = (enum bench_sweep_scale)scale;
	}
	char **words;
	size_t n;
	if (split(config_get(s->cfg, "BENCH_METRICS"), BENCH_SPEC_METRICS_MAX, &words, &n) < 0 ||
	    n == 0) {
		free_words(words, n);
		config_diag_at(d, s->cfg, "BENCH_METRICS", s->path,
			       "BENCH_METRICS must list 1 to %d metrics as name:unit:higher|lower",
			       BENCH_SPEC_METRICS_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_metric(words[i], &s->metrics[i]) < 0) {
			config_diag_at(d, s->cfg, "BENCH_METRICS", s->path,
				       "BENCH_METRICS: \"%s\" is not name:unit:higher|lower[:optional]",
				       words[i]);
			free_words(words, n);
			return -EINVAL;
		}
	}
	s->nmetrics = n;
	free_words(words, n);
	if (n != 1 && strcmp(s->parser, "pattern") == 0) {
		config_diag_at(d, s->cfg, "BENCH_METRICS", s->path,
			       "the pattern parser reads one number: BENCH_METRICS names exactly one metric");
		return -EINVAL;
	}
	return load_lists(s, d);
}

int bench_spec_load(const char *path, const struct sysfacts *facts, struct bench_spec **out,
		    struct config_diag *d)
{
	struct bench_spec *s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	s->cfg = config_new();
	plan_set_facts(s->cfg, facts);
	int r = config_load_file(s->cfg, path, d);
	if (r == 0)
		r = load_fields(s, d);
	if (r < 0) {
		bench_spec_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void bench_spec_free(struct bench_spec *s)
{
	if (!s)
		return;
	config_free(s->cfg);
	free_words(s->aliases, s->naliases);
	free_words(s->binaries, s->nbinaries);
	free_words(s->params, s->nparams);
	free_words(s->one_value, s->none_value);
	free_words(s->words, s->nwords);
	for (size_t i = 0; i < s->nsweep_lists; i++)
		free(s->sweep_lists[i].param);
	free(s->path);
	free(s->summary);
	free(s->command);
	free(s->server);
	free(s->server_ready);
	free(s->sweep_var);
	free(s->sweep_min);
	free(s->sweep_max);
	free(s->iterations);
	free(s->warmup);
	free(s->parser);
	free(s->parser_arg);
	free(s);
}

bool bench_spec_answers_to(const struct bench_spec *s, const char *word)
{
	if (strcmp(s->name, word) == 0)
		return true;
	for (size_t i = 0; i < s->naliases; i++)
		if (strcmp(s->aliases[i], word) == 0)
			return true;
	return false;
}

static int cmp_spec(const void *a, const void *b)
{
	return strcmp((*(struct bench_spec *const *)a)->name, (*(struct bench_spec *const *)b)->name);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && strcmp(s + a - b, suffix) == 0;
}

/* Two specs that answer to one name would make a g.conf ambiguous. */
static int check_unique(struct bench_spec **v, size_t n, struct config_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			const char *clash = bench_spec_answers_to(v[j], v[i]->name) ? v[i]->name : NULL;
			for (size_t k = 0; !clash && k < v[i]->naliases; k++)
				if (bench_spec_answers_to(v[j], v[i]->aliases[k]))
					clash = v[i]->aliases[k];
			if (clash) {
				config_diag_at(d, NULL, NULL, v[j]->path,
					       "the benchmark name \"%s\" is taken by %s too",
					       clash, v[i]->path);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int bench_specs_load_dir(const char *dir, const struct sysfacts *facts, struct bench_spec ***out,
			 size_t *n, struct config_diag *d)
{
	struct bench_spec **v = NULL;
	size_t count = 0;
	int r = 0;
	DIR *dh = opendir(dir);

	*out = NULL;
	*n = 0;
	if (!dh) {
		r = -errno;
		config_diag_at(d, NULL, NULL, dir, "cannot read the benchmark specs: %s", strerror(-r));
		return r;
	}
	for (struct dirent *e; (e = readdir(dh));) {
		if (e->d_name[0] == '.' || !ends_with(e->d_name, ".bench"))
			continue;
		if (count == BENCH_SPECS_MAX) {
			config_diag_at(d, NULL, NULL, dir, "more than %d benchmark specs",
				       BENCH_SPECS_MAX);
			r = -E2BIG;
			break;
		}
		char *path = xasprintf("%s/%s", dir, e->d_name);
		struct bench_spec *s;
		r = bench_spec_load(path, facts, &s, d);
		free(path);
		if (r < 0)
			break;
		v = xrealloc(v, (count + 1) * sizeof(*v));
		v[count++] = s;
	}
	closedir(dh);
	if (r == 0 && count) {
		qsort(v, count, sizeof(*v), cmp_spec);
		r = check_unique(v, count, d);
	}
	if (r < 0) {
		bench_specs_free(v, count);
		return r;
	}
	*out = v;
	*n = count;
	return 0;
}

void bench_specs_free(struct bench_spec **specs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bench_spec_free(specs[i]);
	free(specs);
}

const char *bench_specs_dir(void)
{
	const char *env = getenv("LOCKSTEP_BENCHMARKS_DIR");
	if (env && *env)
		return env;
#ifdef LOCKSTEP_SOURCE_BENCHMARKS
	/* hostd run from its build tree reads the specs of its source tree */
	if (access(LOCKSTEP_SOURCE_BENCHMARKS, R_OK) == 0) {
		char exe[4096];
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len > 0) {
			exe[len] = '\0';
			if (strncmp(exe, LOCKSTEP_BUILD_ROOT, strlen(LOCKSTEP_BUILD_ROOT)) == 0)
				return LOCKSTEP_SOURCE_BENCHMARKS;
		}
	}
#endif
	return LOCKSTEP_BENCHMARKS_INSTALLED;
}
