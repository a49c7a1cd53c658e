/*
 * cron.c: mq push --cron: one calendar schedule (mq-schedule(1)) made
 * or changed from the command line, as a schedule file of one block
 * would be applied (the others untouched). Its name, unless given, is
 * derived from what it pushes, so that pushing the same schedule again
 * changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push.h"
#include "schedule.h"

/* FNV-1a, 64 bits: a name, not a secret */
static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* "cron-" and 16 hex digits of the queue, expression, zone, key and
 * payload */
static void
derived_name(struct mq_schedule *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = fnv(h, s->queue, strlen(s->queue) + 1);
	h = fnv(h, s->expr, strlen(s->expr) + 1);
	h = fnv(h, s->zone, strlen(s->zone) + 1);
	h = fnv(h, s->has_key ? s->key : "", s->has_key ? strlen(s->key) + 1 : 0);
	h = fnv(h, s->payload, s->payload_len);
	snprintf(s->name, sizeof s->name, "cron-%016llx", (unsigned long long)h);
}

/* A setting of the schedule from an option: exits 64 if it is not valid. */
void
cron_setting(struct mq_schedule *s, const char *opt, const char *name,
    const char *value)
{
	struct mq_error e;

	size_t n = strlen(name);

	/* its message names the file's setting: the option names it */
	if (mq_schedule_set(s, name, value, &e) != MQ_OK)
		usage_error(&push_command, "invalid %s: %s", opt,
		    shown(strncmp(e.msg, name, n) == 0 && e.msg[n] == ':' &&
		    e.msg[n + 1] == ' ' ? e.msg + n + 2 : e.msg));
}

int
push_cron(struct mq_global *g, struct mq_schedule *s, const char *name,
    unsigned char *payload, size_t len, int quiet)
{
	struct mq_schedset *set;
	struct mq_apply_results *applied = NULL;
	struct mq_apply_result res;
	struct mq_error e;
	struct mq_conn *c;
	char utc[INSTANT_MAX], local[INSTANT_MAX];
	static const char *const verbs[] = { "added", "changed", "unchanged",
	    "removed" };

	cron_setting(s, "--queue", "queue", g->queue);
	s->payload = payload;
	s->payload_len = len;
	if (name)
		snprintf(s->name, sizeof s->name, "%s", name);
	else
		derived_name(s);
	/* (its values are checked: only memory can fail) */
	if ((set = mq_schedset_new()) == NULL ||
	    mq_schedset_add(set, s) != MQ_OK)
		exit(no_memory(&push_command));
	c = open_queue_table(&push_command, g);
	if (mq_schedule_apply(c, set, 0, 0, &applied) != MQ_OK) {
		e = *mq_conn_error(c);
		mq_close(c);
		die(&push_command, &e);
	}
	mq_close(c);
	printf("%s\n", s->name);
	if (!quiet && mq_apply_results_count(applied) == 1) {
		mq_apply_results_get(applied, 0, &res);
		fprintf(stderr, "mq push: %s schedule %s", verbs[res.what],
		    s->name);
		if (res.next_at >= MQ_SCHEDULE_NEVER) {
			fprintf(stderr, " (never fires again)\n");
		} else {
			fmt_instant(res.next_at, NULL, utc, local);
			fprintf(stderr, " (next %s)\n", utc);
		}
	}
	mq_apply_results_free(applied);
	mq_schedset_free(set);
	return flush_stdout() == 0 ? 0 : EX_IOERR;
}
