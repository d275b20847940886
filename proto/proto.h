/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto: the wire protocol between hostd and guestagent.
 *
 * Newline-delimited JSON (one object per line, json-c plain output), a
 * version in every message, unknown fields ignored.  The byte 0xFF never
 * occurs in JSON text and means "reset": the decoder drops any partial line
 * and reports PROTO_EV_RESET.  Pure code: no I/O, no logging, no clocks.
 *
 * Everything here is fed by an untrusted peer, so every size is bounded by
 * the PROTO_*_MAX limits below; anything larger is an error, never a larger
 * allocation.
 */
#ifndef LOCKSTEP_PROTO_H
#define LOCKSTEP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_RESET_BYTE 0xFF

/* Limits on what a peer can make us allocate or store. */
#define PROTO_LINE_MAX (64 * 1024)   /* bytes in one line, newline excluded */
#define PROTO_DEPTH_MAX 6	     /* JSON nesting depth */
#define PROTO_FIELDS_MAX 64	     /* members in one object */
#define PROTO_NAME_MAX 64	     /* node/benchmark/metric names, incl. NUL */
#define PROTO_SHORT_MAX 48	     /* units, versions, codes, boot ids, incl. NUL */
#define PROTO_TEXT_MAX 1024	     /* error texts, reasons, fingerprints, incl. NUL */
#define PROTO_COMMAND_MAX 4096	     /* a step's command line, incl. NUL */
#define PROTO_KERNEL_MAX 65	     /* uname's kernel release, incl. NUL */
#define PROTO_OUTPUT_MAX (32 * 1024) /* bytes of raw output in one message */
/* An output chunk this size always fits in a line, whatever its bytes: JSON
 * spells a control byte as 6 ("\u0001"), and 6 * 8 KiB < PROTO_LINE_MAX. */
#define PROTO_OUTPUT_CHUNK (8 * 1024)
#define PROTO_STEPS_MAX 4096		      /* steps in one plan */
#define PROTO_MONITOR_INTERVAL_MAX_MS 3600000 /* plan.monitor_interval_ms */
#define PROTO_MONITORS_MAX 8		      /* external monitors of one node (monitor.count) */
#define PROTO_PTP_WINDOW_MAX_NS 1000000000LL  /* pong.ptp_window_ns */

enum proto_type {
	PROTO_HELLO = 1,      /* agent -> host: who and where I am */
	PROTO_SYNC,	      /* both: after 0xFF, "ignore all until you ack this" */
	PROTO_SYNC_ACK,	      /* both: the nonce of the peer's sync */
	PROTO_PLAN,	      /* host -> agent: the steps this node runs */
	PROTO_READY,	      /* agent -> host: waiting at the barrier of a step */
	PROTO_GO,	      /* host -> agent: start a step (now, or at an instant) */
	PROTO_STARTED,	      /* agent -> host: the instant the step started */
	PROTO_RESULT,	      /* agent -> host: one metric of a step */
	PROTO_OUTPUT,	      /* agent -> host: a chunk of a step's raw output */
	PROTO_DONE,	      /* agent -> host: a step finished */
	PROTO_SAMPLE,	      /* agent -> host: one monitor sample */
	PROTO_PING,	      /* host -> agent: clock exchange */
	PROTO_PONG,	      /* agent -> host: the same exchange, stamped */
	PROTO_ERROR,	      /* both: something the peer should know went wrong */
	PROTO_BYE,	      /* both: the sender is going away, on purpose */
	PROTO_MONITOR,	      /* host -> agent: one external monitor to run at each step */
	PROTO_MONITOR_OUTPUT, /* agent -> host: a chunk of an external monitor's output */
};

enum proto_step_kind {
	PROTO_STEP_CPU_PROBE = 1, /* built-in fixed amount of work */
	PROTO_STEP_COMMAND,	  /* a shell command line; output captured */
};

/*
 * A step's command lives on the heap, allocated to its length, so that a
 * plan of PROTO_STEPS_MAX steps costs what its commands do, not 4 KiB a
 * step.  Ownership is that of the step: whoever holds a step array owns the
 * commands in it.
 *  - A decoded plan owns its steps and their commands; proto_msg_clear()
 *    frees both.  A callback that takes steps (setting plan.steps NULL)
 *    takes their commands with them.
 *  - Copying a struct proto_step by assignment or memcpy moves the command:
 *    the source must then forget it (set it NULL), or use proto_step_copy()
 *    to keep both.
 *  - An array built by hand is freed with proto_steps_free().
 *  - A message that borrows another's steps (to encode them) is not
 *    cleared.
 */
struct proto_step {
	uint32_t index;	    /* 1-based, same on every node */
	uint32_t iteration; /* 1-based */
	char benchmark[PROTO_NAME_MAX];
	enum proto_step_kind kind;
	uint64_t units; /* cpu-probe: units of work */
	/* command: run with /bin/sh -c; 1..PROTO_COMMAND_MAX-1 bytes, owned.
	 * NULL for a cpu-probe. */
	char *command;
};

/* Replaces st's command (freeing the old one) with a copy of command, or
 * with none for NULL.  0, or -EINVAL when command is PROTO_COMMAND_MAX bytes
 * or longer (st is left as it was).  Aborts on out-of-memory. */
int proto_step_set_command(struct proto_step *st, const char *command);
/* *dst = *src with a copy of src's command.  dst's old contents are not
 * freed: it is uninitialised or owns no command. */
void proto_step_copy(struct proto_step *dst, const struct proto_step *src);
/* Frees the commands of steps[0..n) and steps itself; NULL is a no-op. */
void proto_steps_free(struct proto_step *steps, size_t n);

struct proto_msg {
	enum proto_type type;
	uint32_t version;
	union {
		struct {
			char node[PROTO_NAME_MAX];
			char agent_version[PROTO_SHORT_MAX];
			uint32_t proto_min, proto_max;
			char boot_id[PROTO_SHORT_MAX];
			char clocksource[PROTO_SHORT_MAX];
			char hostkey[PROTO_TEXT_MAX]; /* SSH host key fingerprint, may be "" */
			uint32_t step;		      /* the step it is at: 0 before the first */
			/* optional: the kernel release the agent runs on
			 * (uname -r); "" from an older agent */
			char kernel[PROTO_KERNEL_MAX];
		} hello;
		struct {
			uint64_t nonce;
		} sync; /* PROTO_SYNC and PROTO_SYNC_ACK */
		struct {
			char node[PROTO_NAME_MAX];
			uint32_t nsteps;
			/* owned with their commands; proto_msg_clear frees */
			struct proto_step *steps;
			/* optional: built-in monitors sample this often; 0 (or
			 * missing, from an older hostd) = monitors off */
			uint32_t monitor_interval_ms;
			/* optional: 0 (or missing): steps is the whole plan.
			 * Else the plan has total steps and this message is the
			 * part that starts at steps[0].index: a plan longer
			 * than one line travels as consecutive parts. */
			uint32_t total;
		} plan;
		struct {
			uint32_t step;
		} ready;
		struct {
			uint32_t step;
			int64_t at_ns; /* 0: now; else an instant of the AGENT's CLOCK_MONOTONIC
					  (hostd converts from its own clock per guest) */
		} go;
		struct {
			uint32_t step;
			int64_t mono_ns; /* agent CLOCK_MONOTONIC when work began */
			int64_t late_ns; /* how late after go.at_ns, 0 if on time */
			/* optional (0: not sent; older agents send none), on the
			 * agent's clock: when the agent read the go, when the
			 * step's child read it from the agent, and how long the
			 * child was runnable but not running from then to its
			 * start stamp (docs/protocol.md) */
			int64_t agent_go_ns, child_go_ns, runq_ns;
		} started;
		struct {
			uint32_t step;
			char metric[PROTO_NAME_MAX];
			double value;
			char unit[PROTO_SHORT_MAX];
			bool higher_is_better;
		} result;
		struct {
			uint32_t step;
			size_t len; /* at most PROTO_OUTPUT_MAX */
			char *data; /* owned, valid UTF-8, NUL-terminated; may hold
					U+0000 itself (raw output), so use len */
		} output;
		struct {
			uint32_t step;
			int64_t mono_ns;     /* agent CLOCK_MONOTONIC when work ended */
			int32_t exit_status; /* 0 = success; for commands, the exit code */
		} done;
		struct {
			uint32_t step;
			int64_t mono_ns;
			char metric[PROTO_NAME_MAX];
			double value;
			char unit[PROTO_SHORT_MAX];
		} sample;
		struct {
			uint64_t seq;
			int64_t t1; /* host send */
			int64_t t2; /* agent receive (pong only) */
			int64_t t3; /* agent send (pong only) */
			/* pong only, optional: a reading of the guest's KVM PTP
			 * clock taken between t2 and t3, all four set or all 0
			 * (docs/protocol.md): at agent instant ptp_mono_ns its
			 * CLOCK_REALTIME read ptp_real_ns and the host's
			 * CLOCK_REALTIME ptp_host_real_ns, within ptp_window_ns
			 * (>= 1: the full width of the uncertainty) */
			int64_t ptp_mono_ns, ptp_real_ns, ptp_host_real_ns, ptp_window_ns;
		} ping; /* PROTO_PING and PROTO_PONG */
		struct {
			uint32_t step; /* 0 when not about a step */
			char code[PROTO_SHORT_MAX];
			char text[PROTO_TEXT_MAX];
		} error;
		struct {
			char reason[PROTO_TEXT_MAX];
		} bye;
		/* The node's external monitors are the monitors 1..count, one
		 * message each (sent before the plan, again after each hello):
		 * the agent runs command (split at spaces, no shell) from each
		 * step's start to its end. */
		struct {
			uint32_t index;		      /* 1..count */
			uint32_t count;		      /* 1..PROTO_MONITORS_MAX */
			char name[PROTO_NAME_MAX];    /* "vmstat": names the output */
			char command[PROTO_TEXT_MAX]; /* "vmstat -n -t 1" */
		} monitor;
		/* The first three members are output's, in its order: proto's
		 * code for output data serves both. */
		struct {
			uint32_t step;
			size_t len;
			char *data; /* owned, as output.data */
			char monitor[PROTO_NAME_MAX];
		} monitor_output;
	} u;
};

/* Frees what a decoded or hand-built message owns (plan steps and their
 * commands, output data) and zeroes *m. */
void proto_msg_clear(struct proto_msg *m);
/* The name on the wire ("sync-ack"); "unknown" for a value out of the enum. */
const char *proto_type_name(enum proto_type t);
/* Whether a and b carry the same type and the same value in every field that
 * type puts on the wire (version and fields of other types are not compared). */
bool proto_msg_equal(const struct proto_msg *a, const struct proto_msg *b);

/* A growable byte buffer; encoders append to it. */
struct proto_buf {
	char *data;
	size_t len, cap;
};
void proto_buf_free(struct proto_buf *b);
void proto_buf_consume(struct proto_buf *b, size_t n); /* drop n bytes from the front */

/* Appends one encoded line ("...\n") to out.  0 or -EINVAL (an unknown type,
 * a field out of range, a string over its limit, not UTF-8 or not a valid
 * name, the line over PROTO_LINE_MAX); on error out is left as it was.  The
 * encoder accepts exactly what the decoder accepts. */
int proto_encode(const struct proto_msg *m, struct proto_buf *out);
/* Appends a plan as one line, or as consecutive parts (each its own line,
 * "total" set) when it does not fit in one.  0 or -EINVAL as proto_encode;
 * on error out is left as it was. */
int proto_encode_plan(const struct proto_msg *plan, struct proto_buf *out);
/* Appends 0xFF followed by a sync line carrying nonce. */
int proto_encode_reset_sync(uint64_t nonce, struct proto_buf *out);

/*
 * The decoder: feed it bytes as they come, in pieces of any size.
 */
enum proto_event {
	PROTO_EV_MSG,	/* msg is valid; the decoder calls proto_msg_clear(msg) after
			   fn returns, so fn takes an owned pointer by setting it NULL */
	PROTO_EV_RESET, /* a 0xFF arrived: any partial line was dropped */
	PROTO_EV_ERROR, /* a line was refused: err and detail say why */
};

/*
 * err for PROTO_EV_ERROR:
 *   -EMSGSIZE        line over PROTO_LINE_MAX (the rest of it is skipped)
 *   -EILSEQ          invalid UTF-8
 *   -EBADMSG         not JSON, not an object, too deep/wide, a field missing,
 *                    of the wrong type, or out of range
 *   -EPROTONOSUPPORT "v" is not PROTO_VERSION
 *   -ENOMSG          unknown "type"
 */
typedef void (*proto_event_fn)(void *ctx, enum proto_event ev, struct proto_msg *msg, int err,
			       const char *detail);

struct proto_decoder {
	char *line; /* partial line, at most PROTO_LINE_MAX bytes */
	size_t len;
	size_t cap;    /* of line: grows with the longest line so far */
	bool skipping; /* inside an over-long line: drop bytes until '\n' */
};

/* A zeroed decoder is initialised too.  Its buffer grows with the lines it
 * sees, up to PROTO_LINE_MAX + 1 bytes (a NUL ends the line), never more. */
void proto_decoder_init(struct proto_decoder *d);
void proto_decoder_free(struct proto_decoder *d);
/* Drops any partial line, e.g. after the peer reconnected. */
void proto_decoder_reset(struct proto_decoder *d);
/* Calls fn once per event, in stream order; how data is split does not change
 * the events.  fn may call proto_decoder_reset() on d, but not feed or free
 * it. */
void proto_decoder_feed(struct proto_decoder *d, const void *data, size_t len, proto_event_fn fn,
			void *ctx);

/*
 * The link: the resync rule of DESIGN.md, as a pure state machine.
 * After a (re)connect, a timeout or a parse error a side calls
 * proto_link_restart(), which sends 0xFF + sync(nonce) and makes the link
 * drop everything but sync/sync-ack until the peer acks that nonce.  A sync
 * from the peer is always acked.
 */
struct proto_link {
	bool synced;
	bool pending;	/* nonce was sent and is awaiting its ack */
	uint64_t nonce; /* ours */
};

enum proto_link_verdict {
	PROTO_LINK_DELIVER,  /* synced: hand the message to the session */
	PROTO_LINK_CONSUMED, /* a sync or sync-ack, handled here */
	PROTO_LINK_DROPPED,  /* arrived while resyncing: ignore it */
	PROTO_LINK_SYNCED,   /* this sync-ack completed a resync: re-announce state */
};

/* A zeroed link is not synced (and nothing is pending): it delivers nothing
 * until it was restarted and the peer acked.  Use a fresh random nonce each
 * time, so that a late ack of an earlier restart cannot complete this one. */
void proto_link_restart(struct proto_link *l, uint64_t nonce, struct proto_buf *out);
/* m is a message the decoder delivered; a sync is answered by appending a
 * sync-ack to out. */
enum proto_link_verdict proto_link_input(struct proto_link *l, const struct proto_msg *m,
					 struct proto_buf *out);

/* Node, benchmark and metric names: [A-Za-z0-9._-], 1..PROTO_NAME_MAX-1, not
 * starting with '.', so that they are safe as path components. */
bool proto_name_valid(const char *s);

#endif
