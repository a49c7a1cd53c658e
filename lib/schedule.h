/*
 * schedule.h: calendar schedules (issue 33; the design is
 * doc/schedules.md). A schedule is a row of <table>_schedules: a cron
 * expression in a zone (cron.h) and the job each run pushes. Firing a
 * due schedule pushes its runs as ordinary jobs and records each
 * instant in the ledger <table>_fired, keyed by (schedule, instant), so
 * that no instant runs twice whatever archive and purge do to the jobs.
 *
 * Schedules are declared in a file (mq-schedule(5)), parsed here
 * without a server (schedfile.c), and applied to the table all or
 * nothing (schedule.c).
 */
#ifndef MQ_SCHEDULE_H
#define MQ_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "cron.h"
#include "mq.h"

/** Longest schedule name (validated like a queue name). */
#define MQ_SCHEDULE_NAME_MAX 64
/** Longest schedule file accepted, in bytes. */
#define MQ_SCHEDFILE_MAX (16u << 20)

/** What firing does with instants it finds late (missed runs). */
enum mq_missed {
	MQ_MISSED_SKIP = 0,	/* none runs: recorded skipped */
	MQ_MISSED_ONCE,		/* the latest runs, the older are skipped */
	MQ_MISSED_ALL		/* each runs, at most missed_max of them */
};
#define MQ_MISSED_DEFAULT MQ_MISSED_ONCE
#define MQ_MISSED_MAX_DEFAULT 10
#define MQ_MISSED_MAX_LIMIT 1000

/**
 * One schedule as declared: plain data. Strings are NUL-terminated and
 * valid: name and queue by mq_valid_queue, zone by mq_tz_valid_name and
 * loadable, key (if has_key) by mq_valid_key; expr is the canonical
 * form (mq_cron_format) of a valid expression. payload: as the one who
 * fills it says (malloc'd in a row read from the table; the set's bytes
 * from mq_schedset_get).
 */
struct mq_schedule {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	char expr[MQ_CRON_FORMAT_SIZE];
	char zone[MQ_TZ_NAME_MAX + 1];
	char queue[MQ_QUEUE_MAX + 1];
	unsigned char *payload;		/* never NULL once parsed */
	size_t payload_len;
	int priority;			/* MQ_PRIORITY_MIN..MAX, default 0 */
	unsigned max_attempts;		/* default MQ_DEFAULT_MAX_ATTEMPTS */
	int has_key;
	char key[MQ_KEY_MAX + 1];
	enum mq_missed missed;
	unsigned missed_max;		/* 1..MQ_MISSED_MAX_LIMIT */
	unsigned line;			/* line of its [name] header, 0 if
					 * not from a file */
};

/**
 * A set of schedules (a parsed file), held compactly (schedset.c): a
 * record of bytes each, the texts files repeat (expressions, zones,
 * queues) kept once, an index by name, so that its memory is a few
 * times the file's bytes, not a struct mq_schedule (over a kilobyte) a
 * schedule. Opaque; read by index, in the order they were added.
 */
struct mq_schedset;

/** An empty set; NULL: out of memory. */
struct mq_schedset *mq_schedset_new(void);
/** Adds a copy of s (its payload's bytes too). MQ_OK, MQ_ENOMEM
 * (nothing added), MQ_EINVAL (a name or key longer than they go). */
enum mq_status mq_schedset_add(struct mq_schedset *set,
    const struct mq_schedule *s);
/** How many schedules set holds (0 for NULL). */
size_t mq_schedset_count(const struct mq_schedset *set);
/** Schedule i of set, whole, into *s: its payload points into set
 * (read only, valid while set is). */
void mq_schedset_get(const struct mq_schedset *set, size_t i,
    struct mq_schedule *s);
/** The name of schedule i (NUL-terminated, in set). */
const char *mq_schedset_name(const struct mq_schedset *set, size_t i);
/** The index + 1 of the first schedule of set named name; 0 if none. */
size_t mq_schedset_find(const struct mq_schedset *set, const char *name);
/** The queue of schedule i (NUL-terminated, in set). */
const char *mq_schedset_queue(const struct mq_schedset *set, size_t i);
/** The indexes of set's schedules in the order of their names
 * (strcmp's, the server's for valid names): malloc'd, free(); NULL:
 * out of memory. */
uint32_t *mq_schedset_by_name(const struct mq_schedset *set);
/** Frees set (NULL is fine). */
void mq_schedset_free(struct mq_schedset *set);

/** Sets a schedule's defaults: queue "default", zone "UTC", empty
 * payload (not allocated: payload stays NULL until set), priority 0,
 * MQ_DEFAULT_MAX_ATTEMPTS, no key, MQ_MISSED_DEFAULT,
 * MQ_MISSED_MAX_DEFAULT, line 0; name and expr empty. */
void mq_schedule_defaults(struct mq_schedule *s);

/**
 * Parses a schedule file (mq-schedule(5)) of len bytes. MQ_OK with
 * *out a set of its schedules in file order (it may hold none; free
 * with mq_schedset_free); or MQ_EINVAL and err->msg naming the line
 * and what is wrong ("line 12: [nightly]: cron: column 3: hour: 24 is
 * out of range 0-23"), *out NULL: a file with any error yields
 * nothing. MQ_ENOMEM. payload-file entries are read relative to dir
 * (NULL: the current directory) and count against MQ_SCHEDFILE_MAX
 * too.
 */
enum mq_status mq_schedfile_parse(const char *text, size_t len,
    const char *dir, struct mq_schedset **out, struct mq_error *err);

/**
 * Sets one field of s from its text as a schedule file writes it
 * (mq-schedule(5)): name is "cron", "tz", "queue", "priority",
 * "max-attempts", "key", "missed" or "missed-max" (not the payload).
 * The one home of each value's checks: the file's parser and mq push
 * --cron call it. MQ_OK; or MQ_EINVAL (MQ_ENOMEM) and err->msg
 * ("cron: column 3: hour: 24 is out of range 0-23"), s untouched.
 */
enum mq_status mq_schedule_set(struct mq_schedule *s, const char *name,
    const char *value, struct mq_error *err);

/** Name of a missed policy ("skip", "once", "all"), and the reverse
 * (-1 if none). */
const char *mq_missed_name(enum mq_missed m);
int mq_missed_parse(const char *s);

/* ---- the table's side (schedule.c): <table>_schedules, <table>_fired ---- */

/** The fields an apply compares: bits of mq_apply_result.changed. */
#define MQ_SCHED_EXPR		0x001
#define MQ_SCHED_ZONE		0x002
#define MQ_SCHED_QUEUE		0x004
#define MQ_SCHED_PAYLOAD	0x008
#define MQ_SCHED_PRIORITY	0x010
#define MQ_SCHED_MAX_ATTEMPTS	0x020
#define MQ_SCHED_KEY		0x040
#define MQ_SCHED_MISSED		0x080
#define MQ_SCHED_MISSED_MAX	0x100
/* the row's name differs from the file's in trailing blanks only (a
 * row written by SQL: the column pads with spaces, so the server takes
 * them for the same name): the row is renamed to the file's */
#define MQ_SCHED_NAME		0x200
#define MQ_SCHED_FIELDS		10

/** The name of field bit (1 << i for i < MQ_SCHED_FIELDS) as the file
 * writes it ("cron", "tz", "queue", "payload", "priority",
 * "max-attempts", "key", "missed", "missed-max", "name"); NULL for
 * another. */
const char *mq_schedule_field_name(unsigned bit);

/** A late instant (now - instant >= this) is missed: the policy says
 * whether it runs. */
#define MQ_SCHEDULE_GRACE_S 60

/** Instants that end after 9999-12-31: next_at of a schedule that
 * never fires again (or whose row cannot be read: written by another
 * program with an expression or zone mq refuses). */
#define MQ_SCHEDULE_NEVER MQ_CRON_TIME_MAX

enum mq_applied {
	MQ_APPLIED_ADDED,
	MQ_APPLIED_CHANGED,
	MQ_APPLIED_UNCHANGED,
	MQ_APPLIED_REMOVED
};

/** What an apply did (or would do) to one schedule. */
struct mq_apply_result {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	enum mq_applied what;
	unsigned changed;	/* MQ_SCHED_* bits (CHANGED) */
	int64_t next_at;	/* its next instant after the apply, seconds
				 * since the epoch (0: REMOVED) */
};

/**
 * Makes the table's schedules those of set (names unique), in one
 * transaction, all or nothing: a schedule not in the table is added,
 * due at its first instant after the later of now (the server's clock)
 * and the last instant it fired (the ledger outlives a schedule
 * removed and added again); one whose fields differ is changed, keeping
 * its next_at unless its expression or zone changed (then the first
 * instant of the new ones after the later of now and its last fired
 * instant: never one fired already); one that is the same is not
 * written at all. prune: those not in set are deleted (their ledger and
 * runs stay). dry_run: nothing is written, the results say what would
 * be. *out (free with mq_apply_results_free; it reads the names of set,
 * which must outlive it) holds one result per schedule of set in
 * order, then the removed ones by name. A concurrent writer (another
 * apply, a fire) makes it start again (bounded, as a deadlock is):
 * three applies of one file at once end in the same state. MQ_EINVAL:
 * a schedule of set is not valid (named in the error).
 *
 * Its memory: set's, 10 bytes a schedule of set for the results, the
 * names of the removed rows, and a page of the table's rows (and of
 * the ledger's) at a time: not the table whole.
 */
struct mq_apply_results;
enum mq_status mq_schedule_apply(struct mq_conn *c,
    const struct mq_schedset *set, int prune, int dry_run,
    struct mq_apply_results **out);
/** How many results *a holds, and result i of them. */
size_t mq_apply_results_count(const struct mq_apply_results *a);
void mq_apply_results_get(const struct mq_apply_results *a, size_t i,
    struct mq_apply_result *r);
void mq_apply_results_free(struct mq_apply_results *a);

/** What firing did. */
struct mq_fire_report {
	uint64_t schedules;	/* schedules fired (next_at moved) */
	uint64_t runs;		/* jobs pushed */
	uint64_t skipped;	/* instants recorded skipped (missed) */
	uint64_t broken;	/* rows whose expression or zone cannot be
				 * used: moved to MQ_SCHEDULE_NEVER */
	int64_t now_us;		/* the server's clock when it ended */
	int64_t next_us;	/* the earliest next_at of the schedules of
				 * the queues, after firing (µs since the
				 * epoch); 0 if there is none: sleep until
				 * then at most, then fire again */
};

/**
 * Fires the due schedules (next_at <= the server's now) of queues (a
 * list as mq_valid_queue_list takes; NULL: every queue), at most max
 * of them (0: no bound), one transaction each: the row locked (SKIP
 * LOCKED: another process firing it is passed over), the instants from
 * next_at up to now (but none up to the last one in the ledger) by the
 * missed policy (grace MQ_SCHEDULE_GRACE_S; skip, once, all with
 * missed_max; at most MQ_MISSED_MAX_LIMIT of the newest instants are
 * recorded, the older ones of a long outage are passed over), a
 * ledger row for each (a duplicate key: another process fired it; the
 * transaction starts again), a job for each run (the schedule's queue,
 * payload, priority, max_attempts and key; due at its instant), next_at
 * moved to the first instant after now. After each commit, the
 * queue's waiters are woken as a push wakes them. *r filled (also on
 * an error: what was done before it).
 */
enum mq_status mq_schedule_fire(struct mq_conn *c, const char *queues,
    size_t max, struct mq_fire_report *r);

/**
 * One run of schedule name now, as a job due now (a ledger row marked
 * manual, at the server's now); next_at unchanged. MQ_OK and *id;
 * MQ_EMPTY if there is no such schedule.
 */
enum mq_status mq_schedule_run(struct mq_conn *c, const char *name,
    uint64_t *id);

/** Deletes schedule name (its ledger rows and runs stay). MQ_EMPTY if
 * there is none. */
enum mq_status mq_schedule_rm(struct mq_conn *c, const char *name);

/** A schedule as the table holds it (mq_schedule_list). */
struct mq_schedule_row {
	struct mq_schedule s;	/* payload malloc'd (line 0) */
	int64_t next_at_us;	/* µs since the epoch */
	uint64_t version;
	int has_last;		/* it fired (the ledger's newest run) */
	int64_t last_us;	/* that instant */
	int last_manual;	/* mq schedule run */
	uint64_t last_job;	/* its job (0: the instant was skipped) */
	char last_state[16];	/* the job's state: ready, leased, done,
				 * dead (archived ones too), or "gone"
				 * (purged) */
	int64_t now_us;		/* the server's clock at the read */
	size_t name_len;	/* bytes of the name, expression, zone, */
	size_t expr_len;	/* queue and key: a row another program */
	size_t zone_len;	/* wrote may hold a NUL byte, where s's */
	size_t queue_len;	/* strings end early (at most what s */
	size_t key_len;		/* holds of them) */
	unsigned nul;		/* MQ_SCHED_NAME, _EXPR, _ZONE, _QUEUE,
				 * _KEY: the fields holding a NUL byte */
	unsigned toolong;	/* the same: those longer than s holds */
};

/** Longest reason of mq_schedule_unusable, with its NUL. */
#define MQ_UNUSABLE_MAX 320

/**
 * Whether schedule row r holds what no mq writes (another program's
 * row: a name, queue, zone, expression, key or number mq refuses, a NUL
 * byte in a name or key), so that it can fire on no host: firing sets it
 * aside (next_at MQ_SCHEDULE_NEVER), mq schedule run refuses it, ls says
 * so. 1 and why (MQ_UNUSABLE_MAX bytes; it may quote the row's bytes
 * unescaped) filled, or 0. A fact of the row, the same on every host
 * (unlike whether its zone loads here).
 */
int mq_schedule_unusable(const struct mq_schedule_row *r, char *why);

/**
 * mq archive: deletes the ledger rows fired more than older_than_us ago,
 * but the newest of each schedule's runs and of its runs by hand (what
 * keeps firing from going back: an instant never runs twice), by
 * ranges of the primary key of at most batch rows, each statement its
 * own transaction. *deleted counts them (also on an error).
 */
enum mq_status mq_schedule_prune_ledger(struct mq_conn *c,
    int64_t older_than_us, unsigned batch, uint64_t *deleted);

/**
 * Every schedule, by name: each(ctx, row) for each, a page of rows at a
 * time (each page read whole before its rows are handed over, so that
 * no statement waits on a slow reader of the rows), keyed by the last
 * name of the page before. Its memory: one page (at most
 * MQ_SCHEDULE_PAGE rows, and the payloads of about a MiB of them), not
 * the table. Not one snapshot: a schedule added or removed meanwhile
 * may show or not, as in mq ls. A row is valid during its call only.
 */
#define MQ_SCHEDULE_PAGE 256
enum mq_status mq_schedule_list(struct mq_conn *c,
    void (*each)(void *ctx, const struct mq_schedule_row *row), void *ctx);
void mq_schedule_rows_free(struct mq_schedule_row *rows, size_t n);

/**
 * The first n instants of a schedule from from_s on (from_s itself if
 * it is one), in out[0..*got): as firing computes them. MQ_EINVAL (err
 * filled) if its expression or zone cannot be used.
 */
enum mq_status mq_schedule_instants(const struct mq_schedule *s,
    int64_t from_s, int64_t *out, size_t n, size_t *got,
    struct mq_error *err);

/* ---- a schedule's runs, read for operators (schedule_runs.c) ---- */

/** One ledger row of a schedule and its job's outcome. */
struct mq_schedule_run {
	int64_t instant_us;	/* its instant (UTC), µs since the epoch */
	int manual;		/* mq schedule run */
	uint64_t job;		/* 0: the instant was skipped (missed) */
	char state[16];		/* the job's stored state: ready, leased,
				 * done, dead (the archive's if archived);
				 * "gone" once purged, "skipped" for job 0 */
	int archived;		/* the job is in the archive */
};

/** The schedule a job runs (mq_run_of_job). */
struct mq_run_of {
	char schedule[MQ_SCHEDULE_NAME_MAX + 1];	/* from the ledger */
	size_t schedule_len;	/* a row another program wrote may hold a
				 * NUL: show schedule_len bytes, escaped */
	struct mq_schedule_run run;	/* this job's row (state unset) */
	int has_schedule;	/* the schedule still exists: s (name, expr,
				 * zone, queue; payload NULL), its next
				 * instant and the server's now */
	struct mq_schedule s;
	size_t lens[3];		/* bytes of s's expr, zone and queue: a row
				 * another program wrote may hold a NUL */
	int64_t next_at_us, now_us;
	struct mq_schedule_run *last;	/* its newest runs, newest first
					 * (malloc'd) */
	size_t nlast;
};

/**
 * The schedule and instant job runs, from the ledger (its job index),
 * with that schedule's row if it still exists and its newest last runs
 * (mq_schedule_runs). MQ_OK; MQ_EMPTY if the job is no schedule's run.
 * Free with mq_run_of_free.
 */
enum mq_status mq_run_of_job(struct mq_conn *c, uint64_t job, size_t last,
    struct mq_run_of *r);
void mq_run_of_free(struct mq_run_of *r);

/** Schedule name's expression, zone and queue (payload NULL) and their
 * bytes in lens (a NUL byte among them in a row another program wrote),
 * its next instant and the server's now. MQ_EMPTY if there is no such
 * schedule. */
enum mq_status mq_schedule_next(struct mq_conn *c, const char *name,
    struct mq_schedule *s, size_t lens[3], int64_t *next_at_us,
    int64_t *now_us);

/** The newest max ledger rows of schedule name (those of a schedule
 * removed too), newest first, with their jobs' outcomes: *runs
 * (malloc'd, free()), *n of them. */
enum mq_status mq_schedule_runs(struct mq_conn *c, const char *name,
    size_t max, struct mq_schedule_run **runs, size_t *n);

/** A schedule's name (mq_schedule_names): len bytes, which a row
 * another program wrote may make other than strlen(name). */
struct mq_schedule_name {
	char name[MQ_SCHEDULE_NAME_MAX + 1];
	size_t len;
};

/** Every schedule's name, in order: *names (malloc'd, free()), *n of
 * them (shell completion). */
enum mq_status mq_schedule_names(struct mq_conn *c,
    struct mq_schedule_name **names, size_t *n);

#endif
