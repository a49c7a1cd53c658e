/*
 * test-tls-asked.c: which option files ask for TLS (lib/client_init.c).
 * A miss would start OpenSSL without its error texts for a connection
 * that uses TLS; a false alarm only costs start-up time. Option files
 * are written to a temporary directory; TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int n, failed;
static char dir[64] = "/tmp/mq-tls-asked.XXXXXX";

static void
ok(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

/* Writes text to dir/name; returns the path (static storage). */
static const char *
put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	return path;
}

/* Whether the option file holding text asks for TLS. */
static int
file_asks(const char *text)
{
	struct mq_connopts o;

	memset(&o, 0, sizeof o);
	o.defaults_file = put("my.cnf", text);
	return mq__tls_asked(&o);
}

static void
asks(const char *text, const char *what)
{
	ok(file_asks(text) == 1, what);
}

static void
does_not_ask(const char *text, const char *what)
{
	ok(file_asks(text) == 0, what);
}

int
main(void)
{
	struct mq_connopts o;
	char path[256];

#if !defined(MQ_LIGHT_CLIENT_INIT)
	printf("1..0 # SKIP OpenSSL starts in full in this build\n");
	return 0;
#endif
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	snprintf(path, sizeof path, "%s/conf.d", dir);
	mkdir(path, 0700);

	does_not_ask("[client]\npassword = x\nsocket = /tmp/s\n",
	    "no TLS setting");
	asks("[client]\nssl-ca = /etc/ca.pem\n", "ssl-ca in [client]");
	asks("[mq]\nssl-verify-server-cert\n", "a flag in [mq]");
	asks("[client-server]\nssl_cert = c.pem\n", "underscores");
	asks("[client-mariadb]\nloose-tls-version = TLSv1.3\n",
	    "loose-tls-version in [client-mariadb]");
	asks("[CLIENT]\nbad\n[client]\nSSL = 1\n", "upper case key");
	asks("  [client ]  \n\tssl=1\r\n", "spaces, tabs, CRLF");
	does_not_ask("[mysqld]\nssl-ca = /etc/ca.pem\n[mariadb]\nssl\n",
	    "server groups are not read");
	does_not_ask("[client]\n# ssl-ca = x\n; ssl\n", "comments");
	does_not_ask("[client]\npassword = ssl\n", "a value that says ssl");
	asks("[mysqld]\nssl\n[client]\nuser = u\n[mq]\nssl-key = k\n",
	    "back in a read group after another");

	put("inc.cnf", "[client]\nssl-capath = /etc/ssl/certs\n");
	snprintf(path, sizeof path, "[client]\nuser = u\n!include %s/inc.cnf\n",
	    dir);
	asks(path, "!include");
	put("conf.d/a.cnf", "[client]\nuser = u\n");
	put("conf.d/b.txt", "[client]\nssl = 1\n");
	snprintf(path, sizeof path, "!includedir %s/conf.d\n", dir);
	does_not_ask(path, "!includedir reads only *.cnf");
	put("conf.d/c.cnf", "[mq]\nssl-cipher = ECDHE\n");
	asks(path, "!includedir");
	snprintf(path, sizeof path, "!include %s/my.cnf\n[client]\n", dir);
	does_not_ask(path, "a file that includes itself ends");
	does_not_ask("", "an empty file");
	memset(&o, 0, sizeof o);
	o.defaults_file = "/nonexistent/my.cnf";
	ok(mq__tls_asked(&o) == 0, "a missing file");

	/* the caller's own settings */
	memset(&o, 0, sizeof o);
	o.defaults_file = put("my.cnf", "[client]\n");
	o.ssl_cipher = "ECDHE";
	ok(mq__tls_asked(&o) == 1, "--ssl-cipher");
	o.ssl_cipher = NULL;
	o.ssl_verify_server_cert = 1;
	ok(mq__tls_asked(&o) == 1, "--ssl-verify-server-cert");

	/* without --defaults-file: ~/.my.cnf and $MARIADB_HOME/my.cnf too */
	memset(&o, 0, sizeof o);
	put(".my.cnf", "[client]\nssl-ca = x\n");
	setenv("HOME", dir, 1);
	ok(mq__tls_asked(&o) == 1, "~/.my.cnf");
	put(".my.cnf", "[client]\n");
	snprintf(path, sizeof path, "%s/conf.d", dir);
	put("conf.d/my.cnf", "[client]\nssl-ca = x\n");
	setenv("MARIADB_HOME", path, 1);
	ok(mq__tls_asked(&o) == 1, "$MARIADB_HOME/my.cnf");
	unsetenv("MARIADB_HOME");
	setenv("MYSQL_HOME", path, 1);
	ok(mq__tls_asked(&o) == 1, "$MYSQL_HOME/my.cnf");

	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		printf("# cannot remove %s\n", dir);
	printf("1..%d\n", n);
	return failed != 0;
}
