/*
 * bench/floor-call.c: the floor of a shell loop of one process a call,
 * against which the per call row's goal can be judged: a pop that
 * connects and claims in one round trip (the claim, the lease and the
 * job read, one multi-statement text), and an ack that connects and
 * acks with its count in one; nothing else (no session settings, no
 * table check). Linked as mq is.
 * usage: bench-floor-call pop SOCKET DATABASE QUEUE   (prints ID.TOKEN)
 *        bench-floor-call ack SOCKET DATABASE ID.TOKEN
 * Exit 1 when pop finds no job.
 */
#include <mysql.h>
#include <stdio.h>
#include <string.h>

static const char pop_sql[] = "START TRANSACTION;"
    "SELECT id INTO @id FROM mq_jobs FORCE INDEX (claim) WHERE queue = '%s'"
    " AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)"
    " ORDER BY priority, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED;"
    "UPDATE mq_jobs SET state = 'leased', attempts = attempts + 1,"
    " lease_token = '%s', leased_until = UTC_TIMESTAMP(6) + INTERVAL 5 MINUTE"
    " WHERE id = @id;"
    "SELECT id, payload FROM mq_jobs WHERE id = @id; COMMIT";
static const char ack_sql[] = "START TRANSACTION;"
    "UPDATE mq_jobs SET state = 'done', finished_at = UTC_TIMESTAMP(6)"
    " WHERE id = %llu AND lease_token = '%s' AND state = 'leased';"
    "INSERT INTO mq_jobs_counts (queue, state, slot, n)"
    " SELECT queue, CAST(state AS CHAR), CONNECTION_ID() %% 16, COUNT(*)"
    " FROM mq_jobs WHERE id = %llu AND state = 'done' GROUP BY queue, state"
    " ON DUPLICATE KEY UPDATE n = n + VALUES(n); COMMIT";

int
main(int argc, char **argv)
{
	char sql[1024], tok[33];
	unsigned char r[16];
	unsigned long long id = 0;
	MYSQL *db;
	MYSQL_RES *res;
	MYSQL_ROW row;
	FILE *f;
	int i, pop, found = 0;

	if (argc != 5)
		return 64;
	pop = strcmp(argv[1], "pop") == 0;
	if (pop) {
		if ((f = fopen("/dev/urandom", "r")) == NULL ||
		    fread(r, 1, sizeof r, f) != sizeof r)
			return 71;
		fclose(f);
		for (i = 0; i < 16; i++)
			snprintf(tok + 2 * i, 3, "%02x", r[i]);
		if (strspn(argv[4], "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
		    strlen(argv[4]))
			return 64;
		snprintf(sql, sizeof sql, pop_sql, argv[4], tok);
	} else {
		if (sscanf(argv[4], "%llu.%32[0-9a-f]", &id, tok) != 2)
			return 64;
		snprintf(sql, sizeof sql, ack_sql, id, tok, id);
	}
	if ((db = mysql_init(NULL)) == NULL || !mysql_real_connect(db, NULL,
	    "root", NULL, argv[3], 0, argv[2], CLIENT_MULTI_STATEMENTS))
		return 69;
	if (mysql_query(db, sql) != 0)
		return 70;
	do {
		if ((res = mysql_store_result(db)) == NULL)
			continue;
		if (pop && (row = mysql_fetch_row(res)) != NULL) {
			printf("%s.%s\n", row[0], tok);
			found = 1;
		}
		mysql_free_result(res);
	} while (mysql_next_result(db) == 0);
	mysql_close(db);
	return pop && !found ? 1 : 0;
}
