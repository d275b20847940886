/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of h.conf and g.conf: MMTests-style shell assignments, never
 * executed.
 *
 *   # comment
 *   export NAME=value        NAME=value        NAME="a $OTHER ${X}"  NAME='literal'
 *   N=$((NUM_LOGICAL_CPUS * 2 + 1))           (+ - * / % and parentheses)
 *
 * Several quoted and unquoted pieces may follow one another ("a"'b'c).
 * Variables come from earlier assignments in any file loaded into the same
 * config, then from the facts set with config_set_fact (MMTests' names:
 * NUM_LOGICAL_CPUS, NUM_NODES, NUM_LLCS, MEMTOTAL_BYTES; setting one of the
 * first three also sets MMTests' shell names NUMCPUS, NUMNODES, NUMLLCS).
 * if [ TEST ]; then ... elif/else ... fi blocks compare integers and strings
 * (-eq -ne -gt -ge -lt -le = == != -z -n ! -a -o, && and || between [ ]);
 * bash's [[ TEST ]] also matches glob patterns (== = !=) and extended
 * regular expressions (=~), with && || ! inside.  MMTests' own idioms
 * (docs/config.md) have a meaning that runs nothing: source/. of another
 * config, include-sizes.sh and its functions (facts), cat >FILE <<END (a
 * file shipped with the steps, config_shipped), $(cat <<END), $$,
 * [ TEST ] && STATEMENT, case ... esac, cpupower frequency-set -g G
 * (CPUFREQ_GOVERNOR), disable_transhuge and echo V >
 * /sys/kernel/mm/transparent_hugepage/enabled|defrag
 * (TRANSPARENT_HUGEPAGES[_DEFRAG]), limit_memory (MEMTOTAL_BYTES capped),
 * grep -q TEXT /proc/cpuinfo ($? on the next line, from the node's file;
 * $? is 0 after an assignment or another command read as a setting),
 * echo (a warning), die/exit (the config is refused), and the command
 * substitutions `uname -m|-r|-s`, `whoami`, `id -u`, `nproc`, `getconf
 * PAGESIZE`, `cat` of a /proc/sys or /sys file, `nas-class.sh` and `echo
 * WORDS | sed s/A/B/`, answered from facts, that file or sed's s command
 * read here.  The environment is not consulted: a config means the same
 * thing wherever it runs.  An unset variable expands to "" (0 in
 * arithmetic) and is reported as a warning.
 *
 * A line it cannot read is an error "file:line:column: expected ...";
 * commands, substitutions, pipes, redirections, loops and file tests are
 * such errors.  The full syntax and every message: docs/config.md.
 */
#ifndef LOCKSTEP_CONFIG_H
#define LOCKSTEP_CONFIG_H

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct config;

/* Limits: a config may be wrong, but never makes the reader crash or balloon. */
#define CONFIG_LINE_MAX 65536	    /* bytes in one line */
#define CONFIG_VALUE_MAX 65536	    /* bytes in one value, after expansion */
#define CONFIG_NAME_MAX 128	    /* characters in one name */
#define CONFIG_NAMES_MAX 4096	    /* distinct names set by files; facts likewise */
#define CONFIG_DEPTH_MAX 64	    /* nesting of $((...)), parentheses and signs */
#define CONFIG_FILE_MAX (16 << 20)  /* bytes in one file */
#define CONFIG_REGEX_MAX 256	    /* bytes in a regular expression after =~ */
#define CONFIG_REGEX_ATOMS_MAX 1000 /* its atoms, with what {m,n} repeats counted m..n times */
#define CONFIG_MATCH_MAX 4096	    /* bytes of the word matched against it */

struct config_diag {
	char file[256];
	int line, column; /* 1-based; column 0 when not about a place in a line */
	char text[512];	  /* "expected '=' after NAME", "unknown name X, did you mean Y?" */
};

/* Fills d about the value of name in c: the file and line where it was set
 * (fallback_file, line 0, when c or name is NULL or it was not set by a
 * file) and the formatted text.  Returns -EINVAL, for `return config_diag_at(...)`. */
int config_diag_at(struct config_diag *d, const struct config *c, const char *name,
		   const char *fallback_file, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The same from a va_list, for a module's own wrapper. */
int config_diag_vat(struct config_diag *d, const struct config *c, const char *name,
		    const char *fallback_file, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/* "file:line:column: text", leaving out column (and line) when 0. */
void config_diag_format(const struct config_diag *d, char *buf, size_t size);

struct config *config_new(void);
void config_free(struct config *c); /* accepts NULL */

/* Facts are variables that exist before any file is read; a file may
 * override them.  Set them before loading. */
void config_set_fact(struct config *c, const char *name, const char *value);

/* What MMTests' shellpacks/include-sizes.sh defines, as facts from a node's
 * memory (its functions getmemtotals, get_numa_details, ... are read as
 * doing nothing more): HUGE_PAGESIZE (huge_pagesize, 2 MiB when 0),
 * MEMTOTAL_PAGES, MEMTOTAL_HUGEPAGES, HUGETLB_ORDER, and the arrays
 * MMTESTS_NODE_SIZE[i] (node_bytes) and MMTESTS_NODE_ID_BY_SIZE[i] (node
 * ids, smallest node first).  PAGESIZE, WORDSIZE and DOUBLESIZE are set by
 * config_new() from this process. */
void config_set_include_sizes(struct config *c, uint64_t memtotal_bytes, uint64_t huge_pagesize,
			      const uint64_t *node_bytes, size_t nnodes);

/* Where `cat /proc/sys/...` and `cat /sys/...` in a config read (the
 * folder holding proc/ and sys/; NULL or "/" for this machine's, tests
 * give a fake tree). */
void config_set_root(struct config *c, const char *root);

/* The config is of a node that is not this machine (a libvirt guest):
 * `cat` and `grep -q` of a /proc or /sys file answer from the node's facts
 * where they say it (CPUs and NUMA nodes online, the huge page size), and
 * otherwise read this machine's file with a warning naming the line that
 * the node's own is not known before it runs.  Not set (the host, local
 * guests): the file read is the node's own, and nothing is warned. */
void config_set_node_elsewhere(struct config *c, bool elsewhere);

/* Loads one file, adding to (and overriding) what is already there.
 * 0 on success; -EINVAL with *err filled on a syntax error (the lines
 * before it stay loaded); -errno when the file cannot be read, -EFBIG when
 * it is larger than CONFIG_FILE_MAX (err->text says so).  Warnings
 * accumulate. */
int config_load_file(struct config *c, const char *path, struct config_diag *err);
/* The same from a string, file names the origin in diagnostics. */
int config_load_string(struct config *c, const char *file, const char *text, struct config_diag *err);

/* hostd --set NAME=VALUE: sets NAME to VALUE (taken literally, nothing
 * expanded) as if a last line of the config did, its place being the file
 * "--set".  0, or -EINVAL with err naming the assignment when it is not
 * NAME=VALUE with a valid name. */
int config_override(struct config *c, const char *assignment, struct config_diag *err);

/* The value of a name set by a file (not facts), or NULL. */
const char *config_get(const struct config *c, const char *name);
/* Where a name was last set; false when it was not set by a file. */
bool config_where(const struct config *c, const char *name, const char **file, int *line);

/* Names set by files, in the order first set; for prefixed keys such as
 * COMMAND_<name>.  Returns the count; *names points into the config. */
size_t config_names(const struct config *c, const char ***names);

/*
 * Typed getters.  Each returns 0 with *out set; 1 when the name is not set
 * (out untouched, so callers preset the default); -EINVAL with err naming
 * file:line, the name and the value when the value is not of the type.
 * Blanks around a value are ignored.
 */
int config_get_int(const struct config *c, const char *name, int64_t min, int64_t max, int64_t *out,
		   struct config_diag *err);
/* yes/no/true/false/1/0/on/off, any case */
int config_get_bool(const struct config *c, const char *name, bool *out, struct config_diag *err);
/* seconds, fractions allowed ("1.5"), optional suffix ms/s/m/h */
int config_get_seconds(const struct config *c, const char *name, double min, double max,
		       double *out, struct config_diag *err);
/* one of choices (NULL-terminated), any case; *out is its index */
int config_get_choice(const struct config *c, const char *name, const char *const *choices,
		      int *out, struct config_diag *err);

/* First of several names that is set (MMTests' name, then our alias). */
const char *config_first_set(const struct config *c, const char *const *names);

/* One warning per name set by a file that is not in known (NULL-terminated)
 * and does not start with one of prefixes (NULL-terminated, may be NULL):
 * "unknown name X, did you mean Y?" with the closest known name (when one
 * is close enough).  Returns how many names were unknown.  The config is
 * const because what it says does not change; its warnings do. */
size_t config_check_known(const struct config *c, const char *const *known,
			  const char *const *prefixes);

/* As config_check_known, and the names in ignored (NULL-terminated, may be
 * NULL; an entry ending in '*' is a prefix) are not unknown: those a file
 * sets are listed in one warning per file, "ignored MMTests settings
 * (lockstep does not act on them): RUN_MONITOR, MONITORS_ALWAYS"; an entry
 * "NAME: why" gets a warning of its own where NAME is set, "NAME ignored:
 * why".  A name
 * in known or prefixes is never listed as ignored.  Returns how many names
 * were unknown (the ignored ones are not counted). */
size_t config_check_known_ex(const struct config *c, const char *const *known,
			     const char *const *prefixes, const char *const *ignored);

/* MMTests settings lockstep accepts and does not act on (mmtests_names.c),
 * for config_check_known_ex. */
extern const char *const config_mmtests_ignored[];

/* A file a config writes with cat >FILE <<END ... END: shipped with the
 * steps into each node's work folder, where steps run, as name. */
struct config_shipped {
	const char *path; /* FILE as the config wrote it, expanded */
	const char *name; /* its last component: the file in the work folder */
	const char *text; /* the body, expanded unless the delimiter was quoted */
	size_t len;
	const char *file; /* where the cat was */
	int line;
};

/* The shipped files, in the order written (a later one of the same name
 * replaces the earlier).  Returns the count; *out points into c. */
size_t config_shipped(const struct config *c, const struct config_shipped **out);

/* Adds a warning placed where name was set (the file only, line 0, when
 * it was not set by a file), for readers of a setting that accept a value
 * in part: "MONITORS_GZIP: ignored ...".  The config is const for the same
 * reason as config_check_known's. */
void config_warn_at(const struct config *c, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Warnings gathered so far (unset variables, unknown names). */
size_t config_warnings(const struct config *c, const struct config_diag **diags);

#endif
