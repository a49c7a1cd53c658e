/*
 * db-test.h: what the C tests that talk to the private server share
 * (c-test.sh runs them with tests/lib.sh's settings): TAP lines, and a
 * connection made from those settings.
 */
#ifndef MQ_DB_TEST_H
#define MQ_DB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n, failed;

/* One TAP line; detail said under a failure. */
static void
ok(int cond, const char *what, const char *detail)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
	if (!cond && detail)
		printf("# %s\n", detail);
}

/* A connection to lib.sh's database, or a "Bail out!" line and NULL. */
static struct mq_conn *
test_connect(void)
{
	struct mq_connopts o;
	struct mq_error e;
	struct mq_conn *c;

	memset(&o, 0, sizeof o);
	o.defaults_file = getenv("MQ_DEFAULTS_FILE");
	o.socket = getenv("MQ_SOCKET");
	o.user = getenv("MQ_USER");
	o.database = getenv("MQ_DATABASE");
	if ((c = mq_connect(&o, &e)) == NULL)
		printf("Bail out! %s\n", e.msg);
	return c;
}

#endif
