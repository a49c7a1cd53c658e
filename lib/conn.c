/*
 * conn.c: connecting the way the mysql client does (option files, then
 * the caller's settings), and what every session needs set up front.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* READ COMMITTED: claims and batch reads take no gap locks. The schema
 * probe sets it in the round trip it makes anyway (schema.c); this is for
 * a session that has not been through it. (Times need no session
 * setting: every statement uses UTC_TIMESTAMP.) */
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
	const char *info = mysql_get_server_info(db);

	if (info && strstr(info, "MariaDB"))
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
		my_bool on = 1;

		mysql_options(db, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
#else
		/* MySQL 8.0's client: the option became an SSL mode */
		unsigned mode = SSL_MODE_VERIFY_IDENTITY;

		mysql_options(db, MYSQL_OPT_SSL_MODE, &mode);
#endif
	}
}

struct mq_conn *
mq_connect(const struct mq_connopts *o, struct mq_error *err)
{
	struct mq_conn *c;
	unsigned timeout = 10, io_timeout = 300;
	char host[200];

	memset(err, 0, sizeof *err);
	if (o->connect_timeout_s)
		timeout = o->connect_timeout_s;
	if (o->read_timeout_s)
		io_timeout = o->read_timeout_s;
	if (o->defaults_file && access(o->defaults_file, R_OK) != 0) {
		err->status = MQ_ECONFIG;
		snprintf(err->msg, sizeof err->msg,
		    "cannot read option file '%s': %s", o->defaults_file,
		    strerror(errno));
		return NULL;
	}
	mq__client_init(o);
	c = calloc(1, sizeof *c);
	if (c == NULL || (c->db = mysql_init(NULL)) == NULL) {
		free(c);
		err->status = MQ_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return NULL;
	}
	if (o->defaults_file)
		mysql_options(c->db, MYSQL_READ_DEFAULT_FILE, o->defaults_file);
	mysql_options(c->db, MYSQL_READ_DEFAULT_GROUP, "mq");
	mysql_options(c->db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(c->db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	/* a server that stops answering (not one that closes) must not
	 * hang a worker for ever; statements here take far less */
	mysql_options(c->db, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
	mysql_options(c->db, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
	set_tls(c->db, o);
#if defined(MARIADB_PACKAGE_VERSION)
	if (o->nonblock)
		mysql_options(c->db, MYSQL_OPT_NONBLOCK, 0);
#endif

	/* several statements in one text query: the schema probe sends its
	 * reads (and the isolation level) in one round trip. Text queries
	 * here are fixed, with validated names only, never values. */
	if (!mysql_real_connect(c->db, pick(o->host, o->env_host),
	    pick(o->user, o->env_user), NULL,
	    pick(o->database, o->env_database),
	    o->port ? o->port : o->env_port,
	    pick(o->socket, o->env_socket), CLIENT_MULTI_STATEMENTS)) {
		mq__error_from_db(err, c->db, "cannot connect");
		if (err->status == MQ_EDB)
			err->status = MQ_EUNAVAIL;
		mysql_close(c->db);
		free(c);
		return NULL;
	}
	/* programs a command starts (mq work's jobs) must not hold it */
	fcntl((int)mysql_get_socket(c->db), F_SETFD, FD_CLOEXEC);
	/* jitter for deadlock retries: peers must not draw the same */
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	c->skip_locked = !o->no_skip_locked && server_has_skip_locked(c->db);
	c->autoinc_step = 1;
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	snprintf(c->leased_by, sizeof c->leased_by, "%s:%ld", host,
	    (long)getpid());
	return c;
}

void
mq_close(struct mq_conn *c)
{
	if (c == NULL)
		return;
	mq__forget_statements(c);
	mysql_close(c->db);
	free(c);
}

enum mq_claim
mq_server_claim(const struct mq_conn *c)
{
	return c->skip_locked ? MQ_CLAIM_SKIP_LOCKED : MQ_CLAIM_UPDATE;
}

size_t
mq_max_payload(const struct mq_conn *c)
{
	/* room for the packet header and the statement's other values */
	return c->max_packet > 4096 ? c->max_packet - 4096 : 0;
}
