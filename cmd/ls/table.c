/*
 * ls/table.c: mq ls's table: each column as wide as its widest cell,
 * text from the table escaped (put_text) and measured as shown, and the
 * last error, the only long cell, last, cut to the terminal's width so
 * that each job stays one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ls.h"

int
ls_rows_add(struct ls_rows *rows, const struct mq_job_info *j)
{
	struct ls_row *r;
	char d[DURATION_MAX];

	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? 2 * rows->cap : 64;
		if ((r = realloc(rows->r, cap * sizeof *r)) == NULL)
			return -1;
		rows->r = r;
		rows->cap = cap;
	}
	r = &rows->r[rows->n];
	memset(r, 0, sizeof *r);
	/* an error is shown cut to the terminal's width: its first bytes
	 * are all it needs (4 a column at most, an escape; and a few for
	 * the character cut at the end), not 64 KiB a row (10,000 rows of
	 * long errors took 650 MB) */
	r->error_len = j->error_len;
	if (rows->width && r->error_len > 4 * rows->width + 16) {
		r->error_len = 4 * rows->width + 16;
		r->error_cut = 1;
	}
	if (j->error && (r->error = malloc(r->error_len + 1)) == NULL)
		return -1;
	rows->n++;
	snprintf(r->id, sizeof r->id, "%llu", (unsigned long long)j->id);
	snprintf(r->state, sizeof r->state, "%s", mq_state_name(j->state));
	snprintf(r->prio, sizeof r->prio, "%d", j->priority);
	snprintf(r->attempt, sizeof r->attempt, "%u/%u", j->attempts,
	    j->max_attempts);
	fmt_duration(r->age, sizeof r->age, j->age_us);
	if (j->state == MQ_ST_SCHEDULED)
		snprintf(r->when, sizeof r->when, "in %s",
		    fmt_duration(d, sizeof d, j->due_in_us));
	else if (j->state == MQ_ST_LEASED)
		snprintf(r->when, sizeof r->when, "%s left",
		    fmt_duration(d, sizeof d, j->lease_left_us));
	else if (j->state == MQ_ST_STALE)
		snprintf(r->when, sizeof r->when, "expired");
	else
		snprintf(r->when, sizeof r->when, "-");
	memcpy(r->queue, j->queue, j->queue_len);
	r->queue_len = j->queue_len;
	memcpy(r->by, j->leased_by, j->leased_by_len);
	r->by_len = j->leased_by_len;
	if (j->error)
		memcpy(r->error, j->error, r->error_len);
	else
		r->error_len = 0;
	return 0;
}

void
ls_rows_free(struct ls_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->n; i++)
		free(rows->r[i].error);
	free(rows->r);
	rows->r = NULL;
	rows->n = rows->cap = 0;
}

size_t
ls_term_width(void)
{
	struct winsize ws;
	const char *s = getenv("COLUMNS");
	char *end;
	long n;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (s == NULL || *s == '\0')
		return 0;
	n = strtol(s, &end, 10);
	return *end || n <= 0 || n > 100000 ? 0 : (size_t)n;
}

/* p[0..n) as put_text shows it, in at most max columns (0: all): cut
 * with "..." when longer (or when p is the start of a longer text). */
static void
put_cut(const unsigned char *p, size_t n, int longer, size_t max)
{
	char out[TEXT_NEXT_MAX];
	size_t used = 0, k, len, w;

	if (max == 0 || (!longer && text_width(p, n) <= max)) {
		put_text(stdout, p, n);
		return;
	}
	while (n > 0) {
		k = text_next(p, n, out, &len);
		w = text_width(p, k);
		if (used + w + 3 > max)
			break;
		fwrite(out, 1, len, stdout);
		used += w;
		p += k;
		n -= k;
	}
	if (max >= used + 3)
		fputs("...", stdout);
}

enum { C_ID, C_QUEUE, C_STATE, C_PRIO, C_ATTEMPT, C_AGE, C_WHEN, C_BY,
	C_ERROR, NCOL };

static const char *const head[NCOL] = { "ID", "QUEUE", "STATE", "PRIO",
    "ATTEMPT", "AGE", "DUE/LEASE", "WORKER", "ERROR" };

/* Columns of people's text: left-aligned; the others right-aligned. */
static int
left(int k)
{
	return k == C_QUEUE || k == C_STATE || k == C_BY || k == C_ERROR;
}

/* Cell k of row r: its text (mq's) or bytes (the table's), its width. */
static size_t
cell(const struct ls_row *r, int k, const char **s,
    const unsigned char **p, size_t *n)
{
	const char *const mine[NCOL] = { r->id, NULL, r->state, r->prio,
	    r->attempt, r->age, r->when, NULL, NULL };

	*s = mine[k];
	*p = k == C_QUEUE ? r->queue : k == C_BY ? r->by : r->error;
	*n = k == C_QUEUE ? r->queue_len : k == C_BY ? r->by_len :
	    r->error_len;
	if (*s)
		return strlen(*s);
	if (k == C_BY && *n == 0) {
		*s = "-";
		return 1;
	}
	return text_width(*p, *n);
}

void
ls_table_print(const struct ls_rows *rows)
{
	size_t width[NCOL], i, w, n, used = 0, max = rows->width;
	const unsigned char *p;
	const char *s;
	int k;

	for (k = 0; k < NCOL; k++)
		width[k] = strlen(head[k]);
	for (i = 0; i < rows->n; i++)
		for (k = 0; k < C_ERROR; k++)
			if ((w = cell(&rows->r[i], k, &s, &p, &n)) > width[k])
				width[k] = w;
	for (k = 0; k < C_ERROR; k++) {
		printf(left(k) ? "%-*s " : "%*s ", (int)width[k], head[k]);
		used += width[k] + 1;
	}
	printf("%s\n", head[C_ERROR]);
	for (i = 0; i < rows->n; i++) {
		for (k = 0; k < C_ERROR; k++) {
			w = cell(&rows->r[i], k, &s, &p, &n);
			if (!left(k))
				printf("%*s", (int)(width[k] - w), "");
			if (s)
				fputs(s, stdout);
			else
				put_text(stdout, p, n);
			if (left(k))
				printf("%*s", (int)(width[k] - w), "");
			putchar(' ');
		}
		if (rows->r[i].error)
			put_cut(rows->r[i].error, rows->r[i].error_len,
			    rows->r[i].error_cut, max == 0 ? 0 :
			    max > used ? max - used : 1);
		putchar('\n');
	}
}
