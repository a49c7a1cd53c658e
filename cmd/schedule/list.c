/*
 * list.c: mq schedule ls's output: each schedule, its next instants (in
 * its zone and in UTC, computed here from its next_at as firing computes
 * them), and its last run. Everything from the table goes out through
 * output/'s encoders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"
#include "schedule/sched.h"

#define TEXT(s) put_text(stdout, (const unsigned char *)(s), strlen(s))
#define JSTR(s) put_json_string((const unsigned char *)(s), strlen(s))
/* A field of the row with its length: another program may have written
 * a NUL byte into it (shown as \x00, held by JSON), not its end. */
#define FIELD(r, f) (const unsigned char *)(r)->s.f, (r)->f##_len

/* The first instant at or after a next_at in µs. */
static int64_t
first_second(int64_t us)
{
	return us / 1000000 + (us % 1000000 > 0);
}

static void
text_row(const struct mq_schedule_row *r, const struct mq_tz *tz,
    const int64_t *next, size_t got, const char *why)
{
	char utc[INSTANT_MAX], local[INSTANT_MAX];
	size_t i;

	put_text(stdout, FIELD(r, name));
	printf(": cron ");
	put_text(stdout, FIELD(r, expr));
	printf(", tz ");
	put_text(stdout, FIELD(r, zone));
	printf(", queue ");
	put_text(stdout, FIELD(r, queue));
	printf(", missed %s", mq_missed_name(r->s.missed));
	if (r->s.missed == MQ_MISSED_ALL)
		printf(" (at most %u)", r->s.missed_max);
	putchar('\n');
	if (why) {
		printf("  unusable: ");
		TEXT(why);
		putchar('\n');
	}
	for (i = 0; i < got; i++) {
		fmt_instant(next[i], tz, utc, local);
		printf("  next %s (%s)\n", local, utc);
	}
	if (!r->has_last) {
		printf("  last none\n");
		return;
	}
	fmt_instant(r->last_us / 1000000, tz, utc, local);
	printf("  last %s (%s)%s: ", local, utc, r->last_manual ?
	    " by hand" : "");
	if (r->last_job == 0)
		printf("skipped (missed)\n");
	else {
		printf("job %llu, ", (unsigned long long)r->last_job);
		TEXT(r->last_state[0] ? r->last_state : "gone");
		putchar('\n');
	}
}

static void
json_time(const char *name, int64_t t, const struct mq_tz *tz)
{
	char utc[INSTANT_MAX], local[INSTANT_MAX];

	fmt_instant(t, tz, utc, local);
	printf("\"%s\":{\"utc\":", name);
	JSTR(utc);
	printf(",\"local\":");
	JSTR(tz ? local : utc);
	printf(",\"epoch\":%lld}", (long long)t);
}

static void
json_row(const struct mq_schedule_row *r, const struct mq_tz *tz,
    const int64_t *next, size_t got, const char *why)
{
	size_t i;

	printf("{\"name\":");
	put_json_string(FIELD(r, name));
	printf(",\"cron\":");
	put_json_string(FIELD(r, expr));
	printf(",\"tz\":");
	put_json_string(FIELD(r, zone));
	printf(",\"queue\":");
	put_json_string(FIELD(r, queue));
	putchar(',');
	put_json_payload(r->s.payload, r->s.payload_len);
	printf(",\"priority\":%d,\"max_attempts\":%u,\"key\":", r->s.priority,
	    r->s.max_attempts);
	if (r->s.has_key)
		put_json_string(FIELD(r, key));
	else
		printf("null");
	printf(",\"missed\":\"%s\",\"missed_max\":%u,\"next\":[",
	    mq_missed_name(r->s.missed), r->s.missed_max);
	for (i = 0; i < got; i++) {
		printf("%s{", i ? "," : "");
		json_time("at", next[i], tz);
		putchar('}');
	}
	printf("],\"unusable\":");
	if (why)
		JSTR(why);
	else
		printf("null");
	printf(",\"last\":");
	if (!r->has_last) {
		printf("null}\n");
		return;
	}
	putchar('{');
	json_time("at", r->last_us / 1000000, tz);
	printf(",\"manual\":%s,\"job\":", r->last_manual ? "true" : "false");
	if (r->last_job) {
		printf("%llu,\"state\":", (unsigned long long)r->last_job);
		JSTR(r->last_state[0] ? r->last_state : "gone");
	} else {
		printf("null,\"state\":null");
	}
	printf("}}\n");
}

struct sched_lister {
	unsigned count;
	int json;
	int64_t *next;		/* count instants */
};

struct sched_lister *
sched_lister_new(unsigned count, int json)
{
	struct sched_lister *l = malloc(sizeof *l);

	if (l == NULL || (l->next = malloc((count ? count : 1) *
	    sizeof *l->next)) == NULL)
		exit(no_memory(&schedule_command));
	l->count = count;
	l->json = json;
	return l;
}

void
sched_lister_free(struct sched_lister *l)
{
	free(l->next);
	free(l);
}

void
sched_list_row(void *lister, const struct mq_schedule_row *r)
{
	struct sched_lister *l = lister;
	unsigned count = l->count;
	int64_t *next = l->next;
	struct mq_error e;
	struct mq_tz *tz = NULL;
	size_t got = 0;
	const char *why = NULL;
	char unusable[MQ_UNUSABLE_MAX];

	memset(&e, 0, sizeof e);
	/* what firing sets aside (lib's one predicate), then what this
	 * host cannot fire: no next instant for either */
	if (mq_schedule_unusable(r, unusable))
		why = unusable;
	else if (mq_tz_load(r->s.zone, NULL, &tz, &e) != MQ_OK)
		why = e.msg;
	else if (count && first_second(r->next_at_us) < MQ_SCHEDULE_NEVER &&
	    mq_schedule_instants(&r->s, first_second(r->next_at_us), next,
	    count, &got, &e) == MQ_EINVAL)
		why = e.msg;
	if (l->json)
		json_row(r, tz, next, got, why);
	else
		text_row(r, tz, next, got, why);
	mq_tz_free(tz);
}
