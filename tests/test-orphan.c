/*
 * test-orphan.c: mq_release_orphan on a connection to another server
 * than the lost claim's (as mq work's after its Galera node died mid
 * COMMIT): the claim's session cannot be ended from there, but the jobs
 * it committed are the cluster's, given back at once (not at their
 * lease's end: a failover waited the whole lease, 40 s in CI), and
 * mq_orphan_elsewhere() says the orphan is to be tried again. Another
 * server is played by the orphan's server name: this one under another
 * name.
 */
#include "../lib/internal.h"
#include "db-test.h"

/* The one cell of sql's first row, as text ("" if none). */
static void
cell(MYSQL *db, const char *sql, char *out, size_t size)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	*out = '\0';
	if (mysql_query(db, sql) != 0 || (res = mysql_store_result(db)) == NULL)
		return;
	if ((row = mysql_fetch_row(res)) != NULL && row[0])
		snprintf(out, size, "%s", row[0]);
	mysql_free_result(res);
}

int
main(void)
{
	static const char token[] = "0123456789abcdef0123456789abcdef";
	struct mq_init_report rep;
	struct mq_orphan orphan;
	struct mq_conn *c;
	char got[256];
	size_t back = 99;
	enum mq_status st;

	if ((c = test_connect()) == NULL)
		return 1;
	ok(mq_init(c, "orphan_jobs", &rep) == MQ_OK, "init", c->err.msg);
	/* the claim that committed on the other node: 3 jobs leased with
	 * its token, a 4th of another claim */
	ok(mysql_query(c->db, "INSERT INTO orphan_jobs (queue, state, payload,"
	    " attempts, lease_token, leased_until, leased_by) VALUES"
	    " ('oq', 'leased', 'a', 1, '0123456789abcdef0123456789abcdef',"
	    "  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, 'h:1'),"
	    " ('oq', 'leased', 'b', 1, '0123456789abcdef0123456789abcdef',"
	    "  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, 'h:1'),"
	    " ('oq', 'leased', 'c', 1, '0123456789abcdef0123456789abcdef',"
	    "  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, 'h:1'),"
	    " ('oq', 'leased', 'd', 1, 'ffffffffffffffffffffffffffffffff',"
	    "  UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, 'h:2')") == 0,
	    "the claim's jobs", mysql_error(c->db));
	memset(&orphan, 0, sizeof orphan);
	snprintf(orphan.queue, sizeof orphan.queue, "oq");
	memcpy(orphan.token, token, sizeof orphan.token);
	orphan.thread = 4242;
	snprintf(orphan.server, sizeof orphan.server, "another-node:3306");
	orphan.connected_us = mq_now_us();
	orphan.lease_end_us = mq_now_us() + 3600000000LL;

	st = mq_release_orphan(c, &orphan, &back);
	ok(st == MQ_ERETRY, "its session cannot be ended from here: a "
	    "failure to try again", c->err.msg);
	ok(mq_orphan_elsewhere(c), "mq_orphan_elsewhere says why", NULL);
	snprintf(got, sizeof got, "%zu", back);
	ok(back == 3, "the 3 jobs it committed were given back", got);
	cell(c->db, "SELECT GROUP_CONCAT(payload, ':', state ORDER BY id)"
	    " FROM orphan_jobs", got, sizeof got);
	ok(strcmp(got, "a:ready,b:ready,c:ready,d:leased") == 0,
	    "ready again; another claim's job left leased", got);

	/* on the claim's own server, its session over: given back, no
	 * failure (as before) */
	ok(mysql_query(c->db, "UPDATE orphan_jobs SET state = 'leased',"
	    " lease_token = '0123456789abcdef0123456789abcdef',"
	    " leased_until = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR"
	    " WHERE payload = 'a'") == 0, "a leased again", mysql_error(c->db));
	cell(c->db, "SELECT CONCAT(@@hostname, ':', @@port)", orphan.server,
	    sizeof orphan.server);
	cell(c->db, "SELECT CONNECTION_ID()", got, sizeof got);
	orphan.thread = strtoul(got, NULL, 10);
	st = mq_release_orphan(c, &orphan, &back);
	ok(st == MQ_OK && back == 1 && !mq_orphan_elsewhere(c),
	    "on its own server: given back, not 'elsewhere'", c->err.msg);
	mq_close(c);
	printf("1..%d\n", n);
	return failed != 0;
}
