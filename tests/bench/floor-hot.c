/*
 * bench/floor-hot.c: the floor of one hot key at --per-key 1, against
 * which that row's goal can be judged: one job process at a time (fork,
 * exec true, wait), and between two jobs a single round trip that acks
 * the one before and leases the next by id, then commits; with "gated",
 * the same round trip also writes the key's gate row and the count,
 * which a limit certified on Galera and exact counts need; with "chain",
 * the jobs are a chain pushed by mq push --after, and the same round
 * trip also makes the next one due with mq's own statement (the last
 * parent's, lib/deps.c) and writes the count: the writes a chain's link
 * cannot do without. No choice of the next job, no session settings.
 * Prints the milliseconds of N jobs.
 * The job is true, or CMD ARG... (a chain's job, the dependencies row).
 * usage: bench-floor-hot SOCKET DATABASE FIRST_ID N bare|gated|chain
 *     [CMD ARG...]
 * (the jobs FIRST_ID .. FIRST_ID + N, ready, of queue 'fl', key 'hot';
 * with chain, each after the one before it)
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEASE "UPDATE mq_jobs SET state = 'leased', lease_token = 't%llu'," \
    " leased_until = UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE," \
    " attempts = attempts + 1 WHERE id = %llu AND state = 'ready';"
#define ACK "UPDATE mq_jobs SET state = 'done', finished_at =" \
    " UTC_TIMESTAMP(6) WHERE id = %llu AND lease_token = 't%llu'" \
    " AND state = 'leased';"
static const char bare_sql[] = "START TRANSACTION;" ACK LEASE "COMMIT";
static const char gated_sql[] = "START TRANSACTION;" ACK
    "INSERT INTO mq_jobs_gates (queue, gate_key, claims) VALUES"
    " ('fl', 'hot', 1) ON DUPLICATE KEY UPDATE claims = claims + 1;"
    LEASE
    "INSERT INTO mq_jobs_counts (queue, state, slot, n) SELECT queue,"
    " CAST(state AS CHAR), CONNECTION_ID() %% 16, COUNT(*) FROM mq_jobs"
    " WHERE id = %llu AND state = 'done' GROUP BY queue, state"
    " ON DUPLICATE KEY UPDATE n = n + VALUES(n); COMMIT";
static const char chain_sql[] = "START TRANSACTION;" ACK
    "UPDATE mq_jobs_deps d FORCE INDEX (PRIMARY) STRAIGHT_JOIN"
    " mq_jobs_waits w ON w.child = d.child AND w.shard = d.parent %% 1024"
    " STRAIGHT_JOIN mq_jobs j ON j.id = d.child SET d.met = 1,"
    " w.parents = 0, j.parent_shards = 0, j.available_at ="
    " UTC_TIMESTAMP(6) WHERE d.met = 0 AND w.parents = 1 AND"
    " j.parent_shards = 1 AND j.state = 'ready' AND j.available_at ="
    " '9999-12-31 23:59:59.999999' AND d.parent = %llu;"
    LEASE
    "INSERT INTO mq_jobs_counts (queue, state, slot, n) SELECT queue,"
    " CAST(state AS CHAR), CONNECTION_ID() %% 16, COUNT(*) FROM mq_jobs"
    " WHERE id = %llu AND state = 'done' GROUP BY queue, state"
    " ON DUPLICATE KEY UPDATE n = n + VALUES(n); COMMIT";

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int
run(MYSQL *db, const char *sql)
{
	MYSQL_RES *res;

	if (mysql_query(db, sql) != 0)
		return -1;
	do {
		if ((res = mysql_store_result(db)) != NULL)
			mysql_free_result(res);
	} while (mysql_next_result(db) == 0);
	return 0;
}

int
main(int argc, char **argv)
{
	char sql[2048];
	unsigned long long first, n, i;
	MYSQL *db;
	double t0;
	pid_t pid;
	int gated, chain, st;

	char *true_cmd[] = { "true", NULL }, **cmd = true_cmd;

	if (argc < 6)
		return 64;
	if (argc > 6)
		cmd = argv + 6;
	first = strtoull(argv[3], NULL, 10);
	n = strtoull(argv[4], NULL, 10);
	gated = strcmp(argv[5], "gated") == 0;
	chain = strcmp(argv[5], "chain") == 0;
	if ((db = mysql_init(NULL)) == NULL || !mysql_real_connect(db, NULL,
	    "root", NULL, argv[2], 0, argv[1], CLIENT_MULTI_STATEMENTS))
		return 69;
	t0 = now_ms();
	snprintf(sql, sizeof sql, LEASE, first, first);
	if (run(db, sql) != 0)
		return 70;
	for (i = first; i < first + n; i++) {
		if ((pid = fork()) == 0) {
			execvp(cmd[0], cmd);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 71;
		if (chain)
			snprintf(sql, sizeof sql, chain_sql, i, i, i, i + 1,
			    i + 1, i);
		else if (gated)
			snprintf(sql, sizeof sql, gated_sql, i, i, i + 1, i + 1,
			    i);
		else
			snprintf(sql, sizeof sql, bare_sql, i, i, i + 1, i + 1);
		if (run(db, sql) != 0)
			return 70;
	}
	printf("%.0f\n", now_ms() - t0);
	mysql_close(db);
	return 0;
}
