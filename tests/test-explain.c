/*
 * test-explain.c: the claim SELECT must read the claim index in order:
 * EXPLAIN shows the index and no filesort (a locking read locks what it
 * scans; a filesort over a big table has exhausted lock memory in the
 * field). Runs the statement lib really uses, on a table with rows of
 * every state, against the private server (MQ_SOCKET, MQ_DATABASE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int n, failed;

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

int
main(void)
{
	struct mq_connopts o;
	struct mq_init_report rep;
	struct mq_error e;
	struct mq_conn *c;
	char *sql, *tmpl, *esc;
	MYSQL_RES *res;
	MYSQL_ROW row;
	char plan[4096] = "";

	memset(&o, 0, sizeof o);
	o.defaults_file = getenv("MQ_DEFAULTS_FILE");
	o.socket = getenv("MQ_SOCKET");
	o.user = getenv("MQ_USER");
	o.database = getenv("MQ_DATABASE");
	if ((c = mq_connect(&o, &e)) == NULL) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	ok(mq_init(c, "explain_jobs", &rep) == MQ_OK, "init", c->err.msg);
	/* rows in every state, so the optimizer has a real choice */
	ok(mysql_query(c->db, "INSERT INTO explain_jobs (queue, state, "
	    "payload, available_at) SELECT IF(seq % 3, 'a', 'b'), "
	    "ELT(1 + seq % 4, 'ready', 'leased', 'done', 'dead'), 'x', "
	    "NOW(6) - INTERVAL seq SECOND FROM seq_1_to_5000") == 0 &&
	    mysql_query(c->db, "ANALYZE TABLE explain_jobs") == 0,
	    "fill the table", mysql_error(c->db));
	mysql_free_result(mysql_store_result(c->db));
	res = NULL;

	/* the real statement, prepared server-side with its parameters */
	tmpl = mq__expand(mq__sql_claim_select, "explain_jobs", NULL);
	esc = malloc(2 * strlen(tmpl) + 1);
	sql = malloc(2 * strlen(tmpl) + 64);
	mysql_real_escape_string(c->db, esc, tmpl, strlen(tmpl));
	sprintf(sql, "PREPARE p FROM 'EXPLAIN %s'", esc);
	ok(mysql_query(c->db, "SET @q = 'a', @n = 5") == 0 &&
	    mysql_query(c->db, sql) == 0, "PREPARE EXPLAIN", mysql_error(c->db));
	free(sql);
	sql = strdup("EXECUTE p USING @q, @q, @n");
	ok(mysql_query(c->db, sql) == 0 &&
	    (res = mysql_store_result(c->db)) != NULL, "EXPLAIN runs",
	    mysql_error(c->db));
	while (res && (row = mysql_fetch_row(res)) != NULL) {
		unsigned i;
		for (i = 0; i < mysql_num_fields(res); i++) {
			strncat(plan, row[i] ? row[i] : "NULL",
			    sizeof plan - strlen(plan) - 2);
			strcat(plan, "|");
		}
	}
	mysql_free_result(res);
	printf("# plan: %s\n", plan);
	ok(strstr(plan, "|claim|") != NULL, "claim uses the claim index",
	    plan);
	ok(strstr(plan, "filesort") == NULL, "claim has no filesort", plan);
	ok(strstr(plan, "temporary") == NULL, "claim has no temporary table",
	    plan);
	free(sql);
	free(tmpl);
	free(esc);
	mq_close(c);
	printf("1..%d\n", n);
	return failed != 0;
}
