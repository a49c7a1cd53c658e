/*
 * conn.c: connecting the way the mysql client does (option files, then
 * the caller's settings), and what every session needs set up front.
 */
#include <errno.h>
#include <fcntl.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * What every session sets, whatever the server's globals, the account's
 * init_connect or an option file did to it: the guarantees of mq(1)
 * rest on these, not on the server's defaults. Sent as the first
 * statement of the schema probe (schema.c), so it costs no round trip.
 *  - ROLLBACK (not chained, not releasing whatever completion_type
 *    says): an init_connect may have opened a transaction; left open,
 *    mq's "autocommitted" writes would vanish at disconnect.
 *  - autocommit=1, completion_type=0 (a COMMIT must not chain or
 *    disconnect), read-write transactions.
 *  - READ COMMITTED: claims and batch reads take no gap locks.
 *  - results unconverted (character_set_results binary): a queue name
 *    another program wrote with bytes outside the column's ascii reads
 *    as '?' once converted, and counts nothing when bound back (stats
 *    binds it as bytes: mq__bind_name).
 *  - sql_mode: the server's default one, fixed: ORACLE, ANSI, ANSI_QUOTES,
 *    NO_BACKSLASH_ESCAPES, PAD_CHAR_TO_FULL_LENGTH change what mq's SQL
 *    and SHOW CREATE TABLE mean.
 *  - time_zone UTC: NOW() and the column defaults agree with the
 *    UTC_TIMESTAMP mq writes.
 *  - limits below the client's read timeout (MQ_READ_TIMEOUT, or the
 *    caller's), so the server always answers first: at the default, a
 *    row lock wait ends in 1205 after 50 s, a metadata lock wait after
 *    60 s, any statement after 240 s (MariaDB: every statement; MySQL:
 *    SELECTs only); session_for() scales them to a shorter one.
 *    A lower global limit (max_statement_time=1) would kill mq's waits.
 *  - wait_timeout and net_*_timeout at their defaults: a server that
 *    drops idle or slow connections early cuts mq work's connections.
 *  - sql_select_limit, max_join_size, sql_safe_updates: no silent cut of
 *    a result, no refused statement.
 *  - timestamp and insert_id as the server keeps them: an init_connect
 *    that fixes the clock (SET timestamp) or the next id would move every
 *    time mq writes, or collide a push.
 *  - div_precision_increment at its default 4 (mq's own division is
 *    DIV, exact at any setting: ack.c).
 *  - optimizer_switch and (MariaDB) the idle transaction timeouts at
 *    their defaults: the claim's plan, and a transaction's connection.
 *  - unique_checks: the dedup key holds.
 *  - check_constraint_checks off (MariaDB): the schema's CHECKs are for
 *    other programs' rows; mq's own writes are valid by construction,
 *    and a row that got in without them (written with the checks off)
 *    must not make the write that claims, reaps or finishes it fail,
 *    stalling its queue: mq handles it as a server without CHECKs.
 */
#define MQ_READ_TIMEOUT 300		/* seconds, the client's */
#define MQ_LONG_READ_TIMEOUT 86400	/* mq init: DDL on big tables */
#define MQ_MAX_PACKET (1UL << 30)	/* bytes: max_allowed_packet's top */
#define SESSION_COMMON \
    "ROLLBACK AND NO CHAIN NO RELEASE;SET SESSION autocommit=1," \
    " SESSION completion_type=0," \
    " SESSION sql_mode='STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO," \
    "NO_ENGINE_SUBSTITUTION', SESSION time_zone='+00:00'," \
    " SESSION innodb_lock_wait_timeout=%u, SESSION lock_wait_timeout=%u," \
    " SESSION wait_timeout=28800, SESSION net_read_timeout=30," \
    " SESSION net_write_timeout=60," \
    " SESSION sql_select_limit=18446744073709551615," \
    " SESSION max_join_size=18446744073709551615, SESSION sql_safe_updates=0," \
    " SESSION unique_checks=1, SESSION sql_auto_is_null=0," \
    " SESSION sql_quote_show_create=1, NAMES utf8mb4," \
    " SESSION character_set_results=binary," \
    " SESSION timestamp=DEFAULT, SESSION insert_id=0," \
    " SESSION div_precision_increment=4, SESSION optimizer_switch='default',"
/* MariaDB before 11.1 knows the transaction variables by their old
 * names only; MySQL 8.0 by the new ones only */
#define MARIADB_TX \
    " SESSION tx_isolation='READ-COMMITTED', SESSION tx_read_only=0,"
#define STANDARD_TX \
    " SESSION transaction_isolation='READ-COMMITTED'," \
    " SESSION transaction_read_only=0,"
#define MARIADB_LIMITS \
    " SESSION idle_transaction_timeout=0," \
    " SESSION idle_readonly_transaction_timeout=0," \
    " SESSION idle_write_transaction_timeout=0," \
    " SESSION check_constraint_checks=0, SESSION max_statement_time=%u"
#define MYSQL_LIMITS " SESSION max_execution_time=%u"

static int
server_is_mariadb(MYSQL *db)
{
	const char *info = mysql_get_server_info(db);

	return info && strstr(info, "MariaDB") != NULL;
}

/* the longest text, with room for its three numbers */
_Static_assert(sizeof SESSION_COMMON MARIADB_TX MARIADB_LIMITS + 3 * 20 <
    sizeof ((struct mq_conn *)0)->session, "session text fits");

static unsigned
clamp(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The session's statement for a client that waits read_timeout seconds
 * for an answer: row lock waits a sixth of it (50 s at most), metadata
 * lock waits a fifth (60 s at most), statements four fifths (240 s at
 * the default 300 s; none for long_statements). */
static void
session_for(struct mq_conn *c, unsigned read_timeout, int long_statements)
{
	unsigned lock = clamp(read_timeout / 6, 1, 50);
	unsigned mdl = clamp(read_timeout / 5, 1, 60);
	unsigned stmt = long_statements ? 0 : clamp(read_timeout * 4 / 5, 1,
	    read_timeout);

	if (!server_is_mariadb(c->db))
		snprintf(c->session, sizeof c->session, SESSION_COMMON
		    STANDARD_TX MYSQL_LIMITS, lock, mdl, stmt * 1000);
	else if (mysql_get_server_version(c->db) >= 110100)
		snprintf(c->session, sizeof c->session, SESSION_COMMON
		    STANDARD_TX MARIADB_LIMITS, lock, mdl, stmt);
	else
		snprintf(c->session, sizeof c->session, SESSION_COMMON
		    MARIADB_TX MARIADB_LIMITS, lock, mdl, stmt);
}

const char *
mq__session_sql(const struct mq_conn *c)
{
	return c->session;
}

/* READ COMMITTED for a session that has not been through the probe
 * (which sets it with the rest). */
static const char sql_read_committed[] =
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

enum mq_status
mq__read_committed(struct mq_conn *c)
{
	if (c->read_committed)
		return MQ_OK;
	if (mysql_real_query(c->db, sql_read_committed,
	    sizeof sql_read_committed - 1) != 0)
		return mq__dberr(c, NULL, "cannot set the isolation level");
	c->read_committed = 1;
	return MQ_OK;
}

/* The explicit setting, else the environment's; NULL leaves it to the
 * option files. */
static const char *
pick(const char *explicit_value, const char *env_value)
{
	return explicit_value ? explicit_value : env_value;
}

static int
server_has_skip_locked(MYSQL *db)
{
	unsigned long v = mysql_get_server_version(db);

	if (server_is_mariadb(db))
		return v >= 100600;
	return v >= 80001;
}

/* The TLS settings the caller gave; any of them makes the library ask the
 * server for TLS. It reads the option files as it connects, after these:
 * a file's ssl-* setting wins (mq(1) says so). */
static void
set_tls(MYSQL *db, const struct mq_connopts *o)
{
	if (o->ssl_ca)
		mysql_options(db, MYSQL_OPT_SSL_CA, o->ssl_ca);
	if (o->ssl_capath)
		mysql_options(db, MYSQL_OPT_SSL_CAPATH, o->ssl_capath);
	if (o->ssl_cert)
		mysql_options(db, MYSQL_OPT_SSL_CERT, o->ssl_cert);
	if (o->ssl_key)
		mysql_options(db, MYSQL_OPT_SSL_KEY, o->ssl_key);
	if (o->ssl_cipher)
		mysql_options(db, MYSQL_OPT_SSL_CIPHER, o->ssl_cipher);
	if (o->ssl_verify_server_cert) {
#if defined(MARIADB_PACKAGE_VERSION)
		mq__bool on = 1;

		mysql_options(db, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
#else
		/* MySQL 8.0's client: the option became an SSL mode */
		unsigned mode = SSL_MODE_VERIFY_IDENTITY;

		mysql_options(db, MYSQL_OPT_SSL_MODE, &mode);
#endif
	}
}

/* The largest option file taken (a piped one too: cmd/cli/settings.c): an
 * option file is a few lines; a larger one is a mistake (a log, a dump)
 * that the client library and the TLS check would read line by line,
 * for as long as it takes. */
#define OPTION_FILE_MAX (1L << 20)

/* Why the option file cannot be used, or NULL. A regular file of 1 MiB
 * at most, a pipe (--defaults-file <(...), /dev/stdin) or /dev/null (no
 * options): the client library would read another device (/dev/zero) for
 * ever, and pass over a directory in silence. */
static const char *
option_file_unusable(const char *path)
{
	struct stat st, null;

	if (stat(path, &st) != 0)
		return strerror(errno);
	if (S_ISDIR(st.st_mode))
		return strerror(EISDIR);
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) &&
	    !(stat("/dev/null", &null) == 0 && st.st_dev == null.st_dev &&
	    st.st_ino == null.st_ino))
		return "not a file or a pipe";
	if (S_ISREG(st.st_mode) && st.st_size > OPTION_FILE_MAX)
		return "larger than 1 MiB";
	if (access(path, R_OK) != 0)
		return strerror(errno);
	return NULL;
}

/* Why the connection was refused. The server's words for 1040 ("Too
 * many connections") name neither the setting nor what holds the
 * connections, and the limit's value cannot be read without one.
 * (1203 and 1226 name their setting already.) */
static void
connect_error(struct mq_error *e, MYSQL *db)
{
	mq__error_from_db(e, db, "cannot connect");
	if (e->db_errno == ER_CON_COUNT_ERROR)
		snprintf(e->msg, sizeof e->msg, "cannot connect: the server "
		    "has no connection left (max_connections reached; each "
		    "parked waiter and each mq work holds connections: see "
		    "mq(1) CONNECTIONS)");
}

/* A handle with mq's options, connected to host and port (NULL, 0: the
 * caller's settings, else the option files'): 0, or -1 with *err (the
 * handle closed, c->db NULL; the host an option file gave, if any, in
 * file_host: the client library read it as it tried). */
static int
open_db(struct mq_conn *c, const struct mq_connopts *o, const char *host,
    unsigned port, unsigned timeout, unsigned io_timeout,
    struct mq_error *err, char *file_host, size_t size)
{
	if ((c->db = mysql_init(NULL)) == NULL) {
		err->status = MQ_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return -1;
	}
	if (o->defaults_file)
		mysql_options(c->db, MYSQL_READ_DEFAULT_FILE, o->defaults_file);
	mysql_options(c->db, MYSQL_READ_DEFAULT_GROUP, "mq");
	mysql_options(c->db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(c->db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	/* a server that stops answering (not one that closes) must not
	 * hang a worker for ever; the session's limits make the server
	 * answer first (session_for) */
	mysql_options(c->db, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
	mysql_options(c->db, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
	set_tls(c->db, o);
#if defined(MARIADB_PACKAGE_VERSION)
	if (o->nonblock)
		mysql_options(c->db, MYSQL_OPT_NONBLOCK, 0);
#endif

	/* several statements in one text query: the schema probe sends its
	 * reads (and the isolation level) in one round trip. Text queries
	 * here are fixed, with validated names only, never values. The
	 * options are kept when it fails (the library drops them), for the
	 * host an option file gave (file_hosts). */
	if (!mysql_real_connect(c->db, host, pick(o->user, o->env_user), NULL,
	    pick(o->database, o->env_database),
	    port ? port : o->port ? o->port : o->env_port,
	    pick(o->socket, o->env_socket), CLIENT_MULTI_STATEMENTS |
	    CLIENT_REMEMBER_OPTIONS)) {
		connect_error(err, c->db);
		/* 1300: a database name that is not UTF-8 is no database
		 * (78, as 1049 and 1102), not an unreachable server */
		if (err->db_errno == ER_INVALID_CHARACTER_STRING)
			err->status = MQ_ECONFIG;
		else if (err->status == MQ_EDB)
			err->status = MQ_EUNAVAIL;
		if (file_host && size)
			snprintf(file_host, size, "%s", host == NULL &&
			    c->db->options.host ? c->db->options.host : "");
		mysql_close(c->db);
		c->db = NULL;
		return -1;
	}
	if (mq__tls_unpoliced(c->db)) {
		err->status = MQ_ECONFIG;
		snprintf(err->msg, sizeof err->msg, "the connection uses TLS, "
		    "turned on by a setting mq did not see (it started "
		    "OpenSSL without the system's TLS policy): give the "
		    "ssl settings to mq (--ssl-ca, ...) or in the option "
		    "files' [client] or [mq] group");
		mysql_close(c->db);
		c->db = NULL;
		return -1;
	}
	return 0;
}

/* Appends "; what" to a list connection's message (bounded). */
static void
add_tried(char *msg, size_t size, const char *host, unsigned port,
    const char *what)
{
	size_t n = strlen(msg);

	if (n + 8 < size)
		snprintf(msg + n, size - n, "%s%s%s%.0u: %s", n ? "; " : "",
		    host, port ? ":" : "", port, what);
}

/* A list of hosts (hosts.c): each in turn until one connects and is
 * ready (a Galera node Synced in the primary component); from the
 * entry from on (an option file's list: the client library tried the
 * entries before it, took the first that answered and found it not
 * ready, named in skip: each is connected to once). 0, or -1 with *err
 * naming each. */
static int
open_list(struct mq_conn *c, const struct mq_connopts *o, const char *list,
    size_t from, const char *skip, unsigned timeout, unsigned io_timeout,
    struct mq_error *err)
{
	char host[256], why[160], tried[sizeof err->msg];
	struct mq_error e, last_e, refused;
	enum mq_status st;
	unsigned port;
	size_t i, k, n, first;

	*tried = '\0';
	memset(&last_e, 0, sizeof last_e);
	last_e.status = MQ_EUNAVAIL;
	memset(&refused, 0, sizeof refused);
	if (skip)
		snprintf(tried, sizeof tried, "%s", skip);
	for (n = 0; (st = mq__host_entry(list, n, host, sizeof host, &port,
	    err)) == MQ_OK; n++)
		;
	if (st == MQ_ECONFIG)
		return -1;
	/* --host-order random: from an entry drawn by the process id on,
	 * round the list: the processes spread over the nodes, and the
	 * connections of one process (mq work's claims and heartbeats) go
	 * to the same node, which has applied their own claims */
	first = o->host_random && n > 1 ? (size_t)getpid() % n : 0;
	for (k = 0; k < n; k++) {
		i = (first + k) % n;
		if (i < from)
			continue;
		(void)mq__host_entry(list, i, host, sizeof host, &port, err);
		memset(&e, 0, sizeof e);
		if (open_db(c, o, host, port, timeout, io_timeout, &e, NULL,
		    0) != 0) {
			add_tried(tried, sizeof tried, host, port, e.msg);
			last_e = e;
			/* a server that answered and refused (the account,
			 * the database: 77, 78) says more than a node that is
			 * down, whatever their order in the list */
			if (e.status != MQ_EUNAVAIL && refused.status == 0)
				refused = e;
			continue;
		}
		if (mq__node_ready(c->db, why, sizeof why)) {
			c->hosts = (unsigned)n;
			return 0;
		}
		add_tried(tried, sizeof tried, host, port, why);
		mysql_close(c->db);
		c->db = NULL;
		memset(&last_e, 0, sizeof last_e);
		last_e.status = MQ_EUNAVAIL;
	}
	/* the status and the server's code of the first refusal, else of
	 * the last attempt */
	*err = refused.status ? refused : last_e;
	snprintf(err->msg, sizeof err->msg, "cannot connect to any host of "
	    "the list: %.460s", tried);
	return -1;
}

/* The index after the entry of list the client library connected to
 * (host, port: an entry without a port took the default), 0 if none
 * matches. */
static size_t
list_after(const char *list, const char *host, unsigned port)
{
	char h[256];
	unsigned p;
	size_t i;
	struct mq_error e;

	for (i = 0; host && mq__host_entry(list, i, h, sizeof h, &p, &e) ==
	    MQ_OK; i++)
		if (strcmp(h, host) == 0 && (p == port || p == 0))
			return i + 1;
	return 0;
}

/* A host as --host and MQ_HOST give it: a list (open_list), one entry
 * with a port (HOST:PORT, [ADDRESS]:PORT: as a list's, but used ready
 * or not, as a plain host is), or a plain host. */
static int
open_spec(struct mq_conn *c, const struct mq_connopts *o, const char *spec,
    unsigned timeout, unsigned io_timeout, struct mq_error *err)
{
	char h[256];
	unsigned port;

	if (mq__host_list(spec))
		return open_list(c, o, spec, 0, NULL, timeout, io_timeout,
		    err);
	if (strchr(spec, ':') || *spec == '[')
		return mq__host_entry(spec, 0, h, sizeof h, &port, err) ==
		    MQ_OK ? open_db(c, o, h, port, timeout, io_timeout, err,
		    NULL, 0) : -1;
	return open_db(c, o, spec, 0, timeout, io_timeout, err, NULL, 0);
}

/* The host an option file gave (spec, "" if none), after the client
 * library's own try (rc: 0, connected): taken as --host takes it. The
 * library connects to a list's first entry that answers, passing over
 * entries that are not valid, and takes a single HOST:PORT for a host
 * name; so a list is checked (78), spread (--host-order random), its
 * node passed over when not ready (from the entry after it: each is
 * connected to once) or, none answering, tried again entry by entry
 * for the reasons and statuses; a single entry with a port is parsed. */
static int
file_hosts(struct mq_conn *c, const struct mq_connopts *o, int rc,
    const char *spec, unsigned timeout, unsigned io_timeout,
    struct mq_error *err)
{
	char h[256], skip[300], state[160];
	unsigned port;
	size_t n;
	enum mq_status st;

	if (mq__host_list(spec)) {
		for (n = 0; (st = mq__host_entry(spec, n, h, sizeof h, &port,
		    err)) == MQ_OK; n++)
			;
		if (st == MQ_ECONFIG) {
			if (rc == 0) {
				mysql_close(c->db);
				c->db = NULL;
			}
			return -1;
		}
		/* random: the library's node kept when it is the one drawn
		 * (open_list draws the same) */
		if (rc == 0 && o->host_random && n > 1 &&
		    list_after(spec, c->db->host, c->db->port) !=
		    (size_t)getpid() % n + 1) {
			mysql_close(c->db);
			c->db = NULL;
			rc = -1;
		}
		/* none answered the library: each again for its reason,
		 * with a short wait (the library waited its full timeout on
		 * each already) */
		if (rc != 0) {
			memset(err, 0, sizeof *err);
			return open_list(c, o, spec, 0, NULL, timeout < 2 ?
			    timeout : 2, io_timeout, err);
		}
		if (mq__node_ready(c->db, state, sizeof state)) {
			c->hosts = (unsigned)n;
			return 0;
		}
		snprintf(skip, sizeof skip, "%.100s: %s",
		    c->db->host ? c->db->host : "?", state);
		n = list_after(spec, c->db->host, c->db->port);
		mysql_close(c->db);
		c->db = NULL;
		return open_list(c, o, spec, n, skip, timeout, io_timeout, err);
	}
	if (rc != 0 && (strchr(spec, ':') || *spec == '[')) {
		memset(err, 0, sizeof *err);
		return open_spec(c, o, spec, timeout, io_timeout, err);
	}
	return rc;
}

struct mq_conn *
mq_connect(const struct mq_connopts *o, struct mq_error *err)
{
	struct mq_conn *c;
	const char *why, *host = pick(o->host, o->env_host);
	unsigned timeout = 10, io_timeout = o->long_statements ?
	    MQ_LONG_READ_TIMEOUT : MQ_READ_TIMEOUT;
	char hostname[200], file_host[1024] = "";
	int rc;

	memset(err, 0, sizeof *err);
	if (o->connect_timeout_s)
		timeout = o->connect_timeout_s;
	if (o->read_timeout_s)
		io_timeout = o->read_timeout_s;
	if (o->defaults_file && (why = option_file_unusable(o->defaults_file))) {
		err->status = MQ_ECONFIG;
		snprintf(err->msg, sizeof err->msg,
		    "cannot read option file '%s': %s", o->defaults_file, why);
		return NULL;
	}
	mq__client_init(o);
	if ((c = calloc(1, sizeof *c)) == NULL) {
		err->status = MQ_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return NULL;
	}
	if (host) {
		rc = open_spec(c, o, host, timeout, io_timeout, err);
	} else {
		*file_host = '\0';
		rc = open_db(c, o, NULL, 0, timeout, io_timeout, err,
		    file_host, sizeof file_host);
		if (rc == 0 && c->db->options.host)
			snprintf(file_host, sizeof file_host, "%s",
			    c->db->options.host);
		/* a list longer than this is not one mq takes (cut, it
		 * would be another list) */
		if (strlen(file_host) + 1 >= sizeof file_host) {
			if (rc == 0) {
				mysql_close(c->db);
				c->db = NULL;
			}
			err->status = MQ_ECONFIG;
			snprintf(err->msg, sizeof err->msg, "the option files' "
			    "host= is longer than %zu bytes",
			    sizeof file_host - 2);
			rc = -1;
		} else {
			rc = file_hosts(c, o, rc, file_host, timeout,
			    io_timeout, err);
		}
	}
	if (rc != 0) {
		free(c);
		return NULL;
	}
	if (c->hosts == 0)
		c->hosts = 1;
	/* another node of the list reads the claims made here (confirm.c) */
	c->opts = *o;
	if (mq__host_list(host ? host : file_host))
		snprintf(c->list, sizeof c->list, "%s", host ? host :
		    file_host);
	/* the session exists by now: a server that started after this
	 * has not got it (lease.c, mq_release_orphan) */
	c->connected_us = mq_now_us();
	/* programs a command starts (mq work's jobs) must not hold it */
	fcntl(mq__socket(c), F_SETFD, FD_CLOEXEC);
	/* an option file's max-allowed-packet bounds what this client takes
	 * (it is read as it connects, after mq's options): set below a
	 * job's size, that job's claim commits and its row never arrives,
	 * again on every claim, stalling the queue. Any packet the server
	 * may send is taken (1 GiB: the protocol's and server's maximum). */
	if (c->db->net.max_packet_size < MQ_MAX_PACKET)
		c->db->net.max_packet_size = MQ_MAX_PACKET;
	/* jitter for deadlock retries: peers must not draw the same */
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	c->skip_locked = !o->no_skip_locked && server_has_skip_locked(c->db);
	c->returning = server_is_mariadb(c->db) &&
	    mysql_get_server_version(c->db) >= 100500;
	c->autoinc_step = 1;
	c->read_timeout_us = (int64_t)io_timeout * 1000000;
	session_for(c, io_timeout, o->long_statements);
	/* what the session must be in, whatever an init_connect says
	 * (schema.c): the caller's, else an option file's */
	snprintf(c->want_db, sizeof c->want_db, "%s",
	    pick(o->database, o->env_database) ? pick(o->database,
	    o->env_database) : c->db->options.db ? c->db->options.db : "");
	if (gethostname(hostname, sizeof hostname) != 0)
		snprintf(hostname, sizeof hostname, "unknown");
	hostname[sizeof hostname - 1] = '\0';
	/* leased_by is ASCII: a host name in UTF-8 must not make every
	 * claim fail (1366) */
	for (char *h = hostname; *h; h++)
		if (*h < 0x21 || *h > 0x7e)
			*h = '?';
	snprintf(c->leased_by, sizeof c->leased_by, "%s:%ld", hostname,
	    (long)getpid());
	return c;
}

unsigned
mq_conn_hosts(const struct mq_conn *c)
{
	return c->hosts;
}

void
mq_thread_init(void)
{
	mysql_thread_init();
}

void
mq_thread_end(void)
{
	mysql_thread_end();
}

void
mq_close(struct mq_conn *c)
{
	if (c == NULL)
		return;
	mq_close(c->confirm);
	mq__forget_statements(c);
	mysql_close(c->db);
	free(c);
}

enum mq_claim
mq__server_claim(const struct mq_conn *c)
{
	return c->skip_locked ? MQ_CLAIM_SKIP_LOCKED : MQ_CLAIM_UPDATE;
}

size_t
mq_max_payload(const struct mq_conn *c)
{
	/* room for the packet header and the statement's other values */
	return c->max_packet > 4096 ? c->max_packet - 4096 : 0;
}
