/*
 * hosts.c: a list of servers to connect to (--host db1,db2:3307,db3;
 * MQ_HOST; host= in an option file), and whether the node connected to
 * may be used: on a Galera cluster a node that is not Synced in the
 * primary component (a joiner, a donor, one cut off from the others)
 * answers most statements with error 1047, or serves stale reads.
 * conn.c tries the entries in order and takes the first ready one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One entry: "host", "host:port", "[v6]" or "[v6]:port"; a bare v6
 * address has more than one ':' and no port. 0: the entry is not
 * valid. The host is copied into buf (size bytes), the port (0: the
 * default) into *port. */
static int
parse_entry(const char *s, size_t len, char *buf, size_t size,
    unsigned *port)
{
	const char *colon = NULL, *end = s + len, *p;
	size_t hl;
	unsigned long v = 0;
	int colons = 0;

	*port = 0;
	if (len == 0)
		return 0;
	if (*s == '[') {
		if ((p = memchr(s, ']', len)) == NULL || p == s + 1)
			return 0;
		hl = (size_t)(p - s - 1);
		if (p + 1 < end && p[1] != ':')
			return 0;
		colon = p + 1 < end ? p + 1 : NULL;
		s++;
	} else {
		for (p = s; p < end; p++)
			if (*p == ':') {
				colons++;
				colon = p;
			}
		if (colons > 1)
			colon = NULL;	/* an IPv6 address, no port */
		hl = colon ? (size_t)(colon - s) : len;
	}
	if (hl == 0 || hl >= size)
		return 0;
	if (colon) {
		if (colon + 1 == end)
			return 0;
		for (p = colon + 1; p < end; p++) {
			if (*p < '0' || *p > '9')
				return 0;
			v = v * 10 + (unsigned long)(*p - '0');
			if (v > 65535)
				return 0;
		}
		if (v == 0)
			return 0;
		*port = (unsigned)v;
	}
	memcpy(buf, s, hl);
	buf[hl] = '\0';
	for (p = buf; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return 0;
	return 1;
}

int
mq__host_list(const char *list)
{
	return list != NULL && strchr(list, ',') != NULL;
}

enum mq_status
mq__host_entry(const char *list, size_t i, char *host, size_t size,
    unsigned *port, struct mq_error *err)
{
	const char *s = list, *comma;
	size_t k, len;

	for (k = 0; k < i && s; k++)
		s = (s = strchr(s, ',')) ? s + 1 : NULL;
	if (s == NULL)
		return MQ_EMPTY;
	comma = strchr(s, ',');
	len = comma ? (size_t)(comma - s) : strlen(s);
	if (!parse_entry(s, len, host, size, port)) {
		err->status = MQ_ECONFIG;
		snprintf(err->msg, sizeof err->msg, "invalid host list "
		    "'%.200s': entry %zu is not HOST, HOST:PORT or "
		    "[ADDRESS]:PORT", list, i + 1);
		return MQ_ECONFIG;
	}
	return MQ_OK;
}

/* Whether a node may be used: not a Galera node (wsrep_on off, or no
 * such variable: MySQL, MariaDB without wsrep; their wsrep status says
 * Disconnected), or one Synced in the primary component and ready. Two
 * statements in one text query: no input. */
static const char sql_ready[] =
    "SHOW GLOBAL VARIABLES WHERE Variable_name = 'wsrep_on';"
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready',"
    " 'wsrep_cluster_status', 'wsrep_local_state_comment')";

/* Reads the rest of the answers (the connection must be left ready). */
static void
drain(MYSQL *db)
{
	MYSQL_RES *res;

	while (mysql_next_result(db) == 0)
		if ((res = mysql_store_result(db)) != NULL)
			mysql_free_result(res);
}

int
mq__node_ready(MYSQL *db, char *why, size_t size)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	int ready = 1, galera = 0;

	*why = '\0';
	if (mysql_real_query(db, sql_ready, sizeof sql_ready - 1) != 0 ||
	    (res = mysql_store_result(db)) == NULL) {
		snprintf(why, size, "cannot read its state: %s (error %u)",
		    mysql_error(db), mysql_errno(db));
		drain(db);
		return 0;
	}
	if ((row = mysql_fetch_row(res)) != NULL && row[1] &&
	    strcmp(row[1], "ON") == 0)
		galera = 1;
	mysql_free_result(res);
	if (!galera) {
		drain(db);
		return 1;
	}
	if (mysql_next_result(db) != 0 ||
	    (res = mysql_store_result(db)) == NULL) {
		snprintf(why, size, "cannot read its state: %s (error %u)",
		    mysql_error(db), mysql_errno(db));
		drain(db);
		return 0;
	}
	while ((row = mysql_fetch_row(res)) != NULL) {
		if (!row[0] || !row[1])
			continue;
		if ((strcmp(row[0], "wsrep_ready") == 0 &&
		    strcmp(row[1], "ON") != 0) ||
		    (strcmp(row[0], "wsrep_cluster_status") == 0 &&
		    strcmp(row[1], "Primary") != 0) ||
		    (strcmp(row[0], "wsrep_local_state_comment") == 0 &&
		    strcmp(row[1], "Synced") != 0)) {
			if (ready)
				snprintf(why, size, "not ready (%.40s %.40s)",
				    row[0], row[1]);
			ready = 0;
		}
	}
	mysql_free_result(res);
	drain(db);
	return ready;
}
