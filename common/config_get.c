// SPDX-License-Identifier: GPL-2.0-or-later
/* The typed getters: a value that is not of its type is an error naming the
 * file, the line, the name, the value, and what was expected. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"

bool config__parse_int(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0, limit;

	while (config__is_blank(*s))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return false;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (limit - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	while (config__is_blank(*s))
		s++;
	if (*s)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static const struct config_var *file_var(const struct config *c, const char *name)
{
	return config__find(&c->vars, name, strlen(name));
}

/* "h.conf:4: GUEST_COUNT=\"many\" is not an integer between 1 and 1024" */
static int __attribute__((format(printf, 3, 4)))
bad_value(const struct config_var *v, struct config_diag *err, const char *fmt, ...)
{
	char shown[CONFIG_SHOW_SIZE], what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	config__show(v->value, shown, sizeof(shown));
	config__diag(err, v->file, v->line, 0, "%s=%s is not %s", v->name, shown, what);
	return -EINVAL;
}

int config_get_int(const struct config *c, const char *name, int64_t min, int64_t max, int64_t *out,
		   struct config_diag *err)
{
	const struct config_var *v = file_var(c, name);
	int64_t n;

	if (!v)
		return 1;
	if (config__parse_int(v->value, &n) && n >= min && n <= max) {
		*out = n;
		return 0;
	}
	if (min == INT64_MIN && max == INT64_MAX)
		return bad_value(v, err, "an integer");
	if (max == INT64_MAX)
		return bad_value(v, err, "an integer of at least %lld", (long long)min);
	if (min == INT64_MIN)
		return bad_value(v, err, "an integer of at most %lld", (long long)max);
	return bad_value(v, err, "an integer between %lld and %lld", (long long)min, (long long)max);
}

/* The value without surrounding blanks, if it fits buf. */
static bool trimmed(const char *value, char *buf, size_t size)
{
	size_t len;

	while (config__is_blank(*value))
		value++;
	len = strlen(value);
	while (len > 0 && config__is_blank(value[len - 1]))
		len--;
	if (len >= size)
		return false;
	memcpy(buf, value, len);
	buf[len] = '\0';
	return true;
}

int config_get_bool(const struct config *c, const char *name, bool *out, struct config_diag *err)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	const struct config_var *v = file_var(c, name);
	char buf[8];

	if (!v)
		return 1;
	if (trimmed(v->value, buf, sizeof(buf))) {
		for (size_t i = 0; i < 4; i++) {
			if (strcasecmp(buf, yes[i]) == 0 || strcasecmp(buf, no[i]) == 0) {
				*out = strcasecmp(buf, yes[i]) == 0;
				return 0;
			}
		}
	}
	return bad_value(v, err, "a boolean (yes/no, true/false, on/off, 1/0)");
}

/* "1.5", "500ms", "30s", "2m", "1h": digits, one optional '.', a unit. */
static bool parse_seconds(const char *value, double *out)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {
		{ "", 1 }, { "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	char buf[64];
	size_t digits = 0, dots = 0, n;

	if (!trimmed(value, buf, sizeof(buf)))
		return false;
	for (n = 0; (buf[n] >= '0' && buf[n] <= '9') || buf[n] == '.'; n++) {
		digits += buf[n] != '.';
		dots += buf[n] == '.';
	}
	if (digits == 0 || dots > 1)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(buf + n, units[i].unit) == 0) {
			buf[n] = '\0';
			*out = strtod(buf, NULL) * units[i].scale;
			return true;
		}
	}
	return false;
}

int config_get_seconds(const struct config *c, const char *name, double min, double max,
		       double *out, struct config_diag *err)
{
	const struct config_var *v = file_var(c, name);
	double s;

	if (!v)
		return 1;
	if (parse_seconds(v->value, &s) && s >= min && s <= max) {
		*out = s;
		return 0;
	}
	if (max >= DBL_MAX)
		return bad_value(v, err,
				 "a duration of at least %g seconds (a number with an optional "
				 "unit ms, s, m or h: 1.5, 500ms, 2m)",
				 min);
	return bad_value(v, err,
			 "a duration between %g and %g seconds (a number with an optional "
			 "unit ms, s, m or h: 1.5, 500ms, 2m)",
			 min, max);
}

int config_get_choice(const struct config *c, const char *name, const char *const *choices,
		      int *out, struct config_diag *err)
{
	const struct config_var *v = file_var(c, name);
	char list[256], buf[CONFIG_NAME_MAX + 1];
	struct config_suggest s;
	size_t o = 0;

	if (!v)
		return 1;
	for (int i = 0; choices[i]; i++) {
		if (strcasecmp(v->value, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	for (int i = 0; choices[i] && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", choices[i]);
	if (!trimmed(v->value, buf, sizeof(buf)))
		buf[0] = '\0';
	config__suggest_init(&s, buf, strlen(buf));
	for (int i = 0; choices[i] && buf[0]; i++)
		config__suggest_try(&s, choices[i]);
	if (config__suggest_result(&s))
		return bad_value(v, err, "one of %s; did you mean %s?", list,
				 config__suggest_result(&s));
	return bad_value(v, err, "one of %s", list);
}
