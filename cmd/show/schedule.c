/*
 * show/schedule.c: part of mq show (documented in mq-show(1)), not a
 * command: for a job that is a calendar schedule's run, the schedule
 * and instant it runs and that schedule's last runs with their
 * outcomes, as text or as the JSON member "schedule". Names and
 * expressions come from the table: escaped like the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "show.h"
#include "schedule.h"

#define TEXT(p, n) put_text(stdout, (const unsigned char *)(p), (n))

static void
text_run(const struct mq_run_of *r, const struct mq_tz *tz)
{
	const struct mq_schedule_run *u;
	int64_t next = instant_s(r->next_at_us + 999999);
	size_t i;

	printf("schedule: ");
	TEXT(r->schedule, r->schedule_len);
	printf("\ninstant: ");
	put_instant(instant_s(r->run.instant_us), tz);
	printf("%s\n", r->run.manual ? ", by hand (mq schedule run)" : "");
	if (!r->has_schedule) {
		printf("cron: none (the schedule was removed)\n");
	} else {
		printf("cron: ");
		TEXT(r->s.expr, r->lens[0]);
		printf(", tz ");
		TEXT(r->s.zone, r->lens[1]);
		printf("\nnext run: ");
		if (next >= MQ_SCHEDULE_NEVER)
			printf("never");
		else
			put_instant(next, tz);
		putchar('\n');
	}
	printf("last runs:\n");
	for (i = 0; i < r->nlast; i++) {
		u = &r->last[i];
		printf("  ");
		put_instant(instant_s(u->instant_us), tz);
		printf("%s: ", u->manual ? " by hand" : "");
		if (u->job == 0) {
			printf("skipped (missed)\n");
			continue;
		}
		printf("job %llu, ", (unsigned long long)u->job);
		TEXT(u->state, strlen(u->state));
		printf("%s\n", u->archived ? " (archived)" : "");
	}
}

int
show_run(struct mq_conn *c, uint64_t id, int json)
{
	struct mq_run_of r;
	struct mq_error e;
	struct mq_tz *tz = NULL;
	enum mq_status st;

	st = mq_run_of_job(c, id, SHOW_RUNS, &r);
	if (st == MQ_EMPTY) {
		if (json)
			put_run_json(NULL, NULL, 1);
		return 0;
	}
	if (st != MQ_OK)
		return -1;
	memset(&e, 0, sizeof e);
	/* a zone that does not load, or holds a NUL (a row another
	 * program wrote: not the zone its start names): UTC */
	if (r.has_schedule && (strlen(r.s.zone) != r.lens[1] ||
	    mq_tz_load(r.s.zone, NULL, &tz, &e) != MQ_OK))
		tz = NULL;
	if (json)
		put_run_json(&r, tz, 1);
	else
		text_run(&r, tz);
	mq_tz_free(tz);
	mq_run_of_free(&r);
	return 0;
}
