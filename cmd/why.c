/*
 * why.c: mq why: why a job is not running now, in one sentence, then the
 * facts behind it; the answer is also the exit status, for scripts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output/output.h"
#include "schedule.h"

enum { OPT_JSON = OPT_CMD };

static const struct opt opts[] = {
	{ OPT_JSON, "json", 0, NULL, "one JSON object", COMPLETE_NONE, NULL,
	    NULL, 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command why_command = {
	"why", "why a job is not running now", opts, { "ID", NULL },
	CMD_READS_ONLY, cmd_why, NULL
};

/* The answers, and their exit statuses (mq-why(1)). */
enum answer {
	WHY_READY = 0, WHY_MISSING = 1, WHY_PAUSED = 10, WHY_SCHEDULED,
	WHY_LEASED, WHY_STALE, WHY_DEAD, WHY_DONE, WHY_ARCHIVED, WHY_HELD,
	WHY_WAITING, WHY_INVALID
};

/* Most jobs counted ahead of a ready one: the count reads that many
 * index entries at most. */
#define AHEAD_MAX 10000

static void
option(void *ctx, int id, const char *arg)
{
	if (id == OPT_JSON)
		*(int *)ctx = 1;
}

static enum answer
answer(const struct mq_job_info *j)
{
	switch (j->state) {
	case MQ_ST_ARCHIVED:	return WHY_ARCHIVED;
	case MQ_ST_DONE:	return WHY_DONE;
	case MQ_ST_DEAD:	return WHY_DEAD;
	case MQ_ST_INVALID:	return WHY_INVALID;
	case MQ_ST_STALE:	return WHY_STALE;
	case MQ_ST_LEASED:	return WHY_LEASED;
	case MQ_ST_WAITING:	return WHY_WAITING;
	default:		break;
	}
	if (j->paused)
		return WHY_PAUSED;
	return j->state == MQ_ST_SCHEDULED ? WHY_SCHEDULED : WHY_READY;
}

#define TEXT(p, n) put_text(stdout, (const unsigned char *)(p), (n))

static void
put_holder(const struct mq_job_info *j)
{
	if (j->leased_by_len)
		TEXT(j->leased_by, j->leased_by_len);
	else
		printf("an unknown worker");
}

/* "1 of 3 slots" */
static void
put_slots(const struct mq_slots *s)
{
	printf("%llu of %lu slot%s", (unsigned long long)s->held,
	    (unsigned long)s->limit, PLURAL(s->limit));
}

/* ", and 3 more" after the holders listed */
static void
put_more(const struct mq_slots *s)
{
	if (s->held > s->n)
		printf(" and %llu more", (unsigned long long)(s->held - s->n));
}

/* "rate 10/1s reached (10 claims in the window), next slot in 40ms" */
static void
put_rate(const struct mq_rate_window *w)
{
	char d[DURATION_MAX], n[DURATION_MAX];

	printf("rate %lu/%s reached (%llu claim%s in the window), next slot "
	    "in %s", (unsigned long)w->rate, fmt_duration(d, sizeof d,
	    (int64_t)w->window_us), (unsigned long long)w->used,
	    PLURAL(w->used), fmt_duration(n, sizeof n,
	    w->next_us < 0 ? 0 : w->next_us));
}

/* What holds a ready job back: "queue 'q' has 3 of 3 slots (jobs 4, 5,
 * 9)", "key 'k' has 1 of 1 slot, held by job 17 (worker host:pid,
 * lease ends in 12s)", or both. */
static void
put_held(const struct mq_job_info *j, const struct mq_job_hold *h)
{
	char d[DURATION_MAX];
	size_t i;

	if (h->by_queue) {
		printf("queue '");
		TEXT(j->queue, j->queue_len);
		printf("' has ");
		put_slots(&h->queue);
		printf(" (job%s", PLURAL(h->queue.held));
		for (i = 0; i < h->queue.n; i++)
			printf("%s %llu", i ? "," : "",
			    (unsigned long long)h->queue.holder[i].id);
		put_more(&h->queue);
		putchar(')');
	}
	if (h->by_key) {
		printf("%skey '", h->by_queue ? "; " : "");
		TEXT(j->key, j->key_len);
		printf("' has ");
		put_slots(&h->key);
		printf(", held by job%s", PLURAL(h->key.held));
		for (i = 0; i < h->key.n; i++) {
			const struct mq_slot_holder *o = &h->key.holder[i];
			printf("%s %llu (", i ? "," : "",
			    (unsigned long long)o->id);
			if (o->leased_by_len) {
				printf("worker ");
				TEXT(o->leased_by, o->leased_by_len);
			} else {
				printf("an unknown worker");
			}
			printf(", lease ends in %s)", fmt_duration(d, sizeof d,
			    o->lease_left_us < 0 ? 0 : o->lease_left_us));
		}
		put_more(&h->key);
	}
	if (h->by_queue_rate) {
		printf("%squeue '", h->by_queue || h->by_key ? "; " : "");
		TEXT(j->queue, j->queue_len);
		printf("' ");
		put_rate(&h->queue_rate);
	}
	if (h->by_key_rate) {
		printf("%skey '", h->by_queue || h->by_key ||
		    h->by_queue_rate ? "; " : "");
		TEXT(j->key, j->key_len);
		printf("' ");
		put_rate(&h->key_rate);
	}
}

/* "rate: 3 of 10 claims in 1s" */
static void
put_rate_line(const char *label, const struct mq_rate_window *w)
{
	char d[DURATION_MAX];

	if (!w->rate)
		return;
	printf("%s: %llu of %lu claim%s in %s\n", label,
	    (unsigned long long)w->used, (unsigned long)w->rate,
	    PLURAL(w->rate), fmt_duration(d, sizeof d,
	    (int64_t)w->window_us));
}

/* "3 of 100 parents: 17, 18, 25": the parents not done, the first of
 * them by id, then "and N more" */
static void
put_waiting(const struct mq_job_deps *d)
{
	size_t i;

	/* a row another program wrote due at the end of time */
	if (d->parents == 0) {
		printf("the end of time, without parents: nothing will make it "
		    "due (mq cancel it, or give it a due time)");
		return;
	}
	printf("%llu of %llu parent%s", (unsigned long long)d->not_done,
	    (unsigned long long)d->parents, PLURAL(d->parents));
	for (i = 0; i < d->nwaiting; i++)
		printf("%s%llu", i ? ", " : ": ",
		    (unsigned long long)d->waiting[i]);
	if (d->not_done > d->nwaiting)
		printf(" and %llu more",
		    (unsigned long long)(d->not_done - d->nwaiting));
}

/* The first line: the answer as a sentence. */
static void
sentence(const struct mq_job_info *j, enum answer a, uint64_t ahead,
    const struct mq_job_hold *h, const struct mq_job_deps *d,
    const struct mq_run_of *r, const struct mq_tz *tz)
{
	int used_up = j->attempts >= j->max_attempts;

	printf("job %llu ", (unsigned long long)j->id);
	switch (a) {
	case WHY_READY:
		printf("is ready and due: it is waiting for a consumer");
		if (ahead >= AHEAD_MAX)
			printf(" (%u or more jobs ahead of it)", AHEAD_MAX);
		else
			printf(" (%llu job%s ahead of it)",
			    (unsigned long long)ahead, PLURAL(ahead));
		break;
	case WHY_HELD:
		printf("is ready but held back: ");
		put_held(j, h);
		break;
	case WHY_WAITING:
		printf("is waiting for ");
		put_waiting(d);
		break;
	case WHY_PAUSED:
		printf("waits: its queue '");
		TEXT(j->queue, j->queue_len);
		printf("' is paused (mq resume)");
		break;
	case WHY_SCHEDULED:
		printf("is scheduled: it is due at ");
		put_when(j->available_at, j->due_in_us);
		break;
	case WHY_LEASED:
		printf("is running: it is leased by ");
		put_holder(j);
		printf(" until ");
		put_when(j->leased_until, j->lease_left_us);
		break;
	case WHY_STALE:
		printf("has a stale lease: ");
		put_holder(j);
		printf(" held it until ");
		put_when(j->leased_until, j->lease_left_us);
		printf("; the worker is gone: mq requeue-stale will %s it",
		    used_up ? "bury (attempts used up)" : "take");
		break;
	case WHY_DEAD:
		printf("is dead since ");
		put_finished(j);
		printf(used_up ? ": its attempts are used up" : "");
		if (j->error) {
			printf(", with error: ");
			TEXT(j->error, j->error_len);
		}
		break;
	case WHY_INVALID:
		printf("is not run: its state is none of mq's (''), written "
		    "by another program; mq requeue-stale buries it (dead)");
		break;
	case WHY_DONE:
		printf("is done (finished at %s)", j->has_finished &&
		    *j->finished_at ? j->finished_at : "an unknown time");
		break;
	case WHY_ARCHIVED:
		printf("is archived (%s at %s)",
		    archived_state(j->stored_state),
		    j->has_finished && *j->finished_at ? j->finished_at :
		    "an unknown time");
		break;
	case WHY_MISSING:
		break;
	}
	if (j->every_us > 0 && a != WHY_DEAD && a != WHY_INVALID) {
		printf("; it is recurring, next due at ");
		put_when(j->available_at, j->due_in_us);
	}
	if (r) {
		printf("; it is the run of schedule ");
		TEXT(r->schedule, r->schedule_len);
		printf(" at ");
		put_instant(instant_s(r->run.instant_us), tz);
		if (r->run.manual)
			printf(", by hand");
	}
	putchar('\n');
}

/* A run's schedule: "schedule:" and "next run:" lines (mq-why(1)). */
static void
schedule_facts(const struct mq_run_of *r, const struct mq_tz *tz)
{
	int64_t next = instant_s(r->next_at_us + 999999);

	printf("schedule: ");
	TEXT(r->schedule, r->schedule_len);
	printf("\nnext run: ");
	if (!r->has_schedule) {
		printf("none (the schedule was removed)\n");
		return;
	}
	if (next >= MQ_SCHEDULE_NEVER)
		printf("never");
	else
		put_instant(next, tz);
	printf(", by cron ");
	TEXT(r->s.expr, r->lens[0]);
	printf(" in ");
	TEXT(r->s.zone, r->lens[1]);
	putchar('\n');
}

/* "concurrency: 3 of 3 slots held" */
static void
put_slots_line(const char *label, const struct mq_slots *s)
{
	if (!s->limit)
		return;
	printf("%s: ", label);
	put_slots(s);
	printf(" held\n");
}

/* The facts, "key: value" lines. */
static void
facts(const struct mq_job_info *j, const struct mq_job_hold *h,
    const struct mq_job_deps *d)
{
	char t[DURATION_MAX];

	printf("queue: ");
	TEXT(j->queue, j->queue_len);
	printf("\nstate: %s\npaused: %s\npriority: %d\nattempts: %u/%u\n",
	    mq_state_name(j->state), j->paused ? "yes" : "no", j->priority,
	    j->attempts, j->max_attempts);
	put_when_line("created", j->created_at, -j->age_us);
	if (j->available_epoch_us == MQ_WAITING_EPOCH_US)
		printf("due: when its parents are done\n");
	else
		put_when_line("due", j->available_at, j->due_in_us);
	if (j->every_us > 0)
		printf("every: %s\n", fmt_duration(t, sizeof t, j->every_us));
	if (d->parents > 0)
		printf("parents: %llu of %llu not done\n",
		    (unsigned long long)d->not_done,
		    (unsigned long long)d->parents);
	if (j->if_parent_dies[0])
		printf("if a parent dies: %s\n", j->if_parent_dies);
	if (j->has_key)
		put_text_line("key", j->key, j->key_len);
	put_slots_line("concurrency", &h->queue);
	put_slots_line("per key", &h->key);
	put_rate_line("rate", &h->queue_rate);
	put_rate_line("key rate", &h->key_rate);
	if (job_held(j) && j->has_lease) {
		put_when_line("leased until", j->leased_until,
		    j->lease_left_us);
		printf("leased by: ");
		put_holder(j);
		putchar('\n');
	} else if (!job_held(j) && j->leased_by_len) {
		put_text_line("last held by", j->leased_by, j->leased_by_len);
	}
	put_finished_line(j);
	if (j->error)
		put_text_line("error", j->error, j->error_len);
	if (j->archived)
		printf("archived: %s\n", j->archived_at);
}

/* "name":{"rate":N,"window_us":N,"used":N,"full":B,"next_slot_us":N},
 * or null */
static void
json_rate(const char *name, const struct mq_rate_window *w, int full)
{
	printf("\"%s\":", name);
	if (!w->rate) {
		printf("null");
		return;
	}
	printf("{\"rate\":%lu,\"window_us\":%llu,\"used\":%llu,"
	    "\"full\":%s,\"next_slot_us\":%lld}", (unsigned long)w->rate,
	    (unsigned long long)w->window_us, (unsigned long long)w->used,
	    full ? "true" : "false", (long long)(w->next_us < 0 ? 0 :
	    w->next_us));
}

/* "name":{"limit":N,"held":N,"full":B,"holders":[...]}, or null */
static void
json_slots(const char *name, const struct mq_slots *s, int full)
{
	const struct mq_slot_holder *o;
	size_t i;

	printf("\"%s\":", name);
	if (!s->limit) {
		printf("null");
		return;
	}
	printf("{\"limit\":%lu,\"held\":%llu,\"full\":%s,\"holders\":[",
	    (unsigned long)s->limit, (unsigned long long)s->held,
	    full ? "true" : "false");
	for (i = 0; i < s->n; i++) {
		o = &s->holder[i];
		printf("%s{\"id\":%llu,\"leased_by\":", i ? "," : "",
		    (unsigned long long)o->id);
		if (o->leased_by_len)
			put_json_string((const unsigned char *)o->leased_by,
			    o->leased_by_len);
		else
			printf("null");
		printf(",\"leased_until\":\"%s\","
		    "\"leased_until_from_now_us\":%lld}", o->leased_until,
		    (long long)o->lease_left_us);
	}
	printf("]}");
}

/* ,"parents":{"total":N,"not_done":N,"waiting_for":[ids],
 * "if_parent_dies":"P"}, or null for a job that has none */
static void
json_parents(const struct mq_job_info *j, const struct mq_job_deps *d)
{
	size_t i;

	printf(",\"parents\":");
	if (d->parents == 0) {
		printf("null");
		return;
	}
	printf("{\"total\":%llu,\"not_done\":%llu,\"waiting_for\":[",
	    (unsigned long long)d->parents, (unsigned long long)d->not_done);
	for (i = 0; i < d->nwaiting; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)d->waiting[i]);
	printf("],\"if_parent_dies\":");
	if (j->if_parent_dies[0])
		printf("\"%s\"}", j->if_parent_dies);
	else
		printf("null}");
}

static void
print_json(const struct mq_job_info *j, enum answer a, uint64_t ahead,
    const struct mq_job_hold *h, int counted, const struct mq_job_deps *d,
    const struct mq_run_of *r, const struct mq_tz *tz)
{
	static const char *const names[] = { "ready", "missing", "paused",
	    "scheduled", "leased", "stale", "dead", "done", "archived",
	    "held", "waiting", "invalid" };

	printf("{\"answer\":\"%s\",\"status\":%d,",
	    names[a == WHY_READY ? 0 : a == WHY_MISSING ? 1 : a - 8], a);
	put_job_json(j);
	if (a == WHY_READY)
		printf(",\"ahead\":%llu", (unsigned long long)ahead);
	else
		printf(",\"ahead\":null");
	printf(",\"slots\":");
	if (counted && (h->queue.limit || h->key.limit)) {
		putchar('{');
		json_slots("concurrency", &h->queue, h->by_queue);
		putchar(',');
		json_slots("per_key", &h->key, h->by_key);
		putchar('}');
	} else {
		printf("null");
	}
	printf(",\"rates\":");
	if (counted && (h->queue_rate.rate || h->key_rate.rate)) {
		putchar('{');
		json_rate("queue", &h->queue_rate, h->by_queue_rate);
		putchar(',');
		json_rate("key", &h->key_rate, h->by_key_rate);
		putchar('}');
	} else {
		printf("null");
	}
	json_parents(j, d);
	put_run_json(r, tz, 0);
	printf("}\n");
}

int
cmd_why(int argc, char **argv, struct mq_global *g)
{
	struct mq_job_info j;
	struct mq_job_hold h;
	struct mq_job_deps d;
	struct mq_run_of run;
	struct mq_tz *tz = NULL;
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	enum answer a = WHY_MISSING;
	uint64_t id, ahead = 0;
	int json = 0, n, counted = 0, is_run = 0;

	n = parse_options(&why_command, argc, argv, g, option, &json);
	settle(&why_command, g, 0);
	if (n != 1)
		usage_error(&why_command, "one job ID expected");
	if (parse_id(argv[1], &id) != 0)
		usage_error(&why_command, "invalid job id '%s': a positive number, "
		    "as push prints it", shown(argv[1]));

	memset(&h, 0, sizeof h);
	memset(&d, 0, sizeof d);
	c = open_queue_table(&why_command, g);
	st = mq_job_get(c, id, &j);
	/* a dependent, or a job that still waits for its parents */
	if (st == MQ_OK && j.may_have_deps)
		st = mq_job_deps(c, id, &d);
	/* a ready job: held back by a limit of its queue, or its place */
	if (st == MQ_OK && (a = answer(&j)) == WHY_READY) {
		st = mq_job_held(c, &j, &h);
		counted = st == MQ_OK;
		if (h.by_queue || h.by_key || h.by_queue_rate ||
		    h.by_key_rate)
			a = WHY_HELD;
	}
	if (st == MQ_OK && a == WHY_READY)
		st = mq_job_ahead(c, &j, AHEAD_MAX, &ahead);
	/* a calendar schedule's run: its schedule's next run */
	if (st == MQ_OK) {
		st = mq_run_of_job(c, id, 0, &run);
		is_run = st == MQ_OK;
		if (st == MQ_EMPTY)
			st = MQ_OK;
	}
	memset(&e, 0, sizeof e);
	/* a zone that does not load, or holds a NUL (a row another
	 * program wrote: not the zone its start names): UTC */
	if (is_run && run.has_schedule &&
	    (strlen(run.s.zone) != run.lens[1] ||
	    mq_tz_load(run.s.zone, NULL, &tz, &e) != MQ_OK))
		tz = NULL;
	e = *mq_conn_error(c);
	mq_close(c);
	if (st == MQ_EMPTY) {
		if (json)
			printf("{\"id\":%llu,\"answer\":\"missing\","
			    "\"status\":1}\n", (unsigned long long)id);
		say(&why_command, "no job %llu in table %s nor its "
		    "archive (purged, or never pushed)",
		    (unsigned long long)id, g->table);
		return WHY_MISSING;
	}
	if (st != MQ_OK) {
		mq_job_info_free(&j);
		die(&why_command, &e);
	}
	if (json)
		print_json(&j, a, ahead, &h, counted, &d, is_run ? &run : NULL,
		    tz);
	else {
		sentence(&j, a, ahead, &h, &d, is_run ? &run : NULL, tz);
		facts(&j, &h, &d);
		if (is_run)
			schedule_facts(&run, tz);
	}
	mq_tz_free(tz);
	if (is_run)
		mq_run_of_free(&run);
	mq_job_info_free(&j);
	return (int)a;
}
