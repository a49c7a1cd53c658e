/*
 * shared_opts.c: the options every command takes (the connection,
 * --table, --queue, -h), in one table the parser, the help and the
 * completions read.
 */
#include <stddef.h>

#include "cli/cli.h"

const struct opt shared_opts[] = {
	{ OPT_TABLE, "table", 0, "T", "job table (default mq_jobs; MQ_TABLE)",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_DEFAULTS_FILE, "defaults-file", 0, "F",
	    "read only this MySQL option file", COMPLETE_FILE, NULL,
	    "[CONNECTION-OPTIONS]", 0, 0 },
	{ OPT_HOST, "host", 0, "H", "server host (see mq(1))",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_HOST_ORDER, "host-order", 0, "first|random",
	    "a list of hosts: tried in order, or from a random one",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_PORT, "port", 0, "N", "server TCP port", COMPLETE_NONE, NULL,
	    "", 0, 0 },
	{ OPT_SOCKET, "socket", 0, "S", "server Unix socket", COMPLETE_FILE,
	    NULL, "", 0, 0 },
	{ OPT_USER, "user", 0, "U", "user to log in as", COMPLETE_NONE, NULL,
	    "", 0, 0 },
	{ OPT_DATABASE, "database", 0, "DB", "database holding the table",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_SSL_CA, "ssl-ca", 0, "F", "TLS: CA certificates (PEM file)",
	    COMPLETE_FILE, NULL, "", 0, 0 },
	{ OPT_SSL_CAPATH, "ssl-capath", 0, "D",
	    "TLS: directory of CA certificates", COMPLETE_DIR, NULL, "", 0,
	    0 },
	{ OPT_SSL_CERT, "ssl-cert", 0, "F", "TLS: client certificate",
	    COMPLETE_FILE, NULL, "", 0, 0 },
	{ OPT_SSL_KEY, "ssl-key", 0, "F", "TLS: client key", COMPLETE_FILE,
	    NULL, "", 0, 0 },
	{ OPT_SSL_CIPHER, "ssl-cipher", 0, "L", "TLS: ciphers to offer",
	    COMPLETE_NONE, NULL, "", 0, 0 },
	{ OPT_SSL_VERIFY_SERVER_CERT, "ssl-verify-server-cert", 0, NULL,
	    "TLS required, the server's name checked", COMPLETE_NONE, NULL,
	    "", 0, 0 },
	{ 'h', "help", 'h', NULL, "show this help", COMPLETE_NONE, NULL, "",
	    0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

int
option_tables(const struct command *cmd, const struct opt *tables[2])
{
	tables[0] = cmd->opts;
	tables[1] = cmd->flags & CMD_NO_SHARED ? NULL : shared_opts;
	return tables[1] ? 2 : 1;
}
