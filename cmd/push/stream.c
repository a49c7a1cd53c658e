/*
 * push/stream.c: part of mq push (documented in mq-push(1)): the stream
 * of jobs of --lines and -0, pushed in batches whose ids are printed as
 * each commits, with progress and a summary on stderr (util/progress.c). The
 * stop signals (push/records.c) wait until the ids of a committed push
 * are out.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "push.h"

static int
print_ids(uint64_t first, size_t n, uint64_t step, void *ctx)
{
	size_t i;

	progress_add(ctx, n);
	for (i = 0; i < n; i++)
		printf("%llu\n", (unsigned long long)(first + i * step));
	/* a reader of the ids sees each batch as soon as it is committed */
	return flush_stdout();
}

int
push_stream(struct mq_conn *c, const struct mq_push_opts *o, int delim,
    struct progress *p)
{
	struct mq_batch *b = mq_batch_new(c, o, print_ids, p);
	enum mq_status st = MQ_OK;
	unsigned long long line = 0;
	struct records in = { NULL, 0, 0, 0, 0, mq_max_payload(c) };
	char *rec;
	size_t n;
	int got = 0, err;
	sigset_t held, waiting;

	/* refused before any record is read (a parent that cannot be one,
	 * --after): nothing pushed, said as a single push says it */
	if (b == NULL) {
		struct mq_error e = *mq_conn_error(c);

		report(&push_command, NULL, &e);
		return exit_status(e.status);
	}
	/* ids shown on a terminal would run over a progress line there */
	if (isatty(1))
		p->tty = 0;
	catch_stop(&held);
	sigprocmask(SIG_BLOCK, &held, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGHUP);
	while (st == MQ_OK && (got = records_next(&in, delim, &waiting,
	    &stop_signal, &rec, &n)) == 1) {
		line++;
		st = mq_batch_add(b, rec, n);
	}
	err = errno;	/* a failed read's cause, before any other call */
	progress_clear(p);	/* before any message */
	if (st == MQ_OK && got == -1) {
		/* the cause named ("Is a directory"); "after record 0" says
		 * nothing: without it then */
		if (err == ENOMEM)
			say(&push_command, "out of memory after record %llu",
			    line);
		else if (line == 0)
			say(&push_command, "cannot read standard input: %s",
			    strerror(err));
		else
			say(&push_command, "cannot read standard input after "
			    "record %llu: %s", line, strerror(err));
		st = err == ENOMEM ? MQ_ENOMEM : MQ_EIO;
	} else {
		if (st == MQ_OK)
			st = mq_batch_flush(b);
		/* a record too long to read whole: as one the batch refuses,
		 * the records before it are pushed, and it is named */
		if (st == MQ_OK && got == -3) {
			say(&push_command, "stopped after reading %llu "
			    "records (the ids printed are the jobs pushed): "
			    "payload of more than %zu bytes is larger than the "
			    "server's max_allowed_packet allows", line + 1,
			    in.max);
			st = MQ_ETOOBIG;
		}
		/* a failed write of the ids is main's to report, once */
		else if (st != MQ_OK && !(st == MQ_EIO && ferror(stdout))) {
			/* the jobs pushed are exactly those whose ids were
			 * printed (an outcome unknown adds the batch in
			 * flight); say how far the input was read */
			char at[160];
			snprintf(at, sizeof at, st == MQ_EUNKNOWN ?
			    "stopped after reading %llu records (the ids "
			    "printed are pushed; the last batch, not "
			    "printed, may be too)" : "stopped after reading "
			    "%llu records (the ids printed are the jobs "
			    "pushed)", line);
			report(&push_command, at, mq_conn_error(c));
		}
	}
	records_free(&in);
	mq_batch_free(b);
	if (st == MQ_OK && !stop_signal)
		progress_summary(p);
	if (st == MQ_OK && stop_signal) {
		say(&push_command, "stopped by signal %d after reading "
		    "%llu records (the ids printed are the jobs pushed)",
		    (int)stop_signal, line);
		return 128 + stop_signal;
	}
	return exit_status(st);
}

