/*
 * stmt.c: prepared statements done one way everywhere (sysbench's call
 * sequence, errors read from the statement), SQL templates expanded for
 * the table, and the transaction loop that retries deadlocks.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <time.h>

#include "internal.h"

char *
mq__expand(const char *tmpl, const char *table, const char *lock)
{
	static const struct {
		const char *mark;
		size_t len;
	} marks[] = { {"{{TABLE}}", 9}, {"{{LOCK}}", 8} };
	const char *value[2] = { table, lock ? lock : "" };
	size_t n = strlen(tmpl) + 1, i;
	const char *p;
	char *out, *o;

	for (i = 0; i < 2; i++)
		for (p = tmpl; (p = strstr(p, marks[i].mark)) != NULL;
		    p += marks[i].len)
			n += strlen(value[i]);
	if ((out = malloc(n)) == NULL)
		return NULL;
	for (o = out, p = tmpl; *p;) {
		for (i = 0; i < 2; i++)
			if (strncmp(p, marks[i].mark, marks[i].len) == 0)
				break;
		if (i < 2) {
			o = stpcpy(o, value[i]);
			p += marks[i].len;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* libmariadb can send a statement's text with its first execution and
 * read both answers after one round trip. Servers without it (MySQL,
 * MariaDB < 10.2) get the two commands from the library itself. */
#if defined(MARIADB_PACKAGE_VERSION_ID) && MARIADB_PACKAGE_VERSION_ID >= 30000
#define HAVE_EXECUTE_DIRECT 1
#endif

/* A read keeps its plan for one execution only. MariaDB (10.11 at
 * least) does not make a prepared statement's plan again from the same
 * table state on its second and later executions: after another
 * statement has read the same table through another index, a loose
 * index scan ("Using index for group-by") becomes a scan of the whole
 * index (mq stats' queue list: 1 entry read, then 1,100,000 on a table
 * of 1M finished jobs), and an index-only range reads every row
 * ("Using index" becomes "Using index condition"). Writes by primary
 * key and inserts of values keep theirs. So a statement that reads
 * (its text has a SELECT) is never kept: it is prepared with each use,
 * its text sent with its execution (one round trip, as a kept one
 * costs), and a handle executed twice is prepared again first. */
static int
is_read(const char *sql)
{
	return strstr(sql, "SELECT") != NULL;
}

/* Whether the transaction c is in has ended behind its back. On a
 * Galera node, a brute-force abort (a write set replicated from another
 * node that conflicts with this transaction's locks) that lands while
 * the server handles a COM_STMT_PREPARE rolls the transaction back and
 * loses the deadlock error: the prepare had answered already, and the
 * next command finds no transaction to report it for. The statements
 * after it then run outside any transaction, each committing by itself,
 * and the COMMIT commits nothing (t401: two workers ran one job, the
 * claim's first lease rolled back, its second committed alone). Every
 * answer that ends a statement carries the session's status, whose
 * SERVER_STATUS_IN_TRANS says whether the transaction is open. */
static int
tx_gone(struct mq_conn *c)
{
	if (c->in_tx && !(c->db->server_status & SERVER_STATUS_IN_TRANS))
		c->tx_lost = 1;
	return c->tx_lost;
}

static enum mq_status
tx_lost_error(struct mq_conn *c, const char *what)
{
	mq__fail(c, MQ_ERETRY, "%s: the transaction was rolled back "
	    "without an error (a Galera brute-force abort)", what);
	c->err.db_errno = 1213;		/* what the server should have said */
	memcpy(c->err.sqlstate, "40001", 6);
	return MQ_ERETRY;
}

/* mysql_stmt_prepare, minding the transaction (tx_gone). */
static int
prepare_text(struct mq_conn *c, MYSQL_STMT *st, const char *sql)
{
	if (c->in_tx && c->galera)
		c->tx_unsure = 1;
	return mysql_stmt_prepare(st, sql, strlen(sql));
}

void
mq__tx_begun(struct mq_conn *c)
{
	c->in_tx = 1;
	c->tx_unsure = c->tx_lost = 0;
}

enum mq_status
mq__tx_open(struct mq_conn *c)
{
	return tx_gone(c) ? tx_lost_error(c, "cannot commit") : MQ_OK;
}

static struct mq_unprepared *
unprepared(struct mq_conn *c, MYSQL_STMT *st)
{
	size_t i;

	for (i = 0; i < MQ_UNPREPARED; i++)
		if (c->unprepared[i].st == st)
			return &c->unprepared[i];
	return NULL;
}

static void
forget_text(struct mq_unprepared *u)
{
	free(u->sql);
	u->sql = NULL;
	u->st = NULL;
	u->deferred = u->read = u->ran = 0;
}

#if defined(HAVE_EXECUTE_DIRECT)
/* Tells the library how many values st's deferred text binds: it must
 * know before the server has counted them (the templates hold no '?'
 * but those); 0 for a text prepared by itself. */
static int
prebind(MYSQL_STMT *st, const char *sql)
{
	unsigned int params = 0;
	const char *p;

	for (p = sql; sql && (p = strchr(p, '?')) != NULL; p++)
		params++;
	return mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &params);
}
#endif

/* Keeps sql for st: for its first execution (defer: sent with it), and
 * for a read, for the life of st (prepared again if executed again).
 * 0 if there is no room left (or nothing to keep). */
static int
keep_text(struct mq_conn *c, MYSQL_STMT *st, char *sql, int defer)
{
	struct mq_unprepared *u = unprepared(c, NULL);

	if (u == NULL || (!defer && !is_read(sql)))
		return 0;
#if defined(HAVE_EXECUTE_DIRECT)
	if (defer && prebind(st, sql) != 0)
		return 0;
#else
	defer = 0;
#endif
	u->st = st;
	u->sql = sql;
	u->deferred = defer;
	u->read = is_read(sql);
	u->ran = 0;
	return 1;
}

MYSQL_STMT *
mq__prepare_once(struct mq_conn *c, const char *tmpl)
{
	MYSQL_STMT *st;
	char *sql = mq__expand(tmpl, c->table, c->skip_locked ?
	    "FOR UPDATE SKIP LOCKED" : "FOR UPDATE");

	if (sql == NULL) {
		mq__fail(c, MQ_ENOMEM, "out of memory");
		return NULL;
	}
	st = mysql_stmt_init(c->db);
	if (st == NULL) {
		mq__dberr(c, NULL, "cannot prepare statement");
		free(sql);
		return NULL;
	}
#if defined(HAVE_EXECUTE_DIRECT)
	if (keep_text(c, st, sql, 1))
		return st;
#endif
	if (prepare_text(c, st, sql) != 0) {
		mq__dberr(c, st, "cannot prepare statement");
		mysql_stmt_close(st);
		free(sql);
		return NULL;
	}
	if (!keep_text(c, st, sql, 0))
		free(sql);
	return st;
}

/* Closes st, and forgets its text if it never ran. */
static void
close_statement(struct mq_conn *c, MYSQL_STMT *st)
{
	struct mq_unprepared *u = unprepared(c, st);

	if (u)
		forget_text(u);
	mysql_stmt_close(st);
}

MYSQL_STMT *
mq__prepare_keyed(struct mq_conn *c, const void *key, size_t n,
    const char *text)
{
	struct mq_cached *free_slot = NULL;
	MYSQL_STMT *st;
	size_t i;

	if (is_read(text))	/* never kept: see is_read */
		return mq__prepare_once(c, text);
	for (i = 0; i < MQ_STMT_CACHE; i++) {
		if (c->cache[i].st && c->cache[i].key == key &&
		    c->cache[i].n == n)
			return c->cache[i].st;
		if (!c->cache[i].st && !free_slot)
			free_slot = &c->cache[i];
	}
	if ((st = mq__prepare_once(c, text)) != NULL && free_slot) {
		free_slot->key = key;
		free_slot->n = n;
		free_slot->st = st;
	}
	return st;
}

MYSQL_STMT *
mq__prepare(struct mq_conn *c, const char *tmpl)
{
	return mq__prepare_keyed(c, tmpl, 0, tmpl);
}

void
mq__release(struct mq_conn *c, MYSQL_STMT *st)
{
	size_t i;

	for (i = 0; i < MQ_STMT_CACHE && c->cache[i].st != st; i++)
		;
	/* unread rows go; a kept statement's plan stays, and the next
	 * execute binds afresh (no COM_STMT_RESET: that would cost the
	 * round trip the cache saves) */
	if (i < MQ_STMT_CACHE)
		mysql_stmt_free_result(st);
	else
		close_statement(c, st);
	/* a read's rows are read: the status its last answer carried says
	 * whether it ran in the transaction (tx_gone: its rows are then
	 * not used, nothing more runs in it, nor is it committed) */
	(void)tx_gone(c);
}

void
mq__forget_statements(struct mq_conn *c)
{
	size_t i;

	for (i = 0; i < MQ_STMT_CACHE; i++)
		if (c->cache[i].st) {
			close_statement(c, c->cache[i].st);
			c->cache[i].st = NULL;
		}
}

/* Whether st changes rows: it returns no result set (known once
 * prepared), or its text, not yet sent, is not a SELECT. */
static int
writes(struct mq_conn *c, MYSQL_STMT *st)
{
	struct mq_unprepared *u = unprepared(c, st);

	if (u && u->deferred)
		return strncmp(u->sql, "SELECT", 6) != 0;
	return mysql_stmt_field_count(st) == 0;
}

enum mq_status
mq__execute(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *params,
    const char *what)
{
	struct mq_unprepared *u = unprepared(c, st);
	enum mq_status rc = MQ_OK;
	int write = writes(c, st);

	if (tx_gone(c))
		return tx_lost_error(c, what);
	/* a read run before: its plan made again (see is_read). In a
	 * transaction on a Galera node a statement is not sent with its
	 * text: if a brute-force abort fails the prepare half before it
	 * runs, the execution half, which names "the statement prepared
	 * last", runs the one prepared before it, outside the transaction,
	 * and the server forgets that one (error 1243 at its next use) */
	if (u && ((u->read && u->ran && !u->deferred) ||
	    (u->deferred && c->in_tx && c->galera))) {
#if defined(HAVE_EXECUTE_DIRECT)
		/* the count of values set for a deferred run would keep
		 * the library from making room for them */
		(void)prebind(st, NULL);
#endif
		if (prepare_text(c, st, u->sql) != 0) {
			rc = mq__dberr(c, st, what);
#if defined(HAVE_EXECUTE_DIRECT)
			if (u->deferred)	/* still: sent with its next run */
				(void)prebind(st, u->sql);
#endif
			return rc;
		}
		if (u->read)
			u->deferred = 0;
		else
			forget_text(u);
		u = unprepared(c, st);
	}
	/* a write runs only once the server has said, since the last
	 * prepare, that the transaction is open (its ping's answer) */
	if (write && c->tx_unsure && c->in_tx) {
		if (mysql_ping(c->db) != 0)
			return mq__dberr(c, NULL, what);
		c->tx_unsure = 0;
		if (tx_gone(c))
			return tx_lost_error(c, what);
	}
	if (params && mysql_stmt_bind_param(st, params) != 0)
		return mq__dberr(c, st, what);
	/* outside a transaction a write commits by itself: losing its
	 * answer leaves the outcome unknown (mq__dberr) */
	c->may_commit = !c->in_tx && write;
#if defined(HAVE_EXECUTE_DIRECT)
	if (u && u->deferred) {
		enum mysql_stmt_state state = MYSQL_STMT_INITTED;
		int failed = mariadb_stmt_execute_direct(st, u->sql,
		    strlen(u->sql)) != 0;

		/* prepared even if the execution failed (a deadlock): the
		 * next run is a plain execute (a read's, prepared again);
		 * else the text is sent again */
		if (!failed || (mysql_stmt_attr_get(st, STMT_ATTR_STATE,
		    &state) == 0 && state >= MYSQL_STMT_PREPARED)) {
			if (u->read) {
				u->deferred = 0;
				u->ran = 1;
			} else {
				forget_text(u);
			}
		}
		if (failed)
			rc = mq__dberr(c, st, what);
		c->may_commit = 0;
		return rc;
	}
#endif
	/* a run that failed counts as a run: the server plans the next
	 * one as a second all the same (a retry after 1205, 1213, 1317) */
	if (mysql_stmt_execute(st) != 0)
		rc = mq__dberr(c, st, what);
	if (u)
		u->ran = 1;
	c->may_commit = 0;
	if (rc == MQ_OK && write && tx_gone(c))
		rc = tx_lost_error(c, what);
	return rc;
}

static void
bind_int(MYSQL_BIND *b, enum enum_field_types t, void *v, int is_unsigned)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = t;
	b->buffer = v;
	b->is_unsigned = is_unsigned;
}

void
mq__bind_u64(MYSQL_BIND *b, uint64_t *v)
{
	bind_int(b, MYSQL_TYPE_LONGLONG, v, 1);
}

void
mq__bind_i64(MYSQL_BIND *b, int64_t *v)
{
	bind_int(b, MYSQL_TYPE_LONGLONG, v, 0);
}

void
mq__bind_u32(MYSQL_BIND *b, uint32_t *v)
{
	bind_int(b, MYSQL_TYPE_LONG, v, 1);
}

void
mq__bind_i32(MYSQL_BIND *b, int32_t *v)
{
	bind_int(b, MYSQL_TYPE_LONG, v, 0);
}

void
mq__bind_str(MYSQL_BIND *b, const char *s, unsigned long *len)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = (void *)s;
	*len = strlen(s);
	b->buffer_length = *len;
	b->length = len;
}

void
mq__bind_blob(MYSQL_BIND *b, const void *p, unsigned long *len)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_BLOB;
	/* the client library sends a NULL buffer as SQL NULL: bytes with
	 * none yet (a batch of empty payloads) are the empty string */
	b->buffer = p ? (void *)p : (void *)"";
	b->buffer_length = *len;
	b->length = len;
}

/* A name read from the table, bound back byte for byte: another
 * program's row may hold bytes the column's character set (ascii) does
 * not, which the session reads unconverted (character_set_results is
 * binary) and a text parameter would not match (utf8mb4 against ascii:
 * error 1267). A binary one takes the column's collation. */
void
mq__bind_name(MYSQL_BIND *b, const char *name, unsigned long *len)
{
	mq__bind_blob(b, name, len);
}

void
mq__bind_null(MYSQL_BIND *b)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_NULL;
}

void
mq__bind_text_out(MYSQL_BIND *b, void *buf, size_t size, unsigned long *len,
    mq__bool *null)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = buf;
	b->buffer_length = size;
	b->length = len;
	b->is_null = null;
}

int64_t
mq_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
mq__backoff(unsigned attempt)
{
	/* 5 ms doubling, capped near 0.5 s, times a random factor in
	 * [0.5, 1.5): two deadlocked peers must not retry in step */
	long base = 5000000L << (attempt < 7 ? attempt : 7);
	long ns = base / 2 + (long)((double)rand() / RAND_MAX * (double)base);
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL);
}

/* The connection's socket (MySQL's client has no mysql_get_socket; its
 * NET has the fd). */
int
mq__socket(const struct mq_conn *c)
{
#if defined(MARIADB_PACKAGE_VERSION)
	return (int)mysql_get_socket(c->db);
#else
	return (int)c->db->net.fd;
#endif
}

void
mq__cut(struct mq_conn *c)
{
	int fd = mq__socket(c);

	if (fd >= 0)
		(void)shutdown(fd, SHUT_RDWR);
}

/* Rolls the open transaction back: 1 if it surely is. A ROLLBACK that
 * fails on a live connection (a late wakeup's KILL QUERY hit it, as it
 * did the COMMIT before it) leaves the transaction open, and the next
 * START TRANSACTION would commit it: a claim whose jobs nobody reads.
 * Sent once more; failing again, the connection is cut (the server
 * rolls back what a lost connection left open), and whatever uses it
 * next fails as lost. */
static int
roll_back(struct mq_conn *c)
{
	if (mysql_rollback(c->db) == 0 || mysql_rollback(c->db) == 0)
		return 1;
	mq__cut(c);
	return 0;
}

int
mq__retry_again(struct mq_conn *c, unsigned attempt, int64_t t0)
{
	int64_t now;

	if (attempt + 1 >= MQ_RETRIES || c->one_try)
		return 0;
	/* a lock wait each time (50 s at most): not for longer in all
	 * than the client waits for one answer, nor past the caller's
	 * deadline (pop --wait D: D plus 10 s) */
	now = mq_now_us();
	if (c->read_timeout_us && now - t0 >= c->read_timeout_us)
		return 0;
	if (c->retry_until_us && now >= c->retry_until_us)
		return 0;
	return !(c->stop_pending && c->stop_pending());
}

void
mq_set_stop_check(struct mq_conn *c, int (*pending)(void))
{
	c->stop_pending = pending;
}

enum mq_status
mq__in_tx(struct mq_conn *c, mq__txfn fn, void *ctx)
{
	enum mq_status st;
	unsigned attempt;
	int64_t t0 = mq_now_us();

	for (attempt = 0;; attempt++) {
		/* interrupted (1317: a late wakeup's KILL QUERY), it did
		 * nothing (no transaction is open here): sent once more */
		if (mysql_real_query(c->db, "START TRANSACTION", 17) != 0 &&
		    (mysql_errno(c->db) != 1317 ||
		    mysql_real_query(c->db, "START TRANSACTION", 17) != 0))
			return mq__dberr(c, NULL, "cannot start transaction");
		/* a connection lost before the COMMIT rolls back */
		mq__tx_begun(c);
		st = fn(c, ctx);
		if ((st == MQ_OK || st == MQ_EMPTY) &&
		    mq__tx_open(c) != MQ_OK)
			st = MQ_ERETRY;
		c->in_tx = 0;
		if (st == MQ_OK || st == MQ_EMPTY) {
			c->may_commit = 1;
			if (mysql_commit(c->db) == 0) {
				c->may_commit = 0;
				return st;
			}
			st = mq__dberr(c, NULL, "cannot commit");
			c->may_commit = 0;
			if (st == MQ_EUNKNOWN)
				return st;
		}
		if (!roll_back(c) || st != MQ_ERETRY ||
		    !mq__retry_again(c, attempt, t0))
			return st;
		mq__backoff(attempt);
	}
}

enum mq_status
mq__execute_retry(struct mq_conn *c, MYSQL_STMT *st, MYSQL_BIND *params,
    const char *what)
{
	enum mq_status rc;
	unsigned attempt;
	int64_t t0 = mq_now_us();

	for (attempt = 0;; attempt++) {
		rc = mq__execute(c, st, params, what);
		if (rc != MQ_ERETRY || !mq__retry_again(c, attempt, t0))
			return rc;
		mq__backoff(attempt);
	}
}
