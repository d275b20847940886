// SPDX-License-Identifier: GPL-2.0-or-later
/* Where a participant is in its steps (run_step.h).  No I/O, no log. */
#include "run_step.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct part_step {
	uint32_t running; /* released into it (0: none yet) */
	bool started;	  /* sent started for it */
	bool done;	  /* sent done for it */
	uint32_t steps_done;
	uint32_t results;
	uint64_t result_names[RUN_RESULTS_PER_STEP_MAX]; /* hashes of the step's metrics */
	uint64_t output;
	/* the step's raw output, kept for its parser (run_bench.c) */
	char *buf;
	size_t buf_len;
	bool buf_cut; /* more came than RUN_PARSE_INPUT_MAX */
	/* agent error text shown (RUN_GUEST_TEXT_*) and held back */
	uint32_t text_step;
	uint64_t text_step_bytes, text_run_bytes, text_held;
	uint32_t text_held_step;
};

struct part_step *part_step_new(void)
{
	return xcalloc(1, sizeof(struct part_step));
}

void part_step_free(struct part_step *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s);
}

void part_step_release(struct part_step *s, uint32_t k)
{
	s->running = k;
	s->started = s->done = false;
	s->results = 0;
	s->output = 0;
}

uint32_t part_step_released(const struct part_step *s)
{
	return s->running;
}

uint32_t part_step_running(const struct part_step *s)
{
	return s->done ? 0 : s->running;
}

bool part_step_has_started(const struct part_step *s)
{
	return s->started;
}

uint32_t part_step_done_count(const struct part_step *s)
{
	return s->steps_done;
}

bool part_step_matches(const struct part_step *s, uint32_t step)
{
	return step == s->running && s->running != 0 && !s->done;
}

int part_step_started(struct part_step *s)
{
	if (s->started)
		return -EALREADY;
	s->started = true;
	return 0;
}

void part_step_done(struct part_step *s)
{
	s->done = true;
	s->steps_done++;
}

void part_step_cut(struct part_step *s)
{
	s->done = true;
}

int part_step_count_result(struct part_step *s)
{
	return ++s->results > RUN_RESULTS_PER_STEP_MAX ? -E2BIG : 0;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int part_step_result_name(struct part_step *s, const char *metric)
{
	uint64_t h = name_hash(metric);
	for (uint32_t i = 0; i + 1 < s->results; i++)
		if (s->result_names[i] == h)
			return -EEXIST;
	s->result_names[s->results - 1] = h;
	return 0;
}

enum part_step_output part_step_output(struct part_step *s, size_t len)
{
	if (s->output >= RUN_OUTPUT_PER_STEP_MAX)
		return PART_STEP_OUTPUT_DROP;
	s->output += len;
	return s->output >= RUN_OUTPUT_PER_STEP_MAX ? PART_STEP_OUTPUT_LAST : PART_STEP_OUTPUT_KEEP;
}

void part_step_buffer(struct part_step *s, const char *data, size_t len)
{
	if (s->buf_cut)
		return;
	if (s->buf_len + len > RUN_PARSE_INPUT_MAX) {
		s->buf_cut = true;
		return;
	}
	s->buf = xrealloc(s->buf, s->buf_len + len);
	memcpy(s->buf + s->buf_len, data, len);
	s->buf_len += len;
}

const char *part_step_buffered(const struct part_step *s, size_t *len, bool *cut)
{
	*len = s->buf_len;
	*cut = s->buf_cut;
	return s->buf ? s->buf : "";
}

bool part_step_buffer_cut(const struct part_step *s)
{
	return s->buf_cut;
}

void part_step_buffer_drop(struct part_step *s)
{
	free(s->buf);
	s->buf = NULL;
	s->buf_len = 0;
	s->buf_cut = false;
}

/* Text held back, said: at the end of its step, or once the run's budget
 * is spent, at the end of the run. */
static struct part_step_held take_held(struct part_step *s, bool final)
{
	struct part_step_held h = { 0 };
	if (!s->text_held || (!final && s->text_run_bytes >= RUN_GUEST_TEXT_PER_RUN_MAX))
		return h;
	h.bytes = s->text_held;
	h.step = s->text_held_step;
	s->text_held = 0;
	return h;
}

bool part_step_text(struct part_step *s, uint32_t step, size_t len, struct part_step_held *held)
{
	*held = (struct part_step_held){ 0 };
	if (step != s->text_step) {
		*held = take_held(s, false);
		s->text_step = step;
		s->text_step_bytes = 0;
	}
	if (s->text_step_bytes + len > RUN_GUEST_TEXT_PER_STEP_MAX ||
	    s->text_run_bytes + len > RUN_GUEST_TEXT_PER_RUN_MAX) {
		if (!s->text_held)
			s->text_held_step = step;
		s->text_held += len;
		if (s->text_run_bytes + len > RUN_GUEST_TEXT_PER_RUN_MAX)
			s->text_run_bytes = RUN_GUEST_TEXT_PER_RUN_MAX; /* spent: no more */
		return false;
	}
	s->text_step_bytes += len;
	s->text_run_bytes += len;
	return true;
}

struct part_step_held part_step_text_final(struct part_step *s)
{
	return take_held(s, true);
}
