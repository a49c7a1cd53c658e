/*
 * work/db.c: part of mq work: the threads that talk to the server for
 * it. Each owns one connection and runs one task at a time, posted by
 * the loop of work/loop.c, and says through a pipe when the task is done: a
 * statement that waits (a row lock, a server that hangs) holds up that
 * thread only, never the loop that owns the children, the timers and
 * the signals. Their connections are made here too (connect_table), in
 * the thread that uses them, for the same reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "work.h"

static void *
run(void *ctx)
{
	struct dbt *d = ctx;
	void (*fn)(void *);
	void *fn_ctx;
	char b = 1;

	mq_thread_init();
	for (;;) {
		pthread_mutex_lock(&d->mu);
		while (d->fn == NULL && !d->quit)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->fn == NULL) {	/* quit, idle: dbt_end */
			pthread_mutex_unlock(&d->mu);
			mq_thread_end();
			return NULL;
		}
		fn = d->fn;
		fn_ctx = d->ctx;
		pthread_mutex_unlock(&d->mu);
		fn(fn_ctx);
		pthread_mutex_lock(&d->mu);
		d->fn = NULL;
		pthread_mutex_unlock(&d->mu);
		while (write(d->fd[1], &b, 1) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

int
dbt_start(struct dbt *d)
{
	sigset_t all, old;
	int e;

	d->fn = NULL;
	d->busy = 0;
	d->quit = 0;
	if (pipe(d->fd) != 0)
		return errno;
	fcntl(d->fd[0], F_SETFL, O_NONBLOCK);
	fcntl(d->fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(d->fd[1], F_SETFD, FD_CLOEXEC);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	/* signals are the loop's (its self-pipe): the thread starts with
	 * them all blocked, and keeps them so */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&d->t, NULL, run, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	d->started = e == 0;
	return e;
}

void
dbt_end(struct dbt *d)
{
	int idle;

	if (!d->started)
		return;
	pthread_mutex_lock(&d->mu);
	idle = d->fn == NULL;
	d->quit = 1;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	/* one that waits for the server is left to the process's end */
	if (idle && pthread_join(d->t, NULL) == 0)
		d->started = 0;
}

void
dbt_post(struct dbt *d, void (*fn)(void *), void *ctx)
{
	pthread_mutex_lock(&d->mu);
	d->ctx = ctx;
	d->fn = fn;
	d->busy = 1;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

int
dbt_collect(struct dbt *d)
{
	char b;
	int done;

	while (read(d->fd[0], &b, 1) == 1)
		;
	/* the lock orders the task's writes before the loop's reads */
	pthread_mutex_lock(&d->mu);
	done = d->fn == NULL;
	pthread_mutex_unlock(&d->mu);
	if (done)
		d->busy = 0;
	return done;
}

struct mq_conn *
connect_table(const struct mq_connopts *o, const char *table,
    struct mq_error *e)
{
	struct mq_conn *c = mq_connect(o, e);

	if (c && mq_use_table(c, table) != MQ_OK) {
		*e = *mq_conn_error(c);
		mq_close(c);
		c = NULL;
	}
	return c;
}
