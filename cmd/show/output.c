/*
 * show/output.c: part of mq show (documented in mq-show(1)), not a
 * command: a job's fields, its payload and its history, as text for a
 * terminal (everything from the table escaped, the payload cut to a
 * preview) or as one JSON object (the payload whole, in base64 when it
 * is not UTF-8).
 */
#include <stdio.h>
#include <string.h>

#include "show.h"

#define TEXT(p, n) put_text(stdout, (const unsigned char *)(p), (n))
#define JSON_STR(p, n) put_json_string((const unsigned char *)(p), (n))

/* The first SHOW_PREVIEW bytes of the payload (whole characters),
 * escaped, on one line. */
static void
put_preview(const struct mq_job_info *j)
{
	char out[TEXT_NEXT_MAX];
	size_t i, o;

	printf("  ");
	for (i = 0; i < j->payload_len && i < SHOW_PREVIEW; ) {
		i += text_next(j->payload + i, j->payload_len - i, out, &o);
		fwrite(out, 1, o, stdout);
	}
	if (i < j->payload_len)
		printf("... (%zu more bytes)", j->payload_len - i);
	putchar('\n');
}

/* A held job's lease (until, holder, token); any other job's last
 * holder, which the row keeps after the lease ended */
static void
text_lease(const struct mq_job_info *j)
{
	if (!job_held(j)) {
		if (j->leased_by_len)
			put_text_line("last held by", j->leased_by,
			    j->leased_by_len);
		return;
	}
	if (j->has_lease)
		put_when_line("leased until", j->leased_until,
		    j->lease_left_us);
	if (j->leased_by_len)
		put_text_line("leased by", j->leased_by, j->leased_by_len);
	printf("lease token: %s\n", j->has_token ? "set" : "none");
}

/* "  17 done, 18 leased, 25 dead and 90 more": the jobs listed, then
 * how many more there are of total */
static void
text_deps(const struct mq_dep *e, size_t n, uint64_t total)
{
	size_t i;

	printf(" ");
	for (i = 0; i < n; i++)
		printf("%s %llu %s", i ? "," : "", (unsigned long long)e[i].id,
		    e[i].state);
	if (total > n)
		printf(" and %llu more", (unsigned long long)(total - n));
	putchar('\n');
}

/* "parents: 3 of 100 not done, if one dies: cancel" and "children: 2",
 * each with its first jobs and their states on the next line */
static void
text_family(const struct mq_job_info *j, const struct mq_job_deps *d)
{
	if (d->parents > 0) {
		printf("parents: %llu of %llu not done",
		    (unsigned long long)d->not_done,
		    (unsigned long long)d->parents);
		if (j->if_parent_dies[0])
			printf(", if one dies: %s", j->if_parent_dies);
		putchar('\n');
		text_deps(d->parent, d->nparent, d->parents);
	}
	if (d->children > 0) {
		printf("children: %llu\n", (unsigned long long)d->children);
		text_deps(d->child, d->nchild, d->children);
	}
}

void
show_text(const struct mq_job_info *j, const struct mq_job_deps *d,
    const char *path, int first)
{
	char t[DURATION_MAX];

	if (!first)
		putchar('\n');
	printf("job %llu\nqueue: ", (unsigned long long)j->id);
	TEXT(j->queue, j->queue_len);
	printf("\nstate: %s", mq_state_name(j->state));
	if (j->archived)
		printf(" (%s)", archived_state(j->stored_state));
	printf("\npaused: %s\npriority: %d\nattempts: %u/%u\n",
	    j->paused ? "yes" : "no", j->priority, j->attempts,
	    j->max_attempts);
	put_when_line("created", j->created_at, -j->age_us);
	if (j->available_epoch_us == MQ_WAITING_EPOCH_US)
		printf("due: when its parents are done\n");
	else
		put_when_line("due", j->available_at, j->due_in_us);
	if (j->every_us > 0)
		printf("every: %s (from %s)\n",
		    fmt_duration(t, sizeof t, j->every_us), j->every_anchor);
	text_lease(j);
	put_finished_line(j);
	if (j->error)
		put_text_line("error", j->error, j->error_len);
	if (j->has_key)
		put_text_line("key", j->key, j->key_len);
	if (j->has_dedup)
		put_text_line("dedup key", j->dedup_key, j->dedup_len);
	text_family(j, d);
	if (j->archived)
		printf("archived: %s\n", j->archived_at);
	printf("payload: %zu byte%s", j->payload_len, PLURAL(j->payload_len));
	if (path) {
		printf(", written to ");
		TEXT(path, strlen(path));
	}
	putchar('\n');
	if (j->payload_len)
		put_preview(j);
	printf("history:\n");
}

int
show_text_event(const struct mq_history_entry *h, void *ctx)
{
	++*(int *)ctx;
	printf("  %s %s, attempt %u, then %s", h->at, h->event, h->attempt,
	    h->state);
	if (h->worker_len) {
		printf(", worker ");
		TEXT(h->worker, h->worker_len);
	}
	if (h->error) {
		printf(", error: ");
		TEXT(h->error, h->error_len);
	}
	putchar('\n');
	return 0;
}

/* "first":[{"id":N,"state":"S","met":B},...] */
static void
json_deps(const struct mq_dep *e, size_t n)
{
	size_t i;

	printf("\"first\":[");
	for (i = 0; i < n; i++)
		printf("%s{\"id\":%llu,\"state\":\"%s\",\"met\":%s}",
		    i ? "," : "", (unsigned long long)e[i].id, e[i].state,
		    e[i].met ? "true" : "false");
	putchar(']');
}

/* ,"parents":{...},"children":{...}, each null if none */
static void
json_family(const struct mq_job_deps *d)
{
	printf(",\"parents\":");
	if (d->parents > 0) {
		printf("{\"total\":%llu,\"not_done\":%llu,",
		    (unsigned long long)d->parents,
		    (unsigned long long)d->not_done);
		json_deps(d->parent, d->nparent);
		putchar('}');
	} else {
		printf("null");
	}
	printf(",\"children\":");
	if (d->children > 0) {
		printf("{\"total\":%llu,", (unsigned long long)d->children);
		json_deps(d->child, d->nchild);
		putchar('}');
	} else {
		printf("null");
	}
}

void
show_json_start(const struct mq_job_info *j, const struct mq_job_deps *d)
{
	int utf8 = utf8_valid(j->payload, j->payload_len);

	putchar('{');
	put_job_json(j);
	json_family(d);
	printf(",\"stored_state\":\"%s\",\"has_lease_token\":%s",
	    j->stored_state, job_held(j) && j->has_token ? "true" : "false");
	if (j->every_anchor[0])
		printf(",\"every_anchor\":\"%s\"", j->every_anchor);
	else
		printf(",\"every_anchor\":null");
	printf(",\"dedup_key\":");
	if (j->has_dedup)
		JSON_STR(j->dedup_key, j->dedup_len);
	else
		printf("null");
	printf(",\"payload_size\":%zu,\"payload_encoding\":\"%s\","
	    "\"payload\":", j->payload_len, utf8 ? "utf8" : "base64");
	if (utf8)
		JSON_STR(j->payload, j->payload_len);
	else {
		putchar('"');
		put_base64(j->payload, j->payload_len);
		putchar('"');
	}
	printf(",\"history\":[");
}

int
show_json_event(const struct mq_history_entry *h, void *ctx)
{
	int *n = ctx;

	printf("%s{\"seq\":%llu,\"at\":\"%s\",\"at_from_now_us\":%lld,"
	    "\"event\":\"%s\",\"state\":\"%s\",\"attempt\":%u,\"worker\":",
	    (*n)++ ? "," : "", (unsigned long long)h->seq, h->at,
	    (long long)-h->ago_us, h->event, h->state, h->attempt);
	if (h->worker_len)
		JSON_STR(h->worker, h->worker_len);
	else
		printf("null");
	printf(",\"error\":");
	if (h->error)
		JSON_STR(h->error, h->error_len);
	else
		printf("null");
	putchar('}');
	return 0;
}
