/*
 * top/view.c: part of mq top (mq-top(1)): the frame: a header line with
 * the totals, and one line per queue, cut to the terminal.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

/* A rate as a cell: "-" if unknown. */
static void
fmt_rate(char *buf, size_t size, double r)
{
	if (r < 0)
		snprintf(buf, size, "-");
	else if (r < 10)
		snprintf(buf, size, "%.2f", r);
	else if (r < 1000)
		snprintf(buf, size, "%.1f", r);
	else
		snprintf(buf, size, "%.0f", r);
}

/* The sparkline of q's last max out rates, scaled to their largest; an
 * unknown rate is a space. */
static void
fmt_spark(char *buf, size_t size, const struct top_queue *q, int utf8,
    size_t max)
{
	static const char *const blocks[] = { "\u2581", "\u2582", "\u2583",
	    "\u2584", "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "_.:-=+*#";
	unsigned i, from = q->spark_n > max ? q->spark_n - (unsigned)max : 0;
	double top = 0;
	size_t used = 0;
	int lv;

	for (i = from; i < q->spark_n; i++)
		if (q->spark[i] > top)
			top = q->spark[i];
	buf[0] = '\0';
	for (i = from; i < q->spark_n && used + 4 < size; i++) {
		lv = top > 0 ? (int)(q->spark[i] / top * 7 + 0.5) : 0;
		if (q->spark[i] < 0)
			buf[used++] = ' ';
		else if (utf8)
			used += (size_t)snprintf(buf + used, size - used, "%s",
			    blocks[lv]);
		else
			buf[used++] = ascii[lv];
		buf[used] = '\0';
	}
	if (used == 0)
		snprintf(buf, size, "-");
}

enum { NCOL = 16, CELL = 4 * TOP_SPARK + 4 };

static const char *const head[NCOL] = { "QUEUE", "READY", "SCHED",
    "WAIT", "LEASED", "STALE", "DEAD", "IN/S", "OUT/S", "IN/S(1M)",
    "OUT/S(1M)", "ETA", "OLDEST", "WORKERS", "HELD", "HISTORY" };

/* The cells of q but its name (written apart) and its sparkline (made
 * to the width left). */
static void
cells(char c[NCOL][CELL], const struct top_queue *q)
{
	const uint64_t v[] = { q->s.ready, q->s.scheduled, q->s.waiting,
	    q->s.leased, q->s.stale, q->s.dead };
	double eta = top_eta(q->s.ready, q->in, q->out);
	unsigned k;

	for (k = 0; k < 6; k++)
		snprintf(c[k + 1], CELL, "%llu", (unsigned long long)v[k]);
	fmt_rate(c[7], CELL, q->in);
	fmt_rate(c[8], CELL, q->out);
	fmt_rate(c[9], CELL, q->in_1m);
	fmt_rate(c[10], CELL, q->out_1m);
	fmt_duration(c[11], CELL, eta < 0 ? -1 : (int64_t)(eta * 1e6));
	fmt_duration(c[12], CELL, q->s.ready ?
	    (int64_t)(q->s.oldest_ready_s * 1e6) : -1);
	snprintf(c[13], CELL, "%llu", (unsigned long long)q->workers);
	snprintf(c[14], CELL, "%llu", (unsigned long long)q->s.held_back);
}

/* Which columns fit in fr->width (on[k]) and the space between them
 * (*sep); returns how many rates the sparkline shows. The sparkline
 * takes the width left, its latest rates first. Tried in turn until the
 * sparkline has room: two spaces between columns, one, one without the
 * minute's rates; then no sparkline, and what does not fit is cut. */
static size_t
layout(const struct top_frame *fr, const size_t w[NCOL], int on[NCOL],
    int *sep)
{
	size_t k, used, need = strlen(head[NCOL - 1]);
	int try;

	for (k = 0; k < NCOL; k++)
		on[k] = 1;
	*sep = 2;
	if (fr->width == 0)
		return TOP_SPARK;
	for (try = 0; try < 4; try++) {
		*sep = try ? 1 : 2;
		on[9] = on[10] = try < 2;
		for (used = w[0], k = 1; k < NCOL - 1; k++)
			used += on[k] ? w[k] + (size_t)*sep : 0;
		if (used + (size_t)*sep + need <= fr->width)
			break;
	}
	if (try == 4) {
		on[NCOL - 1] = 0;
		return 0;
	}
	k = fr->width - used - (size_t)*sep;
	return k < TOP_SPARK ? k : TOP_SPARK;
}

/* Columns of shown text s (display width: output.c). */
static size_t
cols(const char *s)
{
	return shown_width(s, strlen(s));
}

/* Line s, cut to fr->width columns (display width: a wide character
 * takes two, and is left out whole when it does not fit), then the end
 * of line. */
static void
put_line(FILE *f, const struct top_frame *fr, const char *s, size_t len)
{
	fwrite(s, 1, shown_fit(s, len, fr->width, NULL), f);
	fputs(fr->tty ? "\033[K\n" : "\n", f);
}

/* The header: the time (UTC), the table, the totals, and the rates
 * over the last interval. */
static void
header(FILE *f, const struct top_frame *fr, const struct top_queue *q,
    size_t n)
{
	uint64_t t[6] = { 0, 0, 0, 0, 0, 0 };
	double in = 0, out = 0;
	char when[32], rin[16], rout[16], over[DURATION_MAX];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	for (i = 0; i < n; i++) {
		t[0] += q[i].s.ready;
		t[1] += q[i].s.scheduled;
		t[2] += q[i].s.leased;
		t[3] += q[i].s.stale;
		t[4] += q[i].s.dead;
		t[5] += q[i].s.waiting;
		in = in < 0 || q[i].in < 0 ? -1 : in + q[i].in;
		out = out < 0 || q[i].out < 0 ? -1 : out + q[i].out;
	}
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fmt_rate(rin, sizeof rin, n ? in : -1);
	fmt_rate(rout, sizeof rout, n ? out : -1);
	fmt_duration(over, sizeof over, fr->interval_us);
	fprintf(f, "mq top %s table %s: %zu queue%s, %llu ready, "
	    "%llu scheduled, %llu waiting, %llu leased, %llu stale, %llu dead; "
	    "in %s/s, out %s/s over %s", when, fr->table, n, PLURAL(n),
	    (unsigned long long)t[0], (unsigned long long)t[1],
	    (unsigned long long)t[5], (unsigned long long)t[2], (unsigned long long)t[3],
	    (unsigned long long)t[4], rin, rout, over);
}

void
top_draw(FILE *f, const struct top_frame *fr, const struct top_queue *q,
    size_t n)
{
	char (*c)[NCOL][CELL] = calloc(n ? n : 1, sizeof *c);
	size_t w[NCOL], i, k, len, rows, spark;
	char *line = NULL;
	int on[NCOL], sep;
	FILE *m;

	if (c == NULL || (m = open_memstream(&line, &len)) == NULL) {
		free(c);
		return;
	}
	for (k = 0; k < NCOL; k++)
		w[k] = strlen(head[k]);
	for (i = 0; i < n; i++) {
		cells(c[i], &q[i]);
		k = text_width((const unsigned char *)q[i].s.queue,
		    q[i].s.queue_len);
		w[0] = k > w[0] ? k : w[0];
		for (k = 1; k < NCOL - 1; k++)
			if (cols(c[i][k]) > w[k])
				w[k] = cols(c[i][k]);
	}
	spark = layout(fr, w, on, &sep);
	for (i = 0; i < n; i++)
		fmt_spark(c[i][NCOL - 1], CELL, &q[i], fr->utf8, spark);
	header(m, fr, q, n);
	fflush(m);
	put_line(f, fr, line, (size_t)ftell(m));
	rewind(m);
	for (k = 0; k < NCOL; k++)
		if (on[k] && k == NCOL - 1)
			fprintf(m, "%*s%s", sep, "", head[k]);
		else if (on[k])
			fprintf(m, "%*s%*s", k ? sep : 0, "",
			    k ? (int)w[k] : -(int)w[k], head[k]);
	fflush(m);
	put_line(f, fr, line, (size_t)ftell(m));
	/* on a terminal, the rows that fit under the two lines above */
	rows = fr->height > 2 ? fr->height - 2 : fr->height ? 0 : n;
	for (i = 0; i < n && i < rows; i++) {
		rewind(m);
		k = put_text(m, (const unsigned char *)q[i].s.queue,
		    q[i].s.queue_len);
		fprintf(m, "%*s", (int)(w[0] - k), "");
		for (k = 1; k < NCOL - 1; k++)
			if (on[k])
				fprintf(m, "%*s%*s", sep, "", (int)w[k],
				    c[i][k]);
		if (on[NCOL - 1])
			fprintf(m, "%*s%s", sep, "", c[i][NCOL - 1]);
		fflush(m);
		put_line(f, fr, line, (size_t)ftell(m));
	}
	fclose(m);
	free(line);
	free(c);
}
