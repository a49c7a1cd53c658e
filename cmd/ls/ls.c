/*
 * ls.c: mq ls: jobs by queue, key, state, error text, time and recurrence,
 * oldest first,
 * a page at a time: a table for people (ls/table.c), JSON lines or bare
 * ids for programs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ls.h"

enum { OPT_STATE = OPT_CMD, OPT_KEY, OPT_ERROR, OPT_SINCE, OPT_BEFORE, OPT_LIMIT,
	OPT_AFTER, OPT_JSON, OPT_IDS, OPT_RECURRING, OPT_SCHEDULE };

static const struct opt opts[] = {
	{ OPT_QUEUE, "queue", 0, "Q", "only this queue (default: every queue)",
	    COMPLETE_QUEUE, NULL, NULL, 0, 0 },
	{ OPT_STATE, "state", 0, "S[,S...]",
	    "only these states: ready, scheduled, waiting,\nleased, stale, "
	    "done, dead, invalid, archived\n(default: all but archived)",
	    COMPLETE_WORD_LIST,
	    "ready scheduled waiting leased stale done dead invalid archived",
	    NULL, 0,
	    0 },
	{ OPT_KEY, "key", 0, "KEY", "only jobs of this key (mq push --key)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_RECURRING, "recurring", 0, NULL, "only recurring jobs: pushed with "
	    "--every, and\nthe runs of calendar schedules", COMPLETE_NONE,
	    NULL, NULL, 0, 0 },
	{ OPT_SCHEDULE, "schedule", 0, "NAME", "only the runs of this calendar "
	    "schedule\n(mq schedule ls)", COMPLETE_SCHEDULE, NULL, NULL, 0, 0 },
	{ OPT_ERROR, "error", 0, "PATTERN",
	    "only jobs whose last error contains PATTERN\n(plain text: % and _ "
	    "are not wildcards)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_SINCE, "since", 0, "D",
	    "only jobs finished (else made) within D", COMPLETE_DURATION, NULL,
	    NULL, 0, 0 },
	{ OPT_BEFORE, "before", 0, "D",
	    "only jobs finished (else made) over D ago", COMPLETE_DURATION,
	    NULL, NULL, 0, 0 },
	{ OPT_LIMIT, "limit", 0, "N", "at most N jobs (default 100, at most "
	    "10000)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_AFTER, "after", 0, "ID", "only jobs with ids above ID (the next "
	    "page)", COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_JSON, "json", 0, NULL, "one JSON object per job and line",
	    COMPLETE_NONE, NULL, "[--json | --ids]", 0, 0 },
	{ OPT_IDS, "ids", 0, NULL, "the ids alone, one per line",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command ls_command = {
	"ls", "list jobs by queue, state, error, time", opts, { "", NULL },
	CMD_READS_ONLY, cmd_ls, NULL
};

enum form { FORM_TABLE, FORM_JSON, FORM_IDS };

struct ls_args {
	struct mq_list_filter f;
	enum form form;
	int forms;		/* the forms asked for (bits) */
	int queue_given;	/* --queue (not MQ_QUEUE) */
	struct ls_rows rows;	/* the table's, until it is printed */
	uint64_t last;		/* the last id listed */
};

/* --state's list into bits of enum mq_state. */
static unsigned
parse_states(const char *arg)
{
	const char *p = arg, *e;
	unsigned bits = 0;
	int s;

	for (;;) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if ((s = mq_state_parse(p, (size_t)(e - p))) < 0)
			usage_error(&ls_command, "invalid --state '%s': ready, "
			    "scheduled, waiting, leased, stale, done, dead, "
			    "invalid or archived, "
			    "separated by commas", shown(arg));
		bits |= 1u << s;
		if (*e == '\0')
			return bits;
		p = e + 1;
	}
}

/* --after's id: a job id, or 0 (from the start). */
static uint64_t
parse_after(const char *arg)
{
	uint64_t id;

	if (strcmp(arg, "0") != 0 && parse_id(arg, &id) != 0)
		usage_error(&ls_command, "invalid --after '%s': a job id",
		    shown(arg));
	return strcmp(arg, "0") == 0 ? 0 : id;
}

static void
option(void *ctx, int id, const char *arg)
{
	struct ls_args *a = ctx;

	switch (id) {
	case OPT_QUEUE:
		a->queue_given = 1;
		break;
	case OPT_STATE:
		a->f.states = parse_states(arg);
		break;
	case OPT_KEY:
		if (!mq_valid_key(arg))
			usage_error(&ls_command, "invalid --key '%s': 1 to %d "
			    "bytes, no control characters", shown(arg),
			    MQ_KEY_MAX);
		a->f.key = arg;
		break;
	case OPT_RECURRING:
		a->f.recurring = 1;
		break;
	case OPT_SCHEDULE:
		if (!mq_valid_queue(arg))
			usage_error(&ls_command, "invalid schedule name '%s' in "
			    "--schedule: use 1 to %d of A-Z a-z 0-9 _ . -",
			    shown(arg), MQ_QUEUE_MAX);
		a->f.schedule = arg;
		break;
	case OPT_ERROR:
		a->f.error = arg;
		a->f.error_len = strlen(arg);
		break;
	case OPT_SINCE:
		a->f.since_us = duration_arg(&ls_command, "--since", arg);
		break;
	case OPT_BEFORE:
		a->f.before_us = duration_arg(&ls_command, "--before", arg);
		break;
	case OPT_LIMIT:
		a->f.limit = (unsigned)int_arg(&ls_command, "--limit", arg, 1,
		    MQ_LIST_MAX);
		break;
	case OPT_AFTER:
		a->f.after = parse_after(arg);
		break;
	case OPT_JSON:
	case OPT_IDS:
		a->form = id == OPT_JSON ? FORM_JSON : FORM_IDS;
		a->forms |= id == OPT_JSON ? 1 : 2;
		break;
	}
}

/* Each job as it comes; nonzero (stop) once stdout failed: its reader
 * has gone, and main ends quietly. */
static int
each(const struct mq_job_info *j, void *ctx)
{
	struct ls_args *a = ctx;

	a->last = j->id;
	if (a->form == FORM_IDS) {
		printf("%llu\n", (unsigned long long)j->id);
	} else if (a->form == FORM_JSON) {
		putchar('{');
		put_job_json(j);
		printf("}\n");
	} else if (ls_rows_add(&a->rows, j) != 0) {
		exit(no_memory(&ls_command));
	}
	return ferror(stdout) != 0;
}

int
cmd_ls(int argc, char **argv, struct mq_global *g)
{
	struct ls_args a;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	int more, n;

	memset(&a, 0, sizeof a);
	a.f.since_us = a.f.before_us = -1;
	a.f.limit = MQ_LIST_DEFAULT;
	n = parse_options(&ls_command, argc, argv, g, option, &a);
	settle(&ls_command, g, 0);
	if (a.forms == 3)
		usage_error(&ls_command, "--json and --ids exclude each other");
	no_operands(&ls_command, n, argv);

	c = open_queue_table(&ls_command, g);
	a.rows.width = ls_term_width();
	a.f.queue = a.queue_given ? g->queue : NULL;
	st = mq_job_list(c, &a.f, each, &a, &more);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&ls_command, &e);
	if (a.form == FORM_TABLE)
		ls_table_print(&a.rows);
	ls_rows_free(&a.rows);
	if (more && !ferror(stdout))
		say(&ls_command, "more: --after %llu",
		    (unsigned long long)a.last);
	return a.last ? 0 : EXIT_EMPTY;
}
