/*
 * bench/floor.c: the floor for one process per job: connect over the
 * socket, run one INSERT, exit. `mq push` is measured against it.
 * usage: bench-floor SOCKET DATABASE TABLE
 */
#include <mysql.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	char sql[256];
	MYSQL *db;

	if (argc != 4)
		return 64;
	if ((db = mysql_init(NULL)) == NULL ||
	    !mysql_real_connect(db, NULL, "root", NULL, argv[2], 0, argv[1], 0))
		return 69;
	snprintf(sql, sizeof sql, "INSERT INTO `%s` (queue, payload) VALUES "
	    "('floor', 'x')", argv[3]);
	if (mysql_query(db, sql) != 0)
		return 70;
	printf("%llu\n", (unsigned long long)mysql_insert_id(db));
	mysql_close(db);
	return 0;
}
