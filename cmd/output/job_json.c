/*
 * job_json.c: part of mq why, mq ls and mq show (documented in their pages),
 * not a command: a job's fields as JSON members, the same in all three:
 * times as UTC ISO text with their distance from the server's now in raw
 * microseconds, text from the table JSON-escaped. leased_until and
 * leased_by are the holder's, null unless the job is held; last_held_by
 * is the worker of the last claim in any state (a dead job's too).
 * And, for mq show and mq why, the calendar schedule a job runs
 * (mq-show(1)).
 */
#include <stdio.h>
#include <string.h>

#include "output/output.h"
#include "schedule.h"

#define JSON_STR(p, n) put_json_string((const unsigned char *)(p), (n))

/* ,"key":"T","key_us":N, or nulls when the time is not set */
static void
json_time(const char *key, const char *iso, int has, int64_t us)
{
	if (has && *iso)
		printf(",\"%s\":\"%s\",\"%s_from_now_us\":%lld", key, iso, key,
		    (long long)us);
	else
		printf(",\"%s\":null,\"%s_from_now_us\":null", key, key);
}

int
job_held(const struct mq_job_info *j)
{
	return j->state == MQ_ST_LEASED || j->state == MQ_ST_STALE;
}

int
job_finished(const struct mq_job_info *j)
{
	return j->archived || j->state == MQ_ST_DONE || j->state == MQ_ST_DEAD;
}

const char *
archived_state(const char *stored)
{
	return *stored ? stored : "state ''";
}

void
put_finished(const struct mq_job_info *j)
{
	if (j->has_finished && *j->finished_at)
		put_when(j->finished_at, -j->finished_ago_us);
	else
		fputs("an unknown time", stdout);
}

void
put_finished_line(const struct mq_job_info *j)
{
	if (!j->has_finished && !job_finished(j))
		return;
	if (j->has_finished && *j->finished_at)
		put_when_line("finished", j->finished_at, -j->finished_ago_us);
	else
		printf("finished: unknown (the row has no finished_at)\n");
}

void
put_job_json(const struct mq_job_info *j)
{
	int held = job_held(j);

	printf("\"id\":%llu,\"queue\":", (unsigned long long)j->id);
	JSON_STR(j->queue, j->queue_len);
	printf(",\"state\":\"%s\",\"paused\":%s,\"priority\":%d,"
	    "\"attempts\":%u,\"max_attempts\":%u", mq_state_name(j->state),
	    j->paused ? "true" : "false", j->priority, j->attempts,
	    j->max_attempts);
	json_time("created_at", j->created_at, 1, -j->age_us);
	json_time("available_at", j->available_at, 1, j->due_in_us);
	json_time("leased_until", j->leased_until, held && j->has_lease,
	    j->lease_left_us);
	json_time("finished_at", j->finished_at, j->has_finished,
	    -j->finished_ago_us);
	printf(",\"leased_by\":");
	if (held && j->leased_by_len)
		JSON_STR(j->leased_by, j->leased_by_len);
	else
		printf("null");
	printf(",\"last_held_by\":");
	if (j->leased_by_len)
		JSON_STR(j->leased_by, j->leased_by_len);
	else
		printf("null");
	printf(",\"error\":");
	if (j->error)
		JSON_STR(j->error, j->error_len);
	else
		printf("null");
	if (j->every_us > 0)
		printf(",\"every_us\":%lld", (long long)j->every_us);
	else
		printf(",\"every_us\":null");
	if (j->archived)
		printf(",\"archived_at\":\"%s\"", j->archived_at);
	else
		printf(",\"archived_at\":null");
	printf(",\"key\":");
	if (j->has_key)
		JSON_STR(j->key, j->key_len);
	else
		printf("null");
	if (j->if_parent_dies[0])
		printf(",\"if_parent_dies\":\"%s\"", j->if_parent_dies);
	else
		printf(",\"if_parent_dies\":null");
}

/* "name":{"utc":"...","local":"...","epoch":N} */
static void
json_instant(const char *name, int64_t t, const struct mq_tz *tz)
{
	char utc[INSTANT_MAX], local[INSTANT_MAX];

	fmt_instant(t, tz, utc, local);
	printf("\"%s\":{\"utc\":\"%s\",\"local\":", name, utc);
	JSON_STR(local, strlen(local));
	printf(",\"epoch\":%lld}", (long long)t);
}

void
put_run_json(const struct mq_run_of *r, const struct mq_tz *tz, int runs)
{
	size_t i;

	printf(",\"schedule\":");
	if (r == NULL) {
		printf("null");
		return;
	}
	printf("{\"name\":");
	JSON_STR(r->schedule, r->schedule_len);
	putchar(',');
	json_instant("instant", instant_s(r->run.instant_us), tz);
	printf(",\"manual\":%s,\"exists\":%s,\"cron\":",
	    r->run.manual ? "true" : "false",
	    r->has_schedule ? "true" : "false");
	if (r->has_schedule) {
		JSON_STR(r->s.expr, r->lens[0]);
		printf(",\"tz\":");
		JSON_STR(r->s.zone, r->lens[1]);
	} else {
		printf("null,\"tz\":null");
	}
	putchar(',');
	if (r->has_schedule && instant_s(r->next_at_us + 999999) <
	    MQ_SCHEDULE_NEVER)
		json_instant("next", instant_s(r->next_at_us + 999999), tz);
	else
		printf("\"next\":null");
	if (!runs) {
		putchar('}');
		return;
	}
	printf(",\"runs\":[");
	for (i = 0; i < r->nlast; i++) {
		const struct mq_schedule_run *u = &r->last[i];

		printf("%s{", i ? "," : "");
		json_instant("at", instant_s(u->instant_us), tz);
		printf(",\"manual\":%s,\"job\":", u->manual ? "true" : "false");
		if (u->job)
			printf("%llu", (unsigned long long)u->job);
		else
			printf("null");
		printf(",\"state\":");
		JSON_STR(u->state, strlen(u->state));
		printf(",\"archived\":%s}", u->archived ? "true" : "false");
	}
	printf("]}");
}
