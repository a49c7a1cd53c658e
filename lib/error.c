/*
 * error.c: recording failures on the handle, and the one place that
 * decides what a server error means (after sysbench's check_error()).
 */
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *
mq_strerror(enum mq_status st)
{
	switch (st) {
	case MQ_OK:		return "success";
	case MQ_EMPTY:		return "queue empty";
	case MQ_ELEASE:		return "lease lost or unknown receipt (acked, "
		    "failed, requeued, cancelled, purged or claimed again)";
	case MQ_EINVAL:		return "invalid argument";
	case MQ_ETOOBIG:	return "payload too large";
	case MQ_ESCHEMA:	return "not an mq table";
	case MQ_ECONFIG:	return "bad configuration";
	case MQ_EUNAVAIL:	return "cannot connect to server";
	case MQ_EACCESS:	return "access denied";
	case MQ_ERETRY:		return "transaction kept failing (deadlock or lock wait)";
	case MQ_EDB:		return "server error";
	case MQ_ENOMEM:		return "out of memory";
	case MQ_EIO:		return "input/output error";
	case MQ_PAUSED:		return "queue paused";
	case MQ_EUNKNOWN:	return "outcome unknown: the connection was lost "
				    "while the server may have committed";
	case MQ_EPARENT:	return "no such parent";
	}
	return "unknown error";
}

enum mq_status
mq__classify(unsigned err)
{
	switch (err) {
	case 0:
		return MQ_OK;
	case ER_LOCK_DEADLOCK:		/* 1213 */
	case ER_LOCK_WAIT_TIMEOUT:	/* 1205 */
	case ER_QUERY_INTERRUPTED:	/* 1317: a late wakeup hit a claim */
		return MQ_ERETRY;
	case CR_CONNECTION_ERROR:	/* 2002 */
	case CR_CONN_HOST_ERROR:	/* 2003 */
	case CR_UNKNOWN_HOST:		/* 2005 */
	case CR_SERVER_GONE_ERROR:	/* 2006 */
	case CR_SERVER_LOST:		/* 2013 */
	case ER_CON_COUNT_ERROR:	/* 1040 */
	case ER_SERVER_SHUTDOWN:	/* 1053 */
	case ER_CONNECTION_KILLED:	/* 1927 */
	/* a Galera node out of the primary component (lost quorum,
	 * joining): "WSREP has not yet prepared node for application use" */
	case 1047:
	/* MariaDB Connector/C's own transport errors (not in MySQL's
	 * headers): a read or write on a connection the server cut */
	case 5013:			/* CR_ERR_NET_READ */
	case 5014:			/* CR_ERR_NET_WRITE: a broken pipe */
	case 5015:			/* CR_ERR_NET_UNCOMPRESS */
		return MQ_EUNAVAIL;
	case ER_DBACCESS_DENIED_ERROR:	/* 1044 */
	case ER_ACCESS_DENIED_ERROR:	/* 1045 */
	case ER_TABLEACCESS_DENIED_ERROR: /* 1142 */
	case ER_COLUMNACCESS_DENIED_ERROR: /* 1143 */
	case ER_SPECIFIC_ACCESS_DENIED_ERROR: /* 1227 */
		return MQ_EACCESS;
	case ER_NO_SUCH_TABLE:		/* 1146 */
	case ER_BAD_FIELD_ERROR:	/* 1054 */
		return MQ_ESCHEMA;
	case ER_NO_DB_ERROR:		/* 1046 */
	case ER_BAD_DB_ERROR:		/* 1049 */
	case ER_WRONG_DB_NAME:		/* 1102: no such database either */
		return MQ_ECONFIG;
	case ER_NET_PACKET_TOO_LARGE:	/* 1153 */
		return MQ_ETOOBIG;
	case CR_OUT_OF_MEMORY:
		return MQ_ENOMEM;
	default:
		if (err >= 2000 && err < 3000)
			return MQ_EUNAVAIL;	/* client-side: transport */
		return MQ_EDB;
	}
}

int
mq_conn_limit(const struct mq_error *e)
{
	return e->db_errno == ER_CON_COUNT_ERROR ||	/* 1040 */
	    e->db_errno == ER_TOO_MANY_USER_CONNECTIONS || /* 1203 */
	    e->db_errno == ER_USER_LIMIT_REACHED;	/* 1226 */
}

enum mq_status
mq__fail(struct mq_conn *c, enum mq_status st, const char *fmt, ...)
{
	va_list ap;

	c->err.status = st;
	c->err.db_errno = 0;
	c->err.sqlstate[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
	va_end(ap);
	return st;
}

static void
set_db_error(struct mq_error *e, unsigned no, const char *state,
    const char *text, const char *what)
{
	size_t n;

	e->db_errno = no;
	e->status = mq__classify(no);
	if (e->status == MQ_OK)
		e->status = MQ_EDB;
	snprintf(e->sqlstate, sizeof e->sqlstate, "%s", state ? state : "");
	if (strcmp(e->sqlstate, "00000") == 0)
		e->sqlstate[0] = '\0';
	snprintf(e->msg, sizeof e->msg, "%s: %s", what,
	    text && *text ? text : "unknown error");
	/* Server messages may span lines; the tool prints one. */
	for (n = 0; e->msg[n]; n++)
		if (e->msg[n] == '\n' || e->msg[n] == '\r')
			e->msg[n] = ' ';
}

/* The server may have done a write that commits, or a COMMIT, that
 * failed this way: the connection was lost after it went out (2006 is
 * a send that failed: nothing reached the server), or the server said
 * the commit failed without knowing: a Galera node that loses its
 * primary component while it replicates the transaction answers 1180
 * ("Error while appending streaming replication fragment(provider
 * status: Not connected to Primary Component)"), and the other nodes
 * may have committed it (seen: an ack so refused had been done). */
static int
lost_in_flight(unsigned err)
{
	/* and Connector/C's read errors: the statement may have run */
	return err == CR_SERVER_LOST || err == 2055 /* MySQL's, extended */ ||
	    err == 5013 || err == 5015 ||
	    err == ER_ERROR_DURING_COMMIT;	/* 1180 */
}

enum mq_status
mq__dberr(struct mq_conn *c, MYSQL_STMT *stmt, const char *what)
{
	char unknown[160], state[sizeof c->err.sqlstate];

	if (stmt && mysql_stmt_errno(stmt))
		set_db_error(&c->err, mysql_stmt_errno(stmt),
		    mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt), what);
	else
		set_db_error(&c->err, mysql_errno(c->db), mysql_sqlstate(c->db),
		    mysql_error(c->db), what);
	/* an autocommitted write or a COMMIT whose answer never came: not
	 * "nothing happened", not "done" either */
	if (c->may_commit && lost_in_flight(c->err.db_errno)) {
		snprintf(unknown, sizeof unknown, "outcome unknown: %s",
		    what);
		memcpy(state, c->err.sqlstate, sizeof state);
		set_db_error(&c->err, c->err.db_errno, state,
		    stmt && mysql_stmt_errno(stmt) ? mysql_stmt_error(stmt) :
		    mysql_error(c->db), unknown);
		c->err.status = MQ_EUNKNOWN;
	}
	return c->err.status;
}

void
mq__error_from_db(struct mq_error *e, MYSQL *db, const char *what)
{
	set_db_error(e, mysql_errno(db), mysql_sqlstate(db), mysql_error(db),
	    what);
}

const struct mq_error *
mq_conn_error(const struct mq_conn *c)
{
	return &c->err;
}
