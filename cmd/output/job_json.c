/*
 * job_json.c: part of mq why, mq ls and mq show (documented in their pages),
 * not a command: a job's fields as JSON members, the same in all three:
 * times as UTC ISO text with their distance from the server's now in raw
 * microseconds, text from the table JSON-escaped. leased_until and
 * leased_by are the holder's, null unless the job is held; last_held_by
 * is the worker of the last claim in any state (a dead job's too).
 */
#include <stdio.h>

#include "output/output.h"

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
