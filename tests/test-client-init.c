/*
 * test-client-init.c: the client library's start (lib/client_init.c),
 * in the build it is: linked in or dynamically. Without TLS asked for,
 * OpenSSL starts without its legacy name tables (no "SHA256" among the
 * digest names); asked for, in full; the "mysql" service is not looked
 * up, other services are. Each start runs in a child of its own (the
 * start runs once a process). No server needed; TAP on stdout.
 */
/* getservbyname_r, a GNU and BSD extension */
#define _DEFAULT_SOURCE 1
#include <dlfcn.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static int n, failed;
static char dir[64] = "/tmp/mq-client-init.XXXXXX";

static void
ok(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

/* OpenSSL's legacy digest table has name (OBJ_NAME_get), looked up in
 * the OpenSSL the client library loaded: -1 if there is none. */
static int
digest_named(const char *name)
{
	const char *(*get)(const char *, int);
	void *self = dlopen(NULL, RTLD_LAZY), *sym;
	int has;

	if (self == NULL || (sym = dlsym(self, "OBJ_NAME_get")) == NULL) {
#if defined(MQ_STATIC_CLIENT)
		/* linked in, its symbols are not in the dynamic table */
		extern const char *OBJ_NAME_get(const char *, int);
		get = OBJ_NAME_get;
		sym = NULL;
#else
		return -1;
#endif
	} else {
		memcpy(&get, &sym, sizeof get);
	}
	has = get(name, 1 /* OBJ_NAME_TYPE_MD_METH */) != NULL;
	if (self)
		dlclose(self);
	return has;
}

/* Starts the client with an option file holding text, in a child: its
 * exit status 0 (a light start), 1 (in full), 3 (no OpenSSL in the
 * client library). */
static int
start(const char *text)
{
	char path[256];
	FILE *f;
	pid_t pid;
	int status, has;

	snprintf(path, sizeof path, "%s/my.cnf", dir);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct mq_connopts o;
		const char *lib = NULL;

		memset(&o, 0, sizeof o);
		o.defaults_file = path;
		mq__client_init(&o);
		mysql_library_init(0, NULL, NULL);
#if defined(MARIADB_PACKAGE_VERSION_ID)
		if (mariadb_get_infov(NULL, MARIADB_TLS_LIBRARY, &lib) != 0)
			lib = NULL;
#endif
		if (lib == NULL || strncmp(lib, "OpenSSL", 7) != 0 ||
		    (has = digest_named("SHA256")) < 0)
			_exit(3);
		_exit(has);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		printf("Bail out! the child did not end\n");
		exit(1);
	}
	return WEXITSTATUS(status);
}

int
main(void)
{
	struct servent ent, *found = NULL, *ours;
	char buf[4096], cmd[128];
	int light;

	printf("1..4\n");
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}

	/* a light start is owed by Connector/C 3.0-3.3 with OpenSSL, where
	 * the build had OpenSSL's headers */
	light = start("[client]\nuser = u\n");
#if defined(MQ_CLIENT_OPENSSL) && defined(MARIADB_PACKAGE_VERSION_ID)
	if (light == 3 || mysql_get_client_version() < 30000 ||
	    mysql_get_client_version() >= 30400) {
		ok(1, "# SKIP the client library starts TLS by itself or without OpenSSL");
		ok(1, "# SKIP the client library starts TLS by itself or without OpenSSL");
	} else {
		ok(light == 0, "nothing asks for TLS: OpenSSL starts without its legacy names");
		ok(start("[client]\nssl-ca = /nonexistent/ca.pem\n") == 1,
		    "an option file asks for TLS: OpenSSL starts in full");
	}
#else
	(void)light;
	ok(1, "# SKIP built without OpenSSL's headers: OpenSSL starts in full");
	ok(1, "# SKIP built without OpenSSL's headers: OpenSSL starts in full");
#endif

#if defined(MARIADB_PACKAGE_VERSION_ID)
	ok(getservbyname("mysql", "tcp") == NULL,
	    "the services database is not asked for mysql");
	ours = getservbyname("ssh", "tcp");
	if (getservbyname_r("ssh", "tcp", &ent, buf, sizeof buf, &found) != 0)
		found = NULL;
	ok((ours == NULL) == (found == NULL) &&
	    (ours == NULL || ours->s_port == found->s_port),
	    "another service is looked up as libc would");
#else
	(void)ent; (void)found; (void)ours; (void)buf;
	ok(1, "# SKIP not MariaDB Connector/C: the library looks mysql up");
	ok(1, "# SKIP not MariaDB Connector/C: the library looks mysql up");
#endif

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return failed != 0;
}
