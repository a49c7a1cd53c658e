/*
 * client_init.c: starting the client library once per process, at the
 * cost a one-shot command can afford. Most of an `mq ack` is start-up:
 * libmariadb's initialisation starts OpenSSL in full (every error text,
 * every legacy cipher and digest name: ~0.35 ms) even for a Unix socket,
 * and looks the "mysql" service up in the services database (~0.1 ms,
 * more where nsswitch.conf names a missing "db" module: ~40 failed
 * opens, the loader searching every library directory for it).
 *
 * mq starts OpenSSL first itself, without those tables and without
 * its configuration (openssl.cnf: the system's TLS policy; read and
 * parsed, about 0.15 ms more a command here), unless TLS is asked for,
 * on the command line or in an option file the library will read.
 * OpenSSL's init steps run once, so the library's own call then finds
 * them done. Should TLS be used after all (a setting this reading
 * missed), the connection is refused once made (mq__tls_unpoliced:
 * the system's policy was not applied to it), with status 78: it
 * fails, it is never weaker. OpenSSL is not torn down at exit either:
 * the process is ending.
 *
 * Linked in (static-client), that OpenSSL is mq's own. Linked
 * dynamically, it is the one the shared libmariadb loaded, found by
 * name in the process (dlsym): none if that library uses another TLS
 * library, and only from the Connector/C these headers are of, before
 * 3.4, whatever the headers said (a newer one under the same soname
 * turns TLS on by itself: see internal.h).
 *
 * The service lookup: mq defines getservbyname() below, which the
 * library's call reaches either way (a program's own symbols come
 * before a shared library's), and does not look "mysql" up: the
 * default port is MYSQL_TCP_PORT or 3306, as the library takes it
 * after the lookup (mq(1), --port).
 */
/* getservbyname_r, a GNU and BSD extension */
#define _DEFAULT_SOURCE 1
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#if defined(MARIADB_PACKAGE_VERSION_ID)
/* The client library's one call (its start): "mysql" is not looked up
 * (the top of this file says why); any other name is, as libc would. */
struct servent *
getservbyname(const char *name, const char *proto)
{
	static struct servent ent;
	static char buf[4096];
	struct servent *found = NULL;

	if (name == NULL || strcmp(name, "mysql") == 0)
		return NULL;
	if (getservbyname_r(name, proto, &ent, buf, sizeof buf, &found) != 0)
		return NULL;
	return found;
}
#endif

/* (Connector/C 3.4 turns TLS on by itself for TCP: there, nothing may
 * start OpenSSL short of what the library expects; internal.h) */
#if defined(MQ_LIGHT_CLIENT_INIT)
#include <openssl/ssl.h>
#if !defined(MQ_STATIC_CLIENT)
#include <dlfcn.h>
#endif

/* the groups the library reads (ma_default.c), mq's own last */
static const char *const groups[] = {
	"client", "client-server", "client-mariadb", "mq",
};

static int file_asks_tls(const char *path, unsigned depth);

static int
reading_group(const char *line)
{
	const char *end = strchr(line, ']');
	size_t i, n;

	if (end == NULL)
		return 0;
	for (n = (size_t)(end - line); n && isspace((unsigned char)line[n - 1]);)
		n--;
	for (i = 0; i < sizeof groups / sizeof groups[0]; i++)
		if (strlen(groups[i]) == n && strncmp(line, groups[i], n) == 0)
			return 1;
	return 0;
}

/* A key that names TLS: any with "ssl" or "tls" in it (ssl-ca, loose_ssl,
 * tls-version...). Broader than the library's list on purpose: a false
 * alarm costs a full OpenSSL start, nothing else. */
static int
tls_key(const char *p)
{
	char key[64];
	size_t n = 0;

	while (*p && *p != '=' && !isspace((unsigned char)*p) &&
	    n + 1 < sizeof key)
		key[n++] = (char)tolower((unsigned char)*p++);
	key[n] = '\0';
	return strstr(key, "ssl") != NULL || strstr(key, "tls") != NULL;
}

/* The most of an option file read for the question (lib/conn.c
 * refuses a larger one). */
#define OPTION_FILE_MAX (1L << 20)

/* path opened for reading if it is a regular file: a pipe nobody writes
 * to, or a device without end (/dev/zero), named by an !include or
 * found in an !includedir, would hold the scan for ever. NULL if not. */
static FILE *
open_regular(const char *path)
{
	struct stat st;
	FILE *f;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return NULL;
	}
	return f;
}

static int
dir_asks_tls(const char *dir, unsigned depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	size_t n;
	int asks = 0;

	if (d == NULL)
		return 0;
	while (!asks && (e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		if (n > 4 && strcmp(e->d_name + n - 4, ".cnf") == 0 &&
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
		    (int)sizeof path)
			asks = file_asks_tls(path, depth + 1);
	}
	closedir(d);
	return asks;
}

static int
file_asks_tls(const char *path, unsigned depth)
{
	FILE *f;
	char line[4096], *p, *arg;
	int reading = 0, asks = 0;
	unsigned lines = 0;

	if (depth > 16 || (f = open_regular(path)) == NULL)
		return 0;
	/* the bound checked every 64 lines (ftell is a system call: one
	 * a line was most of the system calls of a short command) */
	while (!asks && ((++lines & 63) != 0 || ftell(f) < OPTION_FILE_MAX) &&
	    fgets(line, sizeof line, f) != NULL) {
		for (p = line; isspace((unsigned char)*p); p++)
			;
		p[strcspn(p, "\r\n")] = '\0';
		if (*p == '!') {
			if ((arg = strchr(p, ' ')) == NULL)
				continue;
			*arg++ = '\0';
			while (isspace((unsigned char)*arg))
				arg++;
			for (char *e = arg + strlen(arg);
			    e > arg && isspace((unsigned char)e[-1]);)
				*--e = '\0';
			if (strcmp(p, "!include") == 0)
				asks = file_asks_tls(arg, depth + 1);
			else if (strcmp(p, "!includedir") == 0)
				asks = dir_asks_tls(arg, depth);
		} else if (*p == '[') {
			reading = reading_group(p + 1);
		} else if (reading && *p != '#' && *p != ';' && *p) {
			asks = tls_key(p);
		}
	}
	fclose(f);
	return asks;
}

/* The files the library reads, in its order (ma_default.c). */
static int
option_files_ask_tls(const char *defaults_file)
{
	const char *home = getenv("MARIADB_HOME");
	char path[4096];

	if (defaults_file)
		return file_asks_tls(defaults_file, 0);
	if (file_asks_tls("/etc/my.cnf", 0) ||
	    file_asks_tls("/etc/mysql/my.cnf", 0))
		return 1;
	if (home == NULL)
		home = getenv("MYSQL_HOME");
	if (home && snprintf(path, sizeof path, "%s/my.cnf", home) <
	    (int)sizeof path && file_asks_tls(path, 0))
		return 1;
	home = getenv("HOME");
	return home && snprintf(path, sizeof path, "%s/.my.cnf", home) <
	    (int)sizeof path && file_asks_tls(path, 0);
}

int
mq__tls_asked(const struct mq_connopts *o)
{
	return o->ssl_ca || o->ssl_capath || o->ssl_cert || o->ssl_key ||
	    o->ssl_cipher || o->ssl_verify_server_cert ||
	    option_files_ask_tls(o->defaults_file);
}

typedef int init_ssl_fn(uint64_t, const OPENSSL_INIT_SETTINGS *);

/* The OpenSSL start the client library will call; NULL if there is none
 * to start lighter (the top of this file). */
static init_ssl_fn *
library_init_ssl(void)
{
#if defined(MQ_STATIC_CLIENT)
	return OPENSSL_init_ssl;
#else
	/* Connector/C's own version (3.3.20: 30320; before 3.1.10 the
	 * server's, 10xxxx, so left alone) */
	unsigned long version = mysql_get_client_version();
	init_ssl_fn *f = NULL;
	void *self, *sym;

	if (version < 30000 || version >= 30400 ||
	    (self = dlopen(NULL, RTLD_LAZY)) == NULL)
		return NULL;
	/* (a function's address through an object pointer: POSIX's way) */
	if ((sym = dlsym(self, "OPENSSL_init_ssl")) != NULL)
		memcpy(&f, &sym, sizeof f);
	dlclose(self);
	return f;
#endif
}

/* OpenSSL was started without its configuration (the light start) */
static int unconfigured;

void
mq__client_init(const struct mq_connopts *o)
{
	static int done;
	init_ssl_fn *init_ssl;

	if (done)
		return;
	done = 1;
	if ((init_ssl = library_init_ssl()) != NULL && !mq__tls_asked(o) &&
	    init_ssl(OPENSSL_INIT_NO_LOAD_SSL_STRINGS |
	    OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
	    OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
	    OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
	    OPENSSL_INIT_NO_LOAD_CONFIG |
	    OPENSSL_INIT_NO_ATEXIT, NULL) == 1)
		unconfigured = 1;
	mysql_library_init(0, NULL, NULL);
}

int
mq__tls_unpoliced(MYSQL *db)
{
	return unconfigured && mysql_get_ssl_cipher(db) != NULL;
}

#else

int
mq__tls_asked(const struct mq_connopts *o)
{
	(void)o;
	return 1;
}

void
mq__client_init(const struct mq_connopts *o)
{
	(void)o;
}

int
mq__tls_unpoliced(MYSQL *db)
{
	(void)db;
	return 0;
}

#endif
